"""Safe deployment defaults: DEBUG only when asked for, no start without a real secret key, a separate
pseudonym key in production, gunicorn and the container in production mode, API tokens that expire and end
with a password change."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.exporters.pseudonyms import worker_pseudonym
from tests.conftest import REPO_ROOT
from tests.test_api_fixtures import *

SHOW = "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps({'debug': s.DEBUG, 'key': s.SECRET_KEY}))"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "FACTLAB_", "PYTEST_"))}
    env.update(DJANGO_SETTINGS_MODULE="factlab.settings", **extra)
    return env


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_process_without_a_secret_key_refuses_to_start_with_a_clear_message():
    proc = _python(SHOW, _env())
    assert proc.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in proc.stderr and "make demo" in proc.stderr


def test_manage_py_without_a_secret_key_prints_one_line_and_exits_1():
    proc = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("FactLab is not configured: DJANGO_SECRET_KEY must be set")


def test_debug_is_off_unless_asked_for_and_the_dev_key_only_comes_with_it():
    plain = _python(SHOW, _env(DJANGO_SECRET_KEY="k" * 60))
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout) == {"debug": False, "key": "k" * 60}
    demo = _python(SHOW, _env(DJANGO_DEBUG="1"))  # what `make demo` sets
    assert demo.returncode == 0, demo.stderr
    assert json.loads(demo.stdout)["debug"] is True


def test_production_needs_a_separate_pseudonym_key():
    base = dict(FACTLAB_PRODUCTION="1", DJANGO_SECRET_KEY="s" * 60, REDIS_URL="redis://127.0.0.1:6379/9")
    missing = _python(SHOW, _env(**base))
    assert missing.returncode != 0 and "FACTLAB_PSEUDONYM_KEY must be set" in missing.stderr
    same = _python(SHOW, _env(**base, FACTLAB_PSEUDONYM_KEY="s" * 60))
    assert same.returncode != 0 and "must differ from DJANGO_SECRET_KEY" in same.stderr
    public = _python(SHOW, _env(**{**base, "DJANGO_SECRET_KEY": "dev-insecure-factlab-key-do-not-use-in-production-0123456789abcdef"}, FACTLAB_PSEUDONYM_KEY="p" * 60))
    assert public.returncode != 0 and "public development key" in public.stderr
    ok = _python(SHOW, _env(**base, FACTLAB_PSEUDONYM_KEY="p" * 60))
    assert ok.returncode == 0, ok.stderr


def test_pseudonyms_depend_on_the_pseudonym_key_not_on_the_secret_key(settings):
    before = worker_pseudonym(1, 2)
    settings.SECRET_KEY = "rotated-" + "x" * 50
    assert worker_pseudonym(1, 2) == before
    settings.FACTLAB_PSEUDONYM_KEY = "another-pseudonym-key"
    assert worker_pseudonym(1, 2) != before


def test_gunicorn_runs_production_settings_by_default():
    gunicorn = shutil.which("gunicorn", path=str(REPO_ROOT / ".venv" / "bin")) or shutil.which("gunicorn")
    assert gunicorn, "gunicorn is a runtime dependency"
    proc = subprocess.run(
        [gunicorn, "--check-config", "factlab.wsgi:application"], cwd=REPO_ROOT, env=_env(DJANGO_SECRET_KEY="s" * 60),
        capture_output=True, text=True, timeout=120, check=False,
    )
    # gunicorn.conf.py turned production mode on, which refuses to start without a pseudonym key.
    assert proc.returncode != 0 and "FACTLAB_PSEUDONYM_KEY must be set in production" in proc.stdout + proc.stderr


def test_container_entrypoint_generates_keys_once_into_the_volume(tmp_path):
    show = [sys.executable, "-c", "import os; print(os.environ['DJANGO_SECRET_KEY'], os.environ['FACTLAB_PSEUDONYM_KEY'])"]
    env = _env(FACTLAB_SECRETS_DIR=str(tmp_path / "secrets"))
    first = subprocess.run(["sh", "scripts/docker-entrypoint.sh", *show], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    again = subprocess.run(["sh", "scripts/docker-entrypoint.sh", *show], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    secret, pseudonym = first.stdout.split()
    assert first.stdout == again.stdout  # the same keys on every start and in every container
    assert len(secret) >= 50 and secret != pseudonym
    given = subprocess.run(
        ["sh", "scripts/docker-entrypoint.sh", *show], cwd=REPO_ROOT, env={**env, "DJANGO_SECRET_KEY": "from-dot-env"},
        capture_output=True, text=True, check=True,
    )
    assert given.stdout.split()[0] == "from-dot-env"


# --- API tokens


@pytest.mark.django_db
def test_tokens_expire_after_the_configured_lifetime(researcher, settings):
    settings.FACTLAB_TOKEN_TTL_HOURS = 24
    client = APIClient()
    created = client.post("/api/auth/token/", {"username": "api-researcher", "password": "research-pass-123"}, format="json").json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {created}")
    assert client.get("/api/campaigns/").status_code == 200
    Token.objects.filter(key=created).update(created=timezone.now() - timedelta(hours=25))
    expired = client.get("/api/campaigns/")
    assert expired.status_code == 401 and "Token expired" in expired.json()["detail"]
    assert not Token.objects.filter(key=created).exists()
    fresh = APIClient().post("/api/auth/token/", {"username": "api-researcher", "password": "research-pass-123"}, format="json")
    assert fresh.status_code == 201 and fresh.json()["token"] != created


@pytest.mark.django_db
def test_an_expired_token_is_replaced_not_handed_out_again(researcher, settings):
    settings.FACTLAB_TOKEN_TTL_HOURS = 1
    old = Token.objects.create(user=researcher)
    Token.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(hours=2))
    response = APIClient().post("/api/auth/token/", {"username": "api-researcher", "password": "research-pass-123"}, format="json")
    assert response.status_code == 201 and response.json()["token"] != old.key


@pytest.mark.django_db
def test_a_password_change_revokes_every_token(researcher):
    token = Token.objects.create(user=researcher)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/campaigns/").status_code == 200
    researcher.first_name = "Ada"
    researcher.save()  # other changes keep the token
    assert client.get("/api/campaigns/").status_code == 200
    researcher.set_password("a-new-password-456")
    researcher.save()
    assert client.get("/api/campaigns/").status_code == 401
    assert not Token.objects.filter(user=researcher).exists()
