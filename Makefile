# Quick start on a fresh machine: `make audit` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: venv test lint audit clean

venv: $(STAMP)

# Idempotent: re-runs only when pyproject.toml changes (or the venv is missing).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check normtest theorems checks tests conftest.py
	$(BIN)/mypy normtest

test: lint
	$(BIN)/python -m pytest

audit: $(STAMP)
	$(BIN)/normtest demo --out reports

clean:
	rm -rf $(VENV) reports figures .pytest_cache .mypy_cache .ruff_cache .hypothesis
