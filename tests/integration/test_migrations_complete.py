"""Every installed app's models are described by its migrations (the protocol apps' own included): a model
moved between apps or changed without its migration would make ``makemigrations`` propose one."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_do():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exc:  # --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check exited {exc.code}: {out.getvalue()}")
    assert "No changes detected" in out.getvalue()


def test_every_migration_runs_on_the_demos_sqlite_database(tmp_path):
    # make demo runs on SQLite: a migration written in PostgreSQL's dialect would stop it before it serves.
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(DJANGO_DEBUG="1", SQLITE_PATH=str(tmp_path / "demo.sqlite3"))
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=settings.BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # Annotators work on it too: page, reading check and submit, with the submit's raw SQL in SQLite's dialect.
    cycles = subprocess.run([sys.executable, str(Path(__file__).with_name("sqlite_item_cycles.py"))], cwd=settings.BASE_DIR,
                            env=env, capture_output=True, text=True, timeout=600)
    assert cycles.returncode == 0, cycles.stderr[-3000:]
    assert "12 items submitted by 3 workers" in cycles.stdout and "pay decisions and ledger entries" in cycles.stdout
    back = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "frank", "zero"], cwd=settings.BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=600)
    assert back.returncode == 0, back.stderr[-3000:]  # and back, where a migration copies data
