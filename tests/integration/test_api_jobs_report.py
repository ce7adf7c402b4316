"""Metric scoring jobs (submit, progress, cancel) and the analysis report through the API."""
from __future__ import annotations

import pytest

from annotate.models import MetricScore
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
C = "/api/campaigns/frank-api"


def test_researcher_submits_a_job_and_watches_it_finish(campaign, researcher_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        created = researcher_client.post(f"{C}/scoring-jobs/", {"metric": "rouge", "chunk_size": 2}, format="json")
    assert created.status_code == 201, created.content
    job = created.json()
    assert job["metric"] == "rouge" and job["total"] == 7  # 4 system summaries, 2 references, 1 edit
    progress = researcher_client.get(f"{C}/scoring-jobs/{job['id']}/").json()
    assert progress["status"] == "done" and progress["done"] == progress["total"] and progress["percent"] == 100.0
    assert MetricScore.objects.filter(job_id=job["id"], metric="rouge2_precision_article").count() == 7
    listed = researcher_client.get(f"{C}/scoring-jobs/").json()["results"]
    assert [j["id"] for j in listed] == [job["id"]]
    finished = researcher_client.post(f"{C}/scoring-jobs/{job['id']}/cancel/")
    assert finished.status_code == 409 and "already finished" in finished.json()["detail"]


def test_cancel_a_pending_job(campaign, admin_client, django_capture_on_commit_callbacks):
    from factlab.celery import app

    # As with a real broker: chunks are sent on commit, which the captured callbacks never run here
    # (tests/conftest.py restores the eager setting after each test).
    app.conf.task_always_eager = False
    with django_capture_on_commit_callbacks(execute=False):
        job = admin_client.post(f"{C}/scoring-jobs/", {"metric": "bleu"}, format="json").json()
    assert job["status"] == "pending"
    cancelled = admin_client.post(f"{C}/scoring-jobs/{job['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"


def test_bad_job_requests_are_refused(campaign, researcher_client):
    unknown = researcher_client.post(f"{C}/scoring-jobs/", {"metric": "no-such-metric"}, format="json")
    assert unknown.status_code == 400 and "unknown metric" in unknown.json()["detail"]
    missing = researcher_client.post(f"{C}/scoring-jobs/", {"metric": "rouge", "summary_ids": [999999]}, format="json")
    assert missing.status_code == 400 and "not found" in missing.json()["detail"]
    assert researcher_client.post(f"{C}/scoring-jobs/", {"chunk_size": 0}, format="json").status_code == 400
    assert researcher_client.get(f"{C}/scoring-jobs/424242/").status_code == 404


def test_report_with_options(campaign, researcher_client):
    report = researcher_client.get(f"{C}/report/?split=test&partial=true")
    assert report.status_code == 200
    body = report.json()
    assert body["campaign"] == "frank-api" and body["options"]["split"] == "test"
    assert researcher_client.get(f"{C}/report/?dataset=cnndm").json()["options"]["dataset"] == "cnndm"
    bad = researcher_client.get(f"{C}/report/?split=train")
    assert bad.status_code == 400 and "split" in bad.json()


def test_report_is_computed_off_the_request_path(campaign, researcher_client, monkeypatch):
    from django.core.cache import cache

    import metrics_service.tasks_report as tasks_module
    from factlab.celery import app

    cache.clear()
    app.conf.task_always_eager = False  # a real broker and no worker yet: the task waits in the queue
    first = researcher_client.get(f"{C}/report/?spearman=ranks")
    assert first.status_code == 202 and first["Retry-After"] == "2"
    assert first.json()["status"] == "queued"
    again = researcher_client.get(f"{C}/report/?spearman=ranks")
    assert again.status_code == 202 and again.json()["status"] == "queued"  # not queued twice
    # What the worker runs: its progress is visible to pollers meanwhile, then the cached report is served.
    seen = []
    original = tasks_module.set_report_progress

    def spy(campaign_obj, options, **state):
        original(campaign_obj, options, **state)
        seen.append(researcher_client.get(f"{C}/report/?spearman=ranks").json())

    monkeypatch.setattr(tasks_module, "set_report_progress", spy)
    tasks_module.compute_report("frank-api", spearman="ranks")
    assert [s["progress"]["section"] for s in seen][:2] == ["loading data", "agreement"]
    assert all(s["status"] == "running" and s["progress"]["total"] == 7 for s in seen)
    done = researcher_client.get(f"{C}/report/?spearman=ranks")
    assert done.status_code == 200 and done.json()["options"]["spearman"] == "ranks"
    assert researcher_client.get(f"{C}/report/?auc_references=sometimes").status_code == 400
