# The two quick-start commands: `make serve` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# The port of the demo engine `make serve` starts beside the gateway.
ENGINE_PORT ?= 8100
SERVER ?= uvicorn
WORKERS ?= 1
# Test processes (pytest-xdist). The tests mostly wait on loopback servers, engines and Chromium
# rather than compute, so more workers than cores still shortens the run.
TEST_WORKERS ?= 4

.PHONY: serve test test-postgres lint bench fuzz chaos venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Set up, migrate SQLite, create the first administrator once, then serve the gateway and UI
# with the simulated engine as a demo backend on ENGINE_PORT. SERVER=daphne serves with daphne instead;
# WORKERS=2 (with AIPLANE_REDIS_URL set) runs two gateway processes sharing admission on Redis.
serve: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_admin
	$(PY) manage.py serve --host $(HOST) --port $(PORT) --server $(SERVER) --workers $(WORKERS) --demo --sim-port $(ENGINE_PORT)

# Lint and types, then every test: unit, integration on loopback, browser (Chromium), and, when
# AIPLANE_TEST_DATABASE_URL names a PostgreSQL database, the database tests again on it.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal
	@if [ -n "$$AIPLANE_TEST_DATABASE_URL" ]; then $(MAKE) --no-print-directory test-postgres; fi

# The PostgreSQL pass runs only the tests that touch the database (tests/conftest.py), and of those
# not the ones marked database_neutral, which use it only to set up and which the SQLite pass runs:
# tests/gateway/dataplane/test_connection_bounds.py, test_v1_engine_faults.py,
# test_v1_waiting.py and test_v1_priority.py.
test-postgres: $(STAMP)
	DATABASE_URL=$$AIPLANE_TEST_DATABASE_URL AIPLANE_DATABASE_TESTS_ONLY=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not browser" tests/accounts tests/gateway

# ruff (with complexity held at 12), mypy, and import-linter's layer rules (pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The long forms of the property-based fuzzers of /api/v0 and /v1 (`make test` runs the short ones).
fuzz: $(STAMP)
	AIPLANE_FUZZ=long $(PY) -m pytest -o timeout=3600 tests/accounts/test_fuzz_api.py tests/gateway/dataplane/test_v1_fuzz.py

# The long chaos run (bench/chaos.py: a few minutes, thousands of seeded faulty requests against
# the real app and three replicas; `make test` runs a short one), e.g.
# `make chaos CHAOS_ARGS="--seed 7 --duration 300 --concurrency 48"`, then the long forms of the
# admission state machine and of the fuzzers (their own bounds, not make test's two minutes).
CHAOS_ARGS ?=
chaos: $(STAMP)
	$(PY) bench/chaos.py $(CHAOS_ARGS)
	HYPOTHESIS_PROFILE=chaos $(PY) -m pytest -o timeout=3600 tests/gateway/admission/test_queue_machine.py
	$(MAKE) fuzz

bench: $(STAMP)
	$(PY) bench/overhead.py --observability both

clean:
	rm -rf $(VENV) *.egg-info var
