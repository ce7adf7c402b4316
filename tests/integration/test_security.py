"""Security basics: production settings, ``check --deploy``, CSRF, password hashing and rate limits."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client, override_settings

from tests.conftest import REPO_ROOT

PRODUCTION_HOST = "factlab.example.org"


def production_env(**extra: str) -> dict[str, str]:
    """Environment of a production process: a long random secret key, a real host, a shared cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "FACTLAB_"))}
    env.update(
        FACTLAB_PRODUCTION="1",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
        FACTLAB_PSEUDONYM_KEY=secrets.token_urlsafe(64),
        DJANGO_ALLOWED_HOSTS=PRODUCTION_HOST,
        REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/9",
        DJANGO_SETTINGS_MODULE="factlab.settings",
    )
    env.update(extra)
    return env


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(autouse=True)
def _fresh_rate_counters():
    # Hourly rates below: a fixed one-minute window could roll over in the middle of a test.
    cache.clear()
    yield
    cache.clear()


# --- production settings


def test_check_deploy_is_clean_in_production_mode():
    proc = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT, env=production_env(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "System check identified no issues" in proc.stdout


def test_production_refuses_a_cache_that_is_not_shared():
    # Rate-limit counters in a per-process cache would let each gunicorn worker count on its own.
    env = production_env()
    env.pop("REDIS_URL")
    proc = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode != 0
    assert "django_ratelimit.E003" in proc.stderr + proc.stdout


def test_production_requires_a_secret_key():
    env = production_env()
    env.pop("DJANGO_SECRET_KEY")
    proc = run_python("import django; django.setup()", env)
    assert proc.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in proc.stderr


def test_production_responses_carry_hsts_and_secure_cookies():
    """Production settings, and a real request through the middleware stack of a production process (no database needed)."""
    code = f"""
import json, django
django.setup()
from django.conf import settings
from django.test import Client
from django.test.utils import override_settings
# The hashed-name manifest comes from collectstatic at deployment; headers do not depend on it.
storages = dict(settings.STORAGES, staticfiles={{"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}})
c = Client()
with override_settings(STORAGES=storages):
    plain = c.get("/accounts/login/", HTTP_HOST="{PRODUCTION_HOST}")
    secure = c.get("/accounts/login/", HTTP_HOST="{PRODUCTION_HOST}", secure=True)
cookie = secure.cookies.get("csrftoken")
print(json.dumps({{
    "plain_status": plain.status_code, "plain_location": plain.get("Location", ""),
    "secure_status": secure.status_code, "hsts": secure.get("Strict-Transport-Security", ""),
    "csrf_cookie_secure": bool(cookie and cookie["secure"]), "frame": secure.get("X-Frame-Options", ""),
    "settings": {{k: getattr(settings, k) for k in ["DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
                 "SESSION_COOKIE_HTTPONLY", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS"]}},
}}))
"""
    proc = run_python(code, production_env())
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["plain_status"] == 301 and seen["plain_location"].startswith("https://")
    assert seen["secure_status"] == 200
    assert "max-age=31536000" in seen["hsts"] and "includeSubDomains" in seen["hsts"]
    assert seen["csrf_cookie_secure"] is True
    assert seen["frame"] == "DENY"
    values = seen["settings"]
    assert values["DEBUG"] is False and values["SECURE_SSL_REDIRECT"] is True
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SESSION_COOKIE_HTTPONLY"]
    assert values["SECURE_HSTS_SECONDS"] >= 31536000


# --- passwords and CSRF


@pytest.mark.django_db
@pytest.mark.production_password_hashing
def test_passwords_are_stored_hashed():
    user = get_user_model().objects.create_user("alice", password="correct horse battery staple")
    stored = get_user_model().objects.get(pk=user.pk).password
    assert "correct horse" not in stored
    assert stored.split("$", 1)[0] in {"pbkdf2_sha256", "argon2", "bcrypt_sha256", "scrypt"}
    assert user.check_password("correct horse battery staple")


@pytest.mark.django_db
def test_login_form_requires_the_csrf_token():
    get_user_model().objects.create_user("alice", password="correct horse battery staple")
    client = Client(enforce_csrf_checks=True)
    refused = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert refused.status_code == 403
    assert "_auth_user_id" not in client.session

    page = client.get("/accounts/login/")
    token = page.cookies["csrftoken"].value
    assert 'name="csrfmiddlewaretoken"' in page.content.decode()
    accepted = client.post(
        "/accounts/login/", {"username": "alice", "password": "correct horse battery staple", "csrfmiddlewaretoken": token}
    )
    assert accepted.status_code == 302
    assert client.session["_auth_user_id"] == str(get_user_model().objects.get(username="alice").pk)


# --- rate limits


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_LOGIN="3/h")
def test_login_attempts_are_rate_limited_per_address():
    get_user_model().objects.create_user("alice", password="correct horse battery staple")
    client = Client(REMOTE_ADDR="10.0.0.1")
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    limited = client.post("/accounts/login/", {"username": "bob", "password": "wrong"})
    assert limited.status_code == 429
    assert "Too many login attempts" in limited.content.decode()
    assert int(limited["Retry-After"]) > 0
    # The right password does not get through either while the address is limited.
    again = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert again.status_code == 429 and "_auth_user_id" not in client.session
    # Reading the page is not limited.
    assert client.get("/accounts/login/").status_code == 200


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_LOGIN="3/h")
def test_login_attempts_are_rate_limited_per_username_across_addresses():
    get_user_model().objects.create_user("alice", password="correct horse battery staple")
    for i in range(3):
        assert Client(REMOTE_ADDR=f"10.0.1.{i}").post("/accounts/login/", {"username": "alice", "password": "x"}).status_code == 200
    limited = Client(REMOTE_ADDR="10.0.1.99").post("/accounts/login/", {"username": "ALICE", "password": "x"})
    assert limited.status_code == 429
    # Another username from a fresh address is unaffected.
    assert Client(REMOTE_ADDR="10.0.1.100").post("/accounts/login/", {"username": "carol", "password": "x"}).status_code == 200


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_LOGIN="2/h")
def test_admin_login_is_rate_limited_too():
    client = Client(REMOTE_ADDR="10.0.2.1")
    for _ in range(2):
        assert client.post("/admin/login/", {"username": "root", "password": "x"}).status_code == 200
    assert client.post("/admin/login/", {"username": "root", "password": "x"}).status_code == 429


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_LOGIN="1/m", RATELIMIT_ENABLE=False)
def test_rate_limits_can_be_switched_off_for_benchmarks():
    client = Client(REMOTE_ADDR="10.0.3.1")
    assert all(client.post("/accounts/login/", {"username": "a", "password": "x"}).status_code == 200 for _ in range(3))


def test_rate_limit_groups_follow_url_names():
    from django.test import RequestFactory

    from annotate.ratelimits import limited_group

    post, get = RequestFactory().post("/x"), RequestFactory().get("/x")
    assert limited_group(post, "login") == "login"
    assert limited_group(post, "admin:login") == "login"
    assert limited_group(post, "api:token") == "login"
    assert limited_group(post, "annotate:frank-submit") == "submit"
    assert limited_group(post, "api:assignment-submit") == "submit"
    assert limited_group(get, "annotate:frank-submit") is None
    assert limited_group(post, "annotate:home") is None


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_SUBMIT="2/h")
def test_submissions_are_rate_limited_per_account_with_a_json_429():
    from django.urls import reverse

    from annotate.models import SentenceJudgement
    from annotate.services.assignments import request_assignment
    from tests.factories import make_campaign, make_document, make_worker
    from tests.guarantee_support import frank_answers

    campaign = make_campaign(entity_check_enabled=False, trap_rate=0.0)
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    url = reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk])
    body = json.dumps({**frank_answers(assignment), "submission_key": "k"})
    client = Client(REMOTE_ADDR="10.0.4.1")
    client.force_login(worker.user)
    assert [client.post(url, body, content_type="application/json").status_code for _ in range(2)] == [200, 200]
    limited = client.post(url, body, content_type="application/json")
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited" and "Too many submissions" in limited.json()["detail"]
    assert SentenceJudgement.objects.filter(assignment=assignment).count() == 3  # stored once, before the limit
    # Another annotator behind the same address is not affected.
    other = make_worker()
    other_client = Client(REMOTE_ADDR="10.0.4.1")
    other_client.force_login(other.user)
    assert other_client.post(url, body, content_type="application/json").status_code == 404  # reaches the view (someone else's assignment)


@pytest.mark.django_db
@override_settings(FACTLAB_RATELIMIT_LOGIN="2/h")
def test_api_token_endpoint_is_rate_limited():
    get_user_model().objects.create_user("tok", password="correct horse battery staple")
    client = Client(REMOTE_ADDR="10.0.5.1")
    statuses = [
        client.post("/api/auth/token/", {"username": "tok", "password": "wrong"}, content_type="application/json").status_code for _ in range(3)
    ]
    assert statuses == [400, 400, 429]
    assert Client(REMOTE_ADDR="10.0.5.2").post("/api/auth/token/", {"username": "TOK", "password": "x"}, content_type="application/json").status_code == 429
