# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TRANSCRIPT ?=

.PHONY: test test-all demo lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# Byte-compile now: where PYTHONDONTWRITEBYTECODE is set, an editable install would
	# otherwise recompile every module on every command.
	$(BIN)/python -m compileall -q src/wardian
	touch $(STAMP)

# `make test`: the fast loop (tests marked `slow` deselected); `make test-all`: everything
# (what CI runs). `pytest -m slow` runs only the slow ones.
test: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto -q -m "not slow"

test-all: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

demo: $(STAMP)
	$(BIN)/python -m wardian.demo $(if $(TRANSCRIPT),--transcript "$(TRANSCRIPT)",)

bench: $(STAMP)
	for b in bench/*_bench.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
