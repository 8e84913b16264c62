# The two commands of the README. Both set up .venv themselves on a fresh machine, and no step
# is silent for long: scripts/heartbeat names each step, prints a line whenever the step has
# printed nothing for 10 s, and how long it took.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_ARGS ?=
PIP := $(BIN)/python -m pip --disable-pip-version-check
STEP := $(PYTHON) scripts/heartbeat
PYTEST_WORKERS ?= auto

.PHONY: test demo lint typecheck unit docs install-check bench clean

$(BIN)/python:
	@$(STEP) "creating the virtual environment $(VENV)" $(PYTHON) -m venv $(VENV)
	@$(STEP) "upgrading pip in $(VENV)" $(PIP) install --quiet --upgrade pip

# Everything `make test` needs: the library (editable), its extras' SDKs and the development tools.
# uv (itself a development tool) installs them several times faster than pip; pip is the fallback.
$(STAMP): $(BIN)/python pyproject.toml
	@$(STEP) "installing uv into $(VENV)" $(PIP) install --quiet 'uv>=0.4'
	@$(STEP) "installing contextchef with its development tools (pytest, mypy, ruff, SDKs)" sh -c \
		"$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]' \
		|| $(PIP) install --quiet -e '.[dev]'"
	@touch $(STAMP)

# The demo needs only the library and its runtime dependencies: an editable install, which also
# puts the `contextchef` command in $(BIN). A development install will do as well.
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then \
		echo "==> $(VENV) already holds the development install; using it"; \
	else \
		$(STEP) "installing contextchef with its runtime dependencies only" \
			$(PIP) install --quiet -e . || exit 1; \
	fi
	@touch $(DEMO_STAMP)

lint: $(STAMP)
	@$(STEP) "ruff check and ruff format --check" sh -c \
		'$(BIN)/ruff check src tests benchmarks examples scripts/heartbeat scripts/alongside \
			scripts/*.py \
		&& $(BIN)/ruff format --check src tests benchmarks examples scripts/heartbeat \
			scripts/alongside scripts/*.py'

# mypy keeps its cache in $(VENV) (see pyproject.toml), so a second run takes seconds.
typecheck: $(STAMP)
	@$(STEP) "mypy --strict on src/contextchef (~30 s without its cache)" $(BIN)/mypy

# The suite starts ~200 Python processes (workers, subprocess tests). Where the environment sets
# PYTHONDONTWRITEBYTECODE, each would compile every module it imports again: compile src/ and
# tests/ once first (compileall skips what is up to date).
unit: $(STAMP)
	@$(STEP) "compiling src/ and tests/ to bytecode once" $(BIN)/python -m compileall -q -j 0 src tests
	@$(STEP) "pytest, the whole suite on $(PYTEST_WORKERS) workers" \
		$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS)

# The documentation site, strict (a warning is an error), offline, into site/. The API reference
# is read from the docstrings, the CLI reference from the typer app (scripts/mkdocs_hooks.py);
# the pages' code blocks run in the unit step (tests/test_docs_examples.py). No --quiet: it
# hides the warnings from --strict's count, and the build would pass with them.
docs: $(STAMP)
	@$(STEP) "mkdocs build --strict: the documentation site into site/" \
		env NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Build the sdist and the wheel, install the wheel as a user would (runtime dependencies only,
# then each extra alone) and run it there: see tests/install/gate.py.
install-check: $(STAMP)
	@$(STEP) "the user-install gate" $(BIN)/python -m tests.install.gate

# mypy, the docs build and the user-install gate run beside the suite (scripts/alongside): the
# suite leaves CPU idle while it waits on PostgreSQL, subprocesses and locks.
# `make typecheck unit docs install-check` runs the same steps one after another.
test: lint
	@$(PYTHON) scripts/alongside \
		"mypy --strict on src/contextchef" "$(BIN)/mypy" \
		"the documentation site (mkdocs build --strict)" "$(MAKE) --no-print-directory docs" \
		"the user-install gate" "$(BIN)/python -m tests.install.gate" \
		-- $(MAKE) --no-print-directory unit

# DEMO_ARGS passes options on, e.g. make demo DEMO_ARGS="--store :memory: --report window.html"
demo: $(DEMO_STAMP)
	@echo "==> $(BIN)/contextchef demo $(DEMO_ARGS)"
	@$(BIN)/contextchef demo $(DEMO_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/compile.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
