"""A real gunicorn server as deployed (gunicorn.conf.py): the master loads spaCy before it forks, so a fresh
worker's first BUMP submit loads nothing and its garbage collector never walks what the master loaded; PostgreSQL dropping the server's connections costs no request a 500
(persistent connections are health-checked); ``/healthz/`` answers supervisors over plain HTTP."""
from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

import pytest
from django.db import connection
from django.test import Client

from annotate.bump.models import Edit
from annotate.bump.services import create_bump_campaign
from annotate.models import Assignment, CampaignStatus
from annotate.services.assignments import request_assignment
from tests.celery_helpers import worker_database_url
from tests.conftest import REPO_ROOT
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Wraps the repository's gunicorn.conf.py: counts spaCy loads per process (from before its start-up hook)
# and logs, per request, the loads, the modules imported while it ran and the objects the collector can walk.
SPY_CONFIG = '''
import gc, json, os, sys
exec(compile(open({conf!r}).read(), {conf!r}, "exec"))
_loads = []
_load_before_listening = on_starting

def on_starting(server):
    import spacy
    for name in ("load", "blank"):
        real = getattr(spacy, name)
        def spy(*args, _real=real, _name=name, **kwargs):
            _loads.append([os.getpid(), _name])
            return _real(*args, **kwargs)
        setattr(spacy, name, spy)
    _load_before_listening(server)

def pre_request(worker, req):
    worker.factlab_before = (len(_loads), set(sys.modules))

def post_request(worker, req, environ, resp):
    count, modules = worker.factlab_before
    with open({log!r}, "a") as out:
        out.write(json.dumps({{"path": req.path, "pid": os.getpid(), "loads_before": _loads[:count],
                               "loads": _loads[count:], "new_modules": sorted(set(sys.modules) - modules),
                               "frozen": gc.get_freeze_count(), "collectable": len(gc.get_objects())}}) + "\\n")
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn with one worker on the test database, its PostgreSQL sessions named ``application_name``."""

    def __init__(self, tmp_path: Path):
        self.port = free_port()
        self.log = tmp_path / "requests.jsonl"
        self.config = tmp_path / "gunicorn_spy.py"
        self.config.write_text(SPY_CONFIG.format(conf=str(REPO_ROOT / "gunicorn.conf.py"), log=str(self.log)))
        self.application_name = f"factlab-test-{secrets.token_hex(4)}"
        self.output = tmp_path / "gunicorn.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Self:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CELERY_"))},
            "DATABASE_URL": worker_database_url(), "FACTLAB_PRODUCTION": "0", "DJANGO_DEBUG": "0",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "PGAPPNAME": self.application_name,
            # A job the server sends stays in its process: no Redis database of another test gets it.
            "CELERY_BROKER_URL": "memory://", "CELERY_RESULT_BACKEND": "cache+memory://",
        }
        with self.output.open("ab") as out:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "gunicorn"), "-c", str(self.config), "factlab.wsgi:application",
                 "--bind", f"127.0.0.1:{self.port}", "--workers", "1", "--timeout", "120"],
                cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        deadline = time.monotonic() + 180  # the master loads spaCy first: seconds, a minute on a busy machine
        while "Booting worker" not in self.output.read_text(errors="replace"):
            assert self.process.poll() is None, self.output.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, self.output.read_text(errors="replace")[-3000:]
            time.sleep(0.3)
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def request(self, path: str, *, body: dict | None = None, cookies: dict[str, str] | None = None) -> tuple[int, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers |= {"Content-Type": "application/json", "X-CSRFToken": (cookies or {}).get("csrftoken", "")}
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                return answer.status, answer.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def requests_logged(self, count: int) -> list[dict]:
        """The first ``count`` requests' log lines (gunicorn writes one after sending its response)."""
        deadline = time.monotonic() + 30
        while len(lines := (self.log.read_text().splitlines() if self.log.exists() else [])) < count:
            assert time.monotonic() < deadline, f"{len(lines)} of {count} requests logged"
            time.sleep(0.1)
        return [json.loads(line) for line in lines[:count]]


def terminate_backends(application_name: str) -> int:
    """End the server's PostgreSQL sessions (as a restart or a failover would), never this test's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database() AND pid <> pg_backend_pid()",
            [application_name],
        )
        return cursor.fetchone()[0]


def test_a_fresh_worker_loads_no_spacy_in_a_request_and_dropped_database_connections_cost_no_request(tmp_path):
    campaign = create_bump_campaign("t1", "Task 1", "bump_taxonomy", status=CampaignStatus.RUNNING)
    make_bump_document(campaign, types=["extrinsic_entity"])
    worker = make_worker()
    qualify(worker, campaign)
    assignment = request_assignment(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    csrf = secrets.token_hex(16)  # any well-formed secret: the header must repeat the cookie
    cookies = {"sessionid": client.cookies["sessionid"].value, "csrftoken": csrf}
    edited = BUMP_REFERENCE.replace("Merck", "Pfizer")

    with Server(tmp_path) as server:
        status, answer = server.request(
            f"/c/t1/bump/task/{assignment.pk}/submit/", cookies=cookies,
            body={"checkpoint": assignment.checkpoint.code, "edited": edited, "submission_key": "first"},
        )
        assert status == 200, answer
        assert Edit.objects.get(assignment=assignment).edited_summary.text == edited
        submit = server.requests_logged(1)[0]
        # The master loaded the pipelines (the spy counts them, so it sees loads) before forking the worker...
        assert submit["loads_before"] and {pid for pid, _ in submit["loads_before"]} == {server.process.pid}
        # ...and the worker's first request, a BUMP submit that splits and counts sentences, loaded none.
        assert submit["loads"] == [] and submit["pid"] != server.process.pid
        assert not [m for m in submit["new_modules"] if m.split(".")[0] in {"spacy", "thinc", "torch", "sklearn"}]
        # What the master loaded is frozen: the worker's full collections walk only what the worker made since.
        assert submit["frozen"] > 100_000 and submit["collectable"] < submit["frozen"] / 2, submit

        # The worker keeps its connection between requests (CONN_MAX_AGE); PostgreSQL drops it.
        assert server.request("/healthz/")[0] == 200
        assert terminate_backends(server.application_name) >= 1
        assert server.request("/healthz/") == (200, "ok")
        status, page = server.request("/c/t1/done/?submitted=1", cookies=cookies)  # a page that reads the database
        assert status == 200, page
        assert terminate_backends(server.application_name) >= 1
        assert server.request("/c/t1/done/?submitted=1", cookies=cookies)[0] == 200
    assert Assignment.objects.get(pk=assignment.pk).status == "submitted"


def test_the_health_check_answers_over_plain_http_to_any_host_and_fails_without_the_static_manifest(settings, tmp_path):
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["factlab.example.org"]
    client = Client()
    assert client.get("/accounts/login/", HTTP_HOST="factlab.example.org").status_code == 301  # other pages redirect
    answer = client.get("/healthz/", HTTP_HOST="127.0.0.1:8000")
    assert (answer.status_code, answer.content) == (200, b"ok")
    # Production storage without collectstatic: every page would answer 500, so the check fails.
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}
    settings.STATIC_ROOT = tmp_path
    failed = client.get("/healthz/", HTTP_HOST="127.0.0.1:8000")
    assert failed.status_code == 503 and failed.content == b"unhealthy: sign-in page"
