"""The production recipe serves pages: collectstatic, then gunicorn with production settings (DEBUG off,
hashed static names from the manifest). Without collectstatic every page would answer 500."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.celery_helpers import worker_database_url
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_gunicorn_with_production_settings_serves_a_page_after_collectstatic(tmp_path):
    static_root = tmp_path / "staticfiles"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_DEBUG"))},
        "DATABASE_URL": worker_database_url(), "FACTLAB_PRODUCTION": "1", "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "production-test-" + "k" * 50, "FACTLAB_PSEUDONYM_KEY": "production-test-pseudonyms-" + "p" * 40,
        "DJANGO_SECURE_SSL_REDIRECT": "0", "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "FACTLAB_STATIC_ROOT": str(static_root),
    }
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=REPO_ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    assert (static_root / "staticfiles.json").is_file()
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "factlab.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        status, page = 0, ""
        while time.monotonic() < deadline:
            try:
                status, page = get(f"http://127.0.0.1:{port}/accounts/login/")
                break
            except (ConnectionError, urllib.error.URLError):
                time.sleep(0.5)
        assert status == 200, page[:2000]
        css = re.search(r'href="(/static/factlab/site\.[0-9a-f]{12}\.css)"', page)
        assert css, "the page should link the manifest's hashed stylesheet"
        assert get(f"http://127.0.0.1:{port}{css.group(1)}")[0] == 200
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
