# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TRANSCRIPT ?=

.PHONY: test test-all demo lint typecheck bench clean bytecode

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Byte-compile the package (only what changed since). Where
# PYTHONDONTWRITEBYTECODE is set, an editable install would recompile every changed module
# in every process. Timestamp pycs, Python's default: checked-hash ones would hash each
# source on import, and make only compiles after the sources were written.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q src/wardian

# `make test`: the fast loop (tests marked `slow` deselected); `make test-all`: everything
# (what CI runs). `pytest -m slow` runs only the slow ones.
test: bytecode
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto -q -m "not slow"

test-all: bytecode
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto -q

lint: bytecode
	$(BIN)/ruff check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

demo: bytecode
	$(BIN)/python -m wardian.demo $(if $(TRANSCRIPT),--transcript "$(TRANSCRIPT)",)

bench: bytecode
	for b in bench/*_bench.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
