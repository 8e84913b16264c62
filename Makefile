# The two commands of the README. Both set up .venv themselves on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_ARGS ?=
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: test demo lint typecheck unit bench clean

$(BIN)/python:
	@echo "==> creating the virtual environment $(VENV) ($(PYTHON) -m venv)"
	$(PYTHON) -m venv $(VENV)

# Everything `make test` needs: the library, its SDK extras and the development tools.
$(STAMP): $(BIN)/python pyproject.toml
	@echo "==> installing contextchef with its development tools (pytest, mypy, ruff, SDKs)"
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo needs only the library's four runtime dependencies (read from pyproject.toml) and
# runs from src/, so nothing is built; a development install will do as well.
RUNTIME_DEPS = $(BIN)/python -c "import tomllib; \
	print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))"
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then \
		echo "==> $(VENV) already holds the development install; using it"; \
	else \
		deps="$$($(RUNTIME_DEPS))" || exit 1; \
		echo "==> installing what the demo needs: $$deps"; \
		$(PIP) install --quiet $$deps || exit 1; \
	fi
	@touch $(DEMO_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -q

test: lint typecheck unit

# DEMO_ARGS passes options on, e.g. make demo DEMO_ARGS="--store :memory: --report window.html"
demo: $(DEMO_STAMP)
	@echo "==> contextchef demo $(DEMO_ARGS)   (PYTHONPATH=src $(BIN)/python -m contextchef)"
	@PYTHONPATH=src $(BIN)/python -m contextchef demo $(DEMO_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/compile.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
