"""The production recipe of docs/running.md, run exactly as written.

The shell block after ``<!-- production-recipe -->`` in docs/running.md is taken from the page and run with bash in a
copy of the working tree (what a fresh clone holds, with this checkout's virtual environment linked in), against
a database that does not exist yet and Redis databases of its own. Nothing else is run by hand: if a step the
recipe needs is missing from the page (the install of WordNet, collectstatic, the first admin, a worker), one
of the checks below fails. Then, as a newcomer would: the sign-in page, a hashed static file, signing in with the
admin the recipe created, an import through the interactive worker and a METEOR scoring job (which needs WordNet)
through the long-jobs worker.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import dj_database_url
import psycopg
import pytest
import redis
import requests
from psycopg import sql

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow]

RECIPE_MARKER = "<!-- production-recipe -->"
ADMIN = ("first-admin", "a long passphrase nobody published 7431")
# A TLS proxy in front of gunicorn says the request came over HTTPS; production settings trust this header.
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}


def recipe_block(readme: str) -> str:
    """The first ```bash block after the marker, as written."""
    after = readme.split(RECIPE_MARKER, 1)[1]
    match = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert match, "docs/running.md: no ```bash block after the production-recipe marker"
    return match.group(1)


def fresh_checkout(target: Path) -> Path:
    """The tracked and not-ignored files of this working tree (a fresh clone's content), with .venv linked."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO_ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(REPO_ROOT / ".venv")
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_connection(database_url: str) -> dict:
    config = dj_database_url.parse(database_url)
    return {k: v for k, v in {"dbname": "postgres", "user": config.get("USER"), "password": config.get("PASSWORD"),
                              "host": config.get("HOST"), "port": config.get("PORT")}.items() if v}


def wait_for(check, timeout: float, what: str, log_dir: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(1)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(log_dir.glob("*.log")))
    pytest.fail(f"{what} within {timeout:.0f} s\n{logs}")


@pytest.fixture
def recipe_services():
    """A PostgreSQL database name nobody uses (dropped afterwards) and two empty Redis databases."""
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/factlab")
    assert "postgres" in base, "the recipe test needs PostgreSQL (DATABASE_URL)"
    name = f"factlab_recipe_{uuid.uuid4().hex[:8]}"
    config = dj_database_url.parse(base)
    auth = config["USER"] + (f":{config['PASSWORD']}" if config.get("PASSWORD") else "")
    database_url = f"postgres://{auth}@{config['HOST'] or '127.0.0.1'}:{config['PORT'] or 5432}/{name}"
    redis_base = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0").rstrip("/")
    server, _, db = redis_base.rpartition("/")
    recipe_db = (int(db) + 2) % 16 if db.isdigit() else 2  # the recipe's cache takes the next one
    redis_url = f"{server}/{recipe_db}"
    for number in (recipe_db, recipe_db + 1):
        redis.Redis.from_url(f"{server}/{number}").flushdb()
    yield database_url, redis_url
    with psycopg.connect(**server_connection(base), autocommit=True) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def run_recipe(checkout: Path, database_url: str, redis_url: str, port: int) -> subprocess.Popen:
    # The environment of a new shell: nothing of this test process's Django settings leaks in.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "FACTLAB_", "CELERY_", "PYTEST_", "DATABASE_URL", "REDIS_URL", "PGPASSWORD"))}
    env.update({"DATABASE_URL": database_url, "REDIS_URL": redis_url, "PORT": str(port),
                "FACTLAB_ADMIN_USERNAME": ADMIN[0], "FACTLAB_ADMIN_PASSWORD": ADMIN[1],
                "FACTLAB_ADMIN_EMAIL": "admin@example.org"})
    if os.environ.get("PGPASSWORD"):
        env["PGPASSWORD"] = os.environ["PGPASSWORD"]
    script = checkout / "recipe.sh"
    script.write_text("set -euo pipefail\n" + recipe_block((checkout / "docs" / "running.md").read_text()))
    return subprocess.Popen(["bash", str(script)], cwd=checkout, env=env, stdout=(checkout / "recipe.out").open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    """The recipe's processes share its session: end them all (beat, workers, gunicorn)."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.5)


@pytest.mark.long(seconds=55)
def test_the_readme_production_recipe_as_written_serves_signs_in_and_runs_jobs(tmp_path, recipe_services):
    database_url, redis_url = recipe_services
    checkout = fresh_checkout(tmp_path / "factlab")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = run_recipe(checkout, database_url, redis_url, port)
    logs = checkout / "var" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "recipe.log").symlink_to(checkout / "recipe.out")
    try:
        def sign_in_page():
            assert process.poll() is None, (checkout / "recipe.out").read_text(errors="replace")[-5000:]
            try:
                answer = requests.get(f"{base}/accounts/login/", headers=PROXY_HEADERS, timeout=10)
            except requests.ConnectionError:
                return None
            return answer if answer.status_code == 200 else None

        page = wait_for(sign_in_page, 600, "the sign-in page did not answer 200", logs)
        stylesheet = re.search(r'href="(/static/factlab/site\.[0-9a-f]{12}\.css)"', page.text)
        assert stylesheet, "the page should link the manifest's hashed stylesheet"
        assert requests.get(base + stylesheet.group(1), headers=PROXY_HEADERS, timeout=10).status_code == 200

        # Signing in with the admin the recipe created (cookies are Secure: sent by hand, as a browser would over TLS).
        csrf = page.cookies["csrftoken"]
        token_field = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        signed_in = requests.post(
            f"{base}/accounts/login/", data={"username": ADMIN[0], "password": ADMIN[1], "csrfmiddlewaretoken": token_field},
            headers={**PROXY_HEADERS, "Cookie": f"csrftoken={csrf}", "Origin": f"https://127.0.0.1:{port}",
                     "Referer": f"https://127.0.0.1:{port}/accounts/login/"},
            allow_redirects=False, timeout=10,
        )
        assert signed_in.status_code == 302, signed_in.text[:2000]
        session = signed_in.cookies["sessionid"]
        manage = requests.get(f"{base}/manage/", headers={**PROXY_HEADERS, "Cookie": f"sessionid={session}"}, timeout=30)
        assert manage.status_code == 200 and ADMIN[0] in manage.text

        # The published demo password opens nothing, and setup_demo would refuse this server.
        refused = requests.post(f"{base}/api/auth/token/", json={"username": "demo-admin", "password": "factlab-admin"},
                                headers=PROXY_HEADERS, timeout=10)
        assert refused.status_code in (400, 401, 403)

        token = requests.post(f"{base}/api/auth/token/", json={"username": ADMIN[0], "password": ADMIN[1]},
                              headers=PROXY_HEADERS, timeout=10)
        assert token.status_code in (200, 201), token.text
        api = {**PROXY_HEADERS, "Authorization": f"Token {token.json()['token']}"}

        # An import through the interactive worker ...
        record = {"id": "doc-1", "text": "The council met on Monday. It approved the budget of the town.",
                  "dataset": "cnndm",
                  "summaries": [{"system": "bart", "text": "The council approved the budget on Monday."},
                                {"system": "reference", "text": "The town council approved its budget.", "is_reference": True}]}
        upload = requests.post(f"{base}/api/imports/", headers=api, timeout=30,
                               data={"format": "jsonl", "campaign": "recipe-check", "campaign_kind": "frank"},
                               files={"file": ("recipe.jsonl", json.dumps(record) + "\n", "application/octet-stream")})
        assert upload.status_code == 202, upload.text
        job_url = f"{base}/api/imports/{upload.json()['id']}/"

        def import_done():
            status = requests.get(job_url, headers=api, timeout=10).json()
            assert status["status"] != "failed", status
            return status["status"] == "succeeded"

        wait_for(import_done, 300, "the import did not finish (interactive worker)", logs)

        # ... and a METEOR scoring job (WordNet) through the long-jobs worker.
        scoring = requests.post(f"{base}/api/campaigns/recipe-check/scoring-jobs/", json={"metric": "meteor"},
                                headers=api, timeout=30)
        assert scoring.status_code == 201, scoring.text
        scoring_url = f"{base}/api/campaigns/recipe-check/scoring-jobs/{scoring.json()['id']}/"

        def scoring_done():
            status = requests.get(scoring_url, headers=api, timeout=10).json()
            assert status["status"] not in ("failed", "cancelled"), status
            return status if status["status"] == "done" else None

        finished = wait_for(scoring_done, 400, "the scoring job did not finish (long-jobs worker)", logs)
        assert finished["failed"] == 0 and finished["done"] == finished["total"] >= 1, finished
        assert not (checkout / "celerybeat-schedule").exists(), "beat's schedule belongs in var/, not the repository root"
    finally:
        stop(process)


def test_the_demo_commands_refuse_production_mode(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_",))}
    env.update({"FACTLAB_PRODUCTION": "1", "DJANGO_SECRET_KEY": "recipe-test-" + "s" * 50,
                "FACTLAB_PSEUDONYM_KEY": "recipe-test-pseudonyms-" + "p" * 40, "DJANGO_SECURE_SSL_REDIRECT": "0"})
    for command in ("setup_demo", "setup_bump_demo"):
        ran = subprocess.run([sys.executable, "manage.py", command], check=False, cwd=REPO_ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode != 0
        assert "refuses to run in production mode" in ran.stderr and "create_admin" in ran.stderr, ran.stderr


@pytest.mark.django_db
def test_create_admin_reads_the_environment_once_and_refuses_published_or_weak_passwords(monkeypatch):
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command

    monkeypatch.setenv("FACTLAB_ADMIN_USERNAME", "demo-admin")
    monkeypatch.setenv("FACTLAB_ADMIN_PASSWORD", "factlab-admin")
    with pytest.raises(CommandError, match="FACTLAB_ADMIN_PASSWORD: this password is published"):
        call_command("create_admin")
    monkeypatch.setenv("FACTLAB_ADMIN_USERNAME", "ops")
    monkeypatch.setenv("FACTLAB_ADMIN_PASSWORD", "12345678")
    with pytest.raises(CommandError, match="FACTLAB_ADMIN_PASSWORD: .*too common|entirely numeric"):
        call_command("create_admin")
    assert not get_user_model().objects.filter(username="ops").exists()
    monkeypatch.setenv("FACTLAB_ADMIN_PASSWORD", ADMIN[1])
    call_command("create_admin")
    admin = get_user_model().objects.get(username="ops")
    assert admin.is_superuser and admin.is_staff and admin.check_password(ADMIN[1])
    # Running the recipe again never resets a password the admin has since chosen.
    admin.set_password("chosen later by the admin 9921")
    admin.save()
    call_command("create_admin")
    admin.refresh_from_db()
    assert admin.check_password("chosen later by the admin 9921")


@pytest.mark.django_db
def test_create_admin_without_variables_or_terminal_says_what_to_set(monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.delenv("FACTLAB_ADMIN_USERNAME", raising=False)
    monkeypatch.delenv("FACTLAB_ADMIN_PASSWORD", raising=False)
    with open(os.devnull) as no_terminal:
        monkeypatch.setattr(sys, "stdin", no_terminal)
        with pytest.raises(CommandError, match="set FACTLAB_ADMIN_USERNAME and FACTLAB_ADMIN_PASSWORD"):
            call_command("create_admin")


@pytest.mark.django_db
def test_published_demo_passwords_open_nothing_in_production(client, settings):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("demo-admin", password="factlab-admin")
    settings.PRODUCTION = True
    assert client.post("/api/auth/token/", {"username": "demo-admin", "password": "factlab-admin"},
                       content_type="application/json").status_code in (400, 401, 403)
    assert not client.login(username="demo-admin", password="factlab-admin")
    settings.PRODUCTION = False
    assert client.login(username="demo-admin", password="factlab-admin")
