"""Shared fixtures. The suite runs on PostgreSQL and Redis when `make test` finds them (see scripts/services_env.sh)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

# Processes the suite starts (Celery workers, manage.py) are not pytest, so settings would refuse to start
# without a key: they get the one this process uses (the same pseudonyms and signatures on both sides).
os.environ.setdefault("DJANGO_SECRET_KEY", settings.SECRET_KEY)
# No test reaches a model hub, in this process or one it starts: a model named by the API and not on disk fails at
# once (run alone, the schema fuzz otherwise waited twice 23 s for an unreachable hub).
os.environ["HF_HUB_OFFLINE"] = "1"

# Browser fixtures (one Playwright/Chromium for the whole session); a Redis per worker in parallel runs (-n);
# the whole FRANK benchmark imported once per run (frank_benchmark).
pytest_plugins = ["tests.browser", "tests.parallel_services", "tests.frank_template"]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
FRANK_DIR = SHARED_DATA / "frank"
SAMPLES_DIR = SHARED_DATA / "samples"
TEST_OUTPUT = REPO_ROOT / "test-output"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, tmp_path_factory):
    """pytest-django's test database, and a copy of it as freshly migrated, before any test writes to it: the
    start of the FRANK template (tests/frank_template.py)."""
    from tests.frank_template import seed

    seed(django_db_blocker, tmp_path_factory)


@pytest.fixture(autouse=True)
def _celery_eager_unless_real_worker(request):
    """Run Celery tasks in-process, except in tests that start a real worker (marker ``celery_worker``)."""
    from factlab.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = not request.node.get_closest_marker("celery_worker")
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty Django cache (its own Redis database, never the broker's): tests that reset
    sequences give their rows the ids earlier tests' rows had, and what those left in the cache under an id
    (stored reports, bonus evidence, queued-refit marks) must not be read as theirs."""
    from django.core.cache import cache

    from metrics_service.stored_figures import forget_sent_figures

    cache.clear()
    forget_sent_figures()  # what this process remembers having queued, as the cache did


@pytest.fixture
def frank_dir() -> Path:
    assert FRANK_DIR.is_dir(), f"shared FRANK data missing at {FRANK_DIR}"
    return FRANK_DIR


@pytest.fixture
def samples_dir() -> Path:
    assert SAMPLES_DIR.is_dir(), f"shared samples missing at {SAMPLES_DIR}"
    return SAMPLES_DIR


@pytest.fixture
def test_output_dir() -> Path:
    TEST_OUTPUT.mkdir(exist_ok=True)
    return TEST_OUTPUT


@pytest.fixture(autouse=True)
def _fast_password_hashing(request, settings):
    """Production's hasher is slow on purpose (PBKDF2, a million rounds: 0.25 s of CPU a password): the suite
    makes and checks passwords by the hundred, and that hashing took about a tenth of its CPU. So this process
    hashes new passwords with a fast hasher, and still checks production's hashes (of users that a process a test
    starts, such as ``manage.py createsuperuser``, created). Processes a test starts keep production's hashers
    only: a test whose users sign in to one of them, or that checks the production hasher itself, is marked
    ``production_password_hashing``."""
    if request.node.get_closest_marker("production_password_hashing") is None:
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]


@pytest.fixture(autouse=True)
def _no_page_preparation_after_import(settings):
    """Whole benchmarks are imported by many tests: their pages are prepared on demand (the first claim of a
    document) instead of by the after-import job; tests/integration/test_prepared_pages.py turns the job back on."""
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False


@pytest.fixture(autouse=True)
def _claims_sweep_abandoned_slots_every_time(settings):
    """Claims look for expired and unattended slots on every call, so tests that age an assignment see it
    freed by the next claim; tests/integration/test_guarantees_assignment.py checks the production throttle."""
    settings.FACTLAB_SLOT_SWEEP_SECONDS = 0


@pytest.fixture(autouse=True)
def _generous_rate_limits(settings):
    """Many logins and submits from 127.0.0.1 in one minute are normal in tests; tests/integration/test_security.py
    lowers these rates (``override_settings``) where it checks the limits themselves."""
    settings.FACTLAB_RATELIMIT_LOGIN = "100000/m"
    settings.FACTLAB_RATELIMIT_SUBMIT = "100000/m"
    settings.FACTLAB_RATELIMIT_CROWD_IDENTITY = "100000/m"
