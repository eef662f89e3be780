# Two commands for a fresh clone (only Python >= 3.11 and make needed):
#   make demo   installs the package and writes a before/after report of the bundled examples
#   make test   installs the test dependencies and runs the whole test suite
#   make docs   builds the documentation site (guides and API reference) into site/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint typecheck bench data docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,dev]"
	touch $@ $(VENV)/.base

$(VENV)/.demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[stats,plots]"
	touch $@ $(VENV)/.base

# the main job: seed numbers, the runs table, then the example set's queries through two
# live systems (FTS5 BM25 before, reranked after), pooled, and reported with latency
# -> report/index.html
demo: $(VENV)/.demo
	$(BIN)/python -m searcheval_frames.demo

test: $(VENV)/.test
	$(BIN)/python -m pytest -n 2 --dist loadfile

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(VENV)/.test
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/make_data.py
	$(BIN)/python benchmarks/run_bench.py

data: $(VENV)/.test
	$(BIN)/python data/make_example_set.py

# the documentation site (guides + API reference) into site/; --strict: a broken link or
# reference fails the build
$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[docs]"
	touch $@ $(VENV)/.base

docs: $(VENV)/.docs
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
