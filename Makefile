# FactLab developer commands. The README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
FRANK_DATA ?= $(if $(wildcard ../shared/data/frank/human_annotations.json),../shared/data/frank,data/frank-subset)
PYTEST_ARGS ?=

.PHONY: install install-dev browser demo serve test lint clean

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

# Command 1: install, migrate, import FRANK and the BUMP samples into demo campaigns, create demo users, serve the site.
demo: install
	DJANGO_DEBUG=1 $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=1 $(PY) manage.py setup_demo --frank-data $(FRANK_DATA)
	DJANGO_DEBUG=1 $(PY) manage.py setup_bump_demo
	@echo "FactLab runs on http://$(HOST):$(PORT)/  (admin: demo-admin / factlab-admin, annotator: demo-annotator / factlab-annotator, BUMP reviewer: demo-reviewer / factlab-reviewer)"
	DJANGO_DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT) --noreload

serve:
	DJANGO_DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# Command 2: install everything and run the whole suite (PostgreSQL and Redis when they answer on 127.0.0.1).
test: install-dev browser
	eval "$$(PYTHON=$(PY) scripts/services_env.sh)"; \
	echo "database: $${DATABASE_URL:-sqlite}  broker: $${REDIS_URL:-eager}"; \
	$(VENV)/bin/lint-imports && \
	$(PY) -m pytest $(PYTEST_ARGS)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles test-output
