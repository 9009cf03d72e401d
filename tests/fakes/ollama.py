"""A loopback Ollama for the probe: its OpenAI model list and its own API (GET /api/version,
GET /api/tags, POST /api/show), in the shapes Ollama answers them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOllama:
    """Serves `models`: name -> (the context the model was trained for, num_ctx or None)."""

    def __init__(self, models: dict[str, tuple[int, int | None]]) -> None:
        self.models = models
        self.shown: list[dict[str, Any]] = []  # the bodies POST /api/show was sent
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _json(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                names = list(fake.models)
                if self.path == "/api/version":
                    self._json(200, {"version": "0.6.8"})
                elif self.path == "/api/tags":
                    self._json(200, {"models": [{"name": n, "model": n} for n in names]})
                elif self.path == "/v1/models":
                    data = [{"id": n, "object": "model", "owned_by": "library"} for n in names]
                    self._json(200, {"object": "list", "data": data})
                else:
                    self._json(404, {"error": "404 page not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.shown.append(body)
                if self.path != "/api/show" or body.get("model") not in fake.models:
                    self._json(404, {"error": f"model '{body.get('model')}' not found"})
                    return
                trained, num_ctx = fake.models[body["model"]]
                parameters = 'stop "<|eot_id|>"\ntemperature 0.6'
                if num_ctx is not None:
                    parameters += f"\nnum_ctx {num_ctx}"
                info = {"general.architecture": "llama", "llama.context_length": trained}
                self._json(200, {"parameters": parameters, "model_info": info})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
