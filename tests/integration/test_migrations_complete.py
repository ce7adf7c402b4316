"""Every installed app's models are described by its migrations (the protocol apps' own included): a model
moved between apps or changed without its migration would make ``makemigrations`` propose one."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_do():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exc:  # --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check exited {exc.code}: {out.getvalue()}")
    assert "No changes detected" in out.getvalue()
