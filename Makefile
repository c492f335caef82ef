# Tokenway: `make run` starts everything with demo data, `make test` runs the suite.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements/dev.lock | sha256sum | cut -c1-16)
export PYTHONPATH := $(CURDIR):$(CURDIR)/platform
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run test test-fast test-cluster test-local lint typecheck bench install lock clean-data manage

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

# The whole suite in parallel lanes (two, and the recovery suite beside them), each with its own throw-away servers (devtools/testlanes.py), with
# branch coverage combined over all and the floor in pyproject ([tool.coverage.report] fail_under); prints the
# slowest 25 tests. A part of the suite, `make test PYTEST_ARGS="tests/metering -k ledger"`, runs in one lane;
# the floor holds for the whole suite only, so a part skips it with COVERAGE= (COVERAGE=html: htmlcov/).
COVERAGE ?= term
LANES = $(if $(strip $(PYTEST_ARGS)),--one-lane)
test: install
	@$(PY) -m devtools.testlanes --coverage "$(COVERAGE)" --durations 25 $(LANES) -- $(PYTEST_ARGS)

# The edit loop: all but the slow tests, the tests of a real `make run` tree (as-deployed, chaos) and the browser, in
# lanes, no coverage, the schemathesis sweep of the management API cut to 4 examples per operation and mode.
test-fast: install
	@TOKENWAY_TEST_SCHEMATHESIS_EXAMPLES=4 $(PY) -m devtools.testlanes --coverage "" --durations 10 $(LANES) -- -m 'not slow and not deployed and not browser' $(PYTEST_ARGS)

# The test files that mark tests with $(1) (`pytest.mark.$(1)`): a second run collects only those, not the whole
# suite (15 s of CPU each). .ci/run checks that the selection finds every marked test (devtools/marked_files.py).
marked = $(shell $(PY) -m devtools.marked_files $(1))

# Tests marked `cluster` (they depend on where keys live) against a throw-away 3-master Redis Cluster (REDIS_URL,
# with Celery and Channels on a plain Redis of their own) and three usage shards; `single_redis` ones need one server.
test-cluster: install
	@TOKENWAY_TEST_REDIS_CLUSTER=1 TOKENWAY_USAGE_SHARDS=3 $(PY) -m devtools.devstack test -- $(PY) -m pytest \
		-m 'cluster and not single_redis' --durations=10 $(or $(PYTEST_ARGS),$(call marked,cluster))

# Tests marked `local_servers` (they depend on the servers' versions) against the machine's own PostgreSQL and
# Redis on their standard ports, with a smaller schemathesis sweep: the embedded servers' run sized it already.
LOCAL_DATABASE_URL ?= postgresql://postgres@127.0.0.1:5432/postgres
LOCAL_REDIS_URL ?= redis://127.0.0.1:6379/15
test-local: install
	@DATABASE_URL="$(LOCAL_DATABASE_URL)" REDIS_URL="$(LOCAL_REDIS_URL)" TOKENWAY_TEST_SCHEMATHESIS_EXAMPLES=4 \
		$(PY) -m devtools.devstack test -- $(PY) -m pytest -m local_servers --durations=10 \
		$(or $(PYTEST_ARGS),$(call marked,local_servers))

lint: install
	@$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	@$(VENV)/bin/lint-imports --no-cache > /dev/null || $(VENV)/bin/lint-imports --no-cache
	@$(PY) manage.py makemigrations --check --dry-run > /dev/null 2>&1 || $(PY) manage.py makemigrations --check --dry-run
	@$(PY) -m devtools.conventions > /dev/null

typecheck: install
	@$(VENV)/bin/mypy .

bench: install
	@$(PY) -m devtools.devstack test -- $(PY) -m bench.run_all

lock:
	@$(VENV)/bin/uv pip compile -q --generate-hashes --python-version 3.11 requirements/base.in -o requirements/base.lock
	@$(VENV)/bin/uv pip compile -q --generate-hashes --python-version 3.11 requirements/dev.in -o requirements/dev.lock

clean-data:
	rm -rf .data
