"""Jobs never vanish: a message lost in the broker is sent again by the beat, with a real Redis and worker.

The broker database is flushed after the messages were queued (as a Redis restart without persistence
would): the import, the scoring chunks, the page preparation and the report must still finish once the
healing beat ran. Also: retry and cancel of jobs through the API, and the queue of every task.
"""
from __future__ import annotations

import json
import os

import pytest
import redis
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from annotate.models import Campaign, ImportJob, ImportStatus, PagePreparation
from annotate.services.import_jobs import dispatch_import_job
from annotate.services.page_preparations import queue_page_preparation
from annotate.tasks import heal_import_jobs, heal_page_preparations
from factlab import queues
from metrics_service.models import ChunkStatus, JobStatus
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.jobs import submit_scoring_job
from metrics_service.tasks import heal_scoring_jobs
from tests.celery.test_scoring_jobs_worker import WORKER_ENV, job_finished
from tests.celery.test_scoring_jobs_worker import make_campaign as make_scoring_campaign
from tests.celery_helpers import TEST_SCORERS, CeleryWorker, broker, redis_url, wait_for

DB = 5


@pytest.fixture(autouse=True)
def _test_scorers(monkeypatch):
    for name, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, name, target)


def _queued_upload(slug: str) -> ImportJob:
    upload = ImportJob(format="jsonl", campaign_slug=slug, original_name="d.jsonl")
    record = {"id": "d1", "text": "A text about a bridge.", "summaries": [{"system": "s", "text": "A bridge."}]}
    upload.file.save("d.jsonl", ContentFile(json.dumps(record).encode() + b"\n"), save=False)
    upload.save()
    return upload


@pytest.mark.celery_worker
@pytest.mark.slow
def test_messages_lost_in_the_broker_are_sent_again_by_the_beat_and_the_jobs_finish(transactional_db, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FACTLAB_HEAL_GRACE_SECONDS = 0
    campaign = make_scoring_campaign("lost-messages", n_documents=2, with_references=False)
    url = redis_url(DB)
    with broker(redis_db=DB):
        upload = _queued_upload("lost-import")
        dispatch_import_job(upload.pk)
        job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=1)
        preparation = queue_page_preparation(campaign)
        client = redis.Redis.from_url(url)
        queued = {name: client.llen(name) for name in queues.ALL_QUEUES}
        assert queued == {"interactive": 1, "reports": 0, "cpu": job.chunks.count() + 1, "gpu": 0}  # the import apart from the long jobs
        client.flushdb()  # the broker loses every queued message
        upload.refresh_from_db()
        assert upload.dispatched_at is not None and upload.status == ImportStatus.PENDING

        env = {**WORKER_ENV, "FACTLAB_MEDIA_ROOT": str(settings.MEDIA_ROOT)}
        with CeleryWorker(broker_url=url, env=env) as worker:
            # Sent less than the pending time ago: the beat leaves them (they may just be waiting).
            assert heal_import_jobs() == [] and heal_scoring_jobs()["undispatched"] == []
            assert ImportJob.objects.get(pk=upload.pk).status == ImportStatus.PENDING
            settings.FACTLAB_HEAL_PENDING_SECONDS = 0
            assert heal_import_jobs() == [upload.pk]
            assert sorted(heal_scoring_jobs()["undispatched"]) == sorted(job.chunks.values_list("id", flat=True))
            assert heal_page_preparations() == [preparation.pk]
            wait_for(lambda: job_finished(job), timeout=60, what="the healed scoring job", workers=[worker])
            wait_for(lambda: ImportJob.objects.get(pk=upload.pk).finished_at is not None, timeout=60, what="the healed import", workers=[worker])
            wait_for(lambda: PagePreparation.objects.get(pk=preparation.pk).finished_at is not None, timeout=60,
                     what="the healed page preparation", workers=[worker])
    upload.refresh_from_db()
    assert upload.status == ImportStatus.SUCCEEDED, upload.error
    assert Campaign.objects.get(slug="lost-import").documents.count() == 1
    assert (job.status, job.done) == (JobStatus.DONE, job.total) and job.total > 0
    preparation.refresh_from_db()
    assert (preparation.status, preparation.done, preparation.total) == (ImportStatus.SUCCEEDED, 2, 2)


@pytest.mark.celery_worker
@pytest.mark.slow
def test_a_lost_report_message_is_sent_again_by_the_next_poll(transactional_db, settings, django_user_model):
    from metrics_service.report_jobs import request_report

    campaign = make_scoring_campaign("lost-report", n_documents=2, with_references=False)
    url = redis_url(DB)
    with broker(redis_db=DB):
        settings.FACTLAB_HEAL_GRACE_SECONDS = 3600
        report, progress = request_report(campaign)
        assert report is None and progress["state"] == "queued"
        redis.Redis.from_url(url).flushdb()
        with CeleryWorker(broker_url=url, env=WORKER_ENV) as worker:
            report, progress = request_report(campaign)
            assert report is None and progress["state"] == "queued"  # within the grace time: waits
            settings.FACTLAB_HEAL_GRACE_SECONDS = 0
            found: list[dict] = []

            def poll() -> bool:
                report, _ = request_report(campaign)
                found.extend([report] if report else [])
                return bool(found)

            wait_for(poll, timeout=90, what="the report after its message was lost", workers=[worker])
    assert found[0]["campaign"] == "lost-report" and found[0]["counts"]["documents"] == 2


@pytest.mark.django_db
def test_failed_and_cancelled_jobs_can_be_retried_and_pending_ones_cancelled_through_the_api(settings, tmp_path, django_user_model):
    settings.MEDIA_ROOT = tmp_path / "media"
    admin = django_user_model.objects.create_user("jobs-admin", password="x", is_staff=True, is_superuser=True)
    api = APIClient()
    api.force_authenticate(admin)
    from factlab.celery import app

    # Eager Celery would run a job inside the request; these checks are about the states before that.
    app.conf.task_always_eager = False
    previous = app.conf.broker_url
    # This process's own Redis database: messages sent here are never consumed (the checks need a broker
    # that answers, and outside a worker test nothing may reach the worker tests' databases).
    app.conf.broker_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/12"
    try:
        upload = _queued_upload("retry-import")
        answer = api.post(f"/api/imports/{upload.pk}/cancel/")
        assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
        assert api.post(f"/api/imports/{upload.pk}/cancel/").status_code == 200  # twice: nothing changes
        answer = api.post(f"/api/imports/{upload.pk}/retry/")
        assert answer.status_code == 202 and answer.json()["status"] == "pending", answer.content
        answer = api.post(f"/api/imports/{upload.pk}/retry/")
        assert answer.status_code == 409 and "only a failed or cancelled import" in answer.json()["detail"]

        campaign = make_scoring_campaign("retry-scoring", n_documents=2, with_references=False)
        job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)
        base = f"/api/campaigns/{campaign.slug}/scoring-jobs/{job.pk}"
        assert api.post(f"{base}/retry/").status_code == 409  # pending: nothing to retry
        assert api.post(f"{base}/cancel/").json()["status"] == "cancelled"
        assert job.chunks.filter(status=ChunkStatus.CANCELLED).count() == 2
        answer = api.post(f"{base}/retry/")
        assert answer.status_code == 202 and answer.json()["status"] == "pending", answer.content
        assert job.chunks.filter(status=ChunkStatus.PENDING).count() == 2

        run = PagePreparation.objects.create(campaign=campaign)
        base = f"/api/campaigns/{campaign.slug}/page-preparations/{run.pk}"
        assert api.post(f"{base}/cancel/").json()["status"] == "cancelled"
        assert api.post(f"{base}/retry/").json()["status"] == "pending"
        listed = api.get(f"/api/campaigns/{campaign.slug}/page-preparations/").json()
        assert [row["id"] for row in listed["results"]] == [run.pk]
    finally:
        app.conf.task_always_eager, app.conf.broker_url = True, previous


def test_short_jobs_and_long_jobs_go_to_different_queues():
    from factlab.celery import app

    def queue(name: str) -> str:
        return app.amqp.router.route({}, name)["queue"].name

    assert queue("annotate.run_import_job") == "interactive"
    assert queue("metrics_service.tasks_report.compute_report") == "reports"  # imports never wait behind reports
    assert queue("annotate.prepare_campaign_pages") == queue("metrics_service.tasks.score_chunk") == "cpu"
    assert {queue(entry["task"]) for entry in app.conf.beat_schedule.values()} == {"interactive"}


def test_every_worker_command_consumes_every_queue_and_imports_have_a_worker_of_their_own():
    import re

    from tests.conftest import REPO_ROOT

    for name in ("docker-compose.yml", "docs/running.md", "scripts/demo.sh"):
        text = (REPO_ROOT / name).read_text()
        consumed = [set(q.split(",")) for q in re.findall(r"celery -A factlab worker -Q ([a-z,]+)", text)]
        assert set().union(*consumed) == set(queues.ALL_QUEUES), name
        assert {queues.INTERACTIVE} in consumed, f"{name}: imports and reports need a worker of their own"
