"""The researcher walk of docs/researchers.md as a script (scripts/researcher_walk.sh), run with curl against a live server
and a real Celery worker: the first admin from ``createsuperuser``, an invitation, an upload polled to its
end, one's own metric as scores, the report through its 202-and-poll step, and a Parquet export."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from annotate.models import Campaign, MetricScore
from tests.celery.test_scoring_jobs_worker import WORKER_ENV
from tests.celery_helpers import CeleryWorker, broker, worker_database_url
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def documents(n: int = 12) -> str:
    lines = []
    for d in range(n):
        summaries = [
            {"system": system, "text": " ".join(["word"] * (4 + (d + k) % 7)) + ".", "human_scores": {"Factuality": ((d * 3 + k * 5) % 10) / 10}}
            for k, system in enumerate(("bart", "pegasus"))
        ]
        lines.append(json.dumps({"id": f"doc-{d}", "text": f"Article {d} says the bridge reopened.", "dataset": "cnndm", "summaries": summaries}))
    return "\n".join(lines) + "\n"


def test_the_readme_walk_runs_against_a_real_worker(live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    env = {**os.environ, "DATABASE_URL": worker_database_url(), "DJANGO_SUPERUSER_PASSWORD": "walk-admin-pw-1"}
    subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "walk-admin", "--email", "admin@example.org"],
        cwd=REPO_ROOT, env=env, check=True, capture_output=True, timeout=120,
    )
    docs = tmp_path / "docs.jsonl"
    docs.write_text(documents())
    worker_env = {**WORKER_ENV, "FACTLAB_MEDIA_ROOT": str(settings.MEDIA_ROOT)}
    with broker(redis_db=4) as url, CeleryWorker(broker_url=url, env=worker_env) as worker:
        walk = subprocess.run(
            ["bash", "scripts/researcher_walk.sh", str(docs)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=400, check=False,
            env={**os.environ, "API": f"{live_server.url}/api", "ADMIN_USER": "walk-admin", "ADMIN_PASSWORD": "walk-admin-pw-1"},
        )
        assert walk.returncode == 0, f"{walk.stdout}\n{walk.stderr}\n{worker.log()[-3000:]}"
    out = walk.stdout
    assert "'documents': 12" in out and "my_metric pearson:" in out and "data/summaries.parquet" in out and "walk done" in out
    pearson = float(out.split("my_metric pearson:")[1].split()[0])
    assert -1.0 <= pearson <= 1.0
    campaign = Campaign.objects.get(slug="ada-study")
    assert campaign.researchers.filter(username="ada").exists()
    assert MetricScore.objects.filter(summary__document__campaign=campaign, metric="my_metric").count() == 24
