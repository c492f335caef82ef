# Tokenway: `make run` starts everything with demo data, `make test` runs the suite.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements/dev.lock | sha256sum | cut -c1-16)
export PYTHONPATH := $(CURDIR):$(CURDIR)/platform
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run test test-cluster lint typecheck bench install lock clean-data manage

$(STAMP): requirements/dev.lock
	@test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check --require-hashes -r requirements/dev.lock
	@touch $(STAMP)

STATIC_SOURCES := $(shell find frontend/static -type f -not -path '*/vendor/*' 2>/dev/null) frontend/package-lock.json

install: $(STAMP) staticfiles/staticfiles.json

frontend/static/vendor/chart.umd.js.map: frontend/package-lock.json
	@cd frontend && npm ci --no-audit --no-fund --loglevel=error

# Hashed, compressed copies of every asset and their manifest, as a production deployment serves them.
staticfiles/staticfiles.json: $(STAMP) frontend/static/vendor/chart.umd.js.map $(STATIC_SOURCES)
	@$(PY) manage.py collectstatic --noinput -v 0

# PORT, SIM_PORT, TOKENWAY_DATA_DIR (default .data), STRIPE_PORT, STRIPE_METER_PORT from the environment
# or the command line (`make run PORT=8001`). Ctrl-C / SIGTERM stops every process in order.
run: install
	@$(PY) -m devtools.devstack run -- $(PY) -m devtools.runall

# A management command against the running stack: make manage ARGS="create_api_key --tenant demo --name ci"
manage: install
	@$(PY) manage.py $(ARGS)

# Branch coverage of the source packages with the floor in pyproject ([tool.coverage.report] fail_under).
# The floor is measured on the whole suite: a run of part of it (.ci/run's second pass) sets COVERAGE= to skip it.
COVERAGE ?= --cov --cov-report=term
test: install
	@$(PY) -m devtools.devstack test -- $(PY) -m pytest $(COVERAGE) --durations=25 $(PYTEST_ARGS)

# The gateway and metering suites against a throw-away 3-master Redis Cluster (REDIS_URL, with Celery and
# Channels on a plain Redis of their own) and three usage shards; tests marked single_redis need one server.
CLUSTER_TESTS ?= tests/routing tests/metering
test-cluster: install
	@TOKENWAY_TEST_REDIS_CLUSTER=1 TOKENWAY_USAGE_SHARDS=3 $(PY) -m devtools.devstack test -- $(PY) -m pytest \
		-m 'not slow and not browser and not deployed and not single_redis' $(PYTEST_ARGS) $(CLUSTER_TESTS)

lint: install
	@$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	@$(VENV)/bin/lint-imports --no-cache > /dev/null || $(VENV)/bin/lint-imports --no-cache
	@$(PY) manage.py makemigrations --check --dry-run > /dev/null 2>&1 || $(PY) manage.py makemigrations --check --dry-run

typecheck: install
	@$(VENV)/bin/mypy .

bench: install
	@$(PY) -m devtools.devstack test -- $(PY) -m bench.run_all

lock:
	@$(VENV)/bin/uv pip compile -q --generate-hashes --python-version 3.11 requirements/base.in -o requirements/base.lock
	@$(VENV)/bin/uv pip compile -q --generate-hashes --python-version 3.11 requirements/dev.in -o requirements/dev.lock

clean-data:
	rm -rf .data
