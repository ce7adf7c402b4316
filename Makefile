# FactLab developer commands. The README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
FRANK_DATA ?= $(if $(wildcard ../shared/data/frank/human_annotations.json),../shared/data/frank,data/frank-subset)
PYTEST_ARGS ?=
# Worker processes for the second pass (pytest-xdist): each has its own test database and its own Redis
# (tests/parallel_services.py); 2 fits CI's 2 cores. TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2
# The fast lane: tests/unit (no database, broker, worker or browser) but its slow tests (a model to load, a
# subprocess, a whole corpus), and the docstring examples of the statistics and the unified error types.
FAST_LANE := tests/unit metrics_service/stats taxonomies
# The suite keeps compiled modules (and pytest's rewritten test modules) even where the environment asks Python not
# to write them (PYTHONDONTWRITEBYTECODE, set on some CI machines and in the Docker image): otherwise every pytest
# worker, and every gunicorn, Celery or manage.py process a test starts, compiles the project again.
KEEP_BYTECODE := unset PYTHONDONTWRITEBYTECODE;

.PHONY: install install-dev browser services demo serve test test-fast lint clean

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# Runtime dependencies; the constraints file keeps torch on the CPU build 2.13.0.
install: $(VENV)/bin/python
	$(PIP) install --quiet -r requirements.txt -c constraints.txt
	$(PY) scripts/install_wordnet.py

install-dev: install
	$(PIP) install --quiet -r requirements-dev.txt -c constraints.txt

# Debian's Chromium for the Playwright browser tests (never `playwright install`).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi; }

# Command 1: install, migrate, import FRANK into a demo campaign, create demo users, then serve the site with a
# Celery worker and beat on kombu's embedded filesystem broker (no Redis; see scripts/demo.sh). Page preparation
# and the BUMP demo continue in the background.
demo: install
	PY=$(PY) HOST=$(HOST) PORT=$(PORT) FRANK_DATA=$(FRANK_DATA) scripts/demo.sh

serve:
	DJANGO_DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# PostgreSQL and Redis on 127.0.0.1 for the suite: installed and started with apt-get when missing (root or
# sudo), else make test stops at once with one line naming what is missing (scripts/ensure_services.sh).
services:
	@PYTHON=$(PY) scripts/ensure_services.sh

# Command 2: install everything, make sure PostgreSQL and Redis answer, lint, run the fast lane, then every
# other test (tests/integration, tests/celery, tests/browser and the unit lane's slow tests) in one pass on
# TEST_WORKERS processes (worksteal: an idle worker takes queued tests from a busy one, so the minutes-long
# tests do not leave the other worker idle at the end): tests/unit's conftest marks its tests `unit`, so no
# test runs twice.
# PGPASSWORD: the password ensure_services.sh gives a cluster it installed (ignored where local access is trusted).
test: install-dev browser services
	$(KEEP_BYTECODE) eval "$$(PYTHON=$(PY) scripts/services_env.sh)"; \
	export PGPASSWORD=$${PGPASSWORD:-postgres}; \
	echo "database: $${DATABASE_URL}  broker: $${REDIS_URL}"; \
	$(VENV)/bin/ruff check . && \
	$(VENV)/bin/lint-imports && \
	$(MAKE) --no-print-directory test-fast && \
	$(PY) -m pytest tests -m "not unit or slow" -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# Seconds to a minute or two, with no services: needs only `make install-dev` once.
test-fast:
	$(KEEP_BYTECODE) $(PY) -m pytest $(FAST_LANE) -m "not slow" $(PYTEST_ARGS)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles test-output var
