"""Clear failures and self-healing jobs, with real Redis, PostgreSQL and Celery worker processes.

* With Redis unreachable, sign-in, token creation, submission, report and dashboard work (the cache and
  the rate limits fail open) and what needs the broker answers 503 without storing anything.
* A job whose message never reached the broker is sent by the beat task once the broker is back.
* A chunk whose worker was SIGKILLed is found by its released running lock and requeued within
  seconds, long before the broker's visibility timeout (an hour) would re-deliver it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, Campaign, ImportJob, ImportStatus, Summary
from annotate.services.import_jobs import dispatch_import_job
from annotate.tasks import expire_stale_assignments, heal_import_jobs
from factlab.jobs import SCORING_CHUNK_LOCK, broker_available, is_running
from metrics_service.models import ChunkStatus, JobStatus
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.healing import requeue_orphaned_chunks
from metrics_service.scoring.jobs import submit_scoring_job
from metrics_service.tasks import heal_scoring_jobs
from tests.celery.test_scoring_jobs_worker import WORKER_ENV, assert_scored_once, job_finished
from tests.celery.test_scoring_jobs_worker import make_campaign as make_scoring_campaign
from tests.celery_helpers import TEST_SCORERS, CeleryWorker, _reset_producer_pool, broker, redis_url, wait_for, worker_database_url
from tests.conftest import REPO_ROOT
from tests.factories import make_campaign, make_document, make_worker, qualify

DEAD_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture(autouse=True)
def _test_scorers(monkeypatch, settings):
    for name, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, name, target)
    settings.FACTLAB_HEAL_GRACE_SECONDS = 0


@contextmanager
def dead_broker():
    """Send this process's tasks to a Redis address where nothing listens (an outage)."""
    from factlab.celery import app

    previous = app.conf.broker_url, app.conf.task_always_eager
    app.conf.broker_url, app.conf.task_always_eager = DEAD_REDIS, False
    _reset_producer_pool(app)
    try:
        yield
    finally:
        app.conf.broker_url, app.conf.task_always_eager = previous
        _reset_producer_pool(app)


@pytest.mark.celery_worker
@pytest.mark.slow
def test_jobs_submitted_during_an_outage_are_sent_by_the_beat_once_redis_is_back(transactional_db, settings, tmp_path, caplog):
    settings.MEDIA_ROOT = tmp_path / "media"
    campaign = make_scoring_campaign("outage", n_documents=2, with_references=False)
    with dead_broker():
        assert not broker_available(timeout=1)
        job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)  # commits; the send fails
        upload = ImportJob(format="jsonl", campaign_slug="outage-import", original_name="d.jsonl")
        upload.file.save("d.jsonl", ContentFile(json.dumps({"id": "d1", "text": "A text.", "summaries": [{"system": "s", "text": "S."}]}).encode() + b"\n"), save=False)
        upload.save()
        dispatch_import_job(upload.pk)  # outside a transaction: sent at once, and fails
    assert "could not queue" in caplog.text
    assert job.chunks.filter(dispatched_at__isnull=True).count() == 2 and job.status == JobStatus.PENDING
    assert ImportJob.objects.get(pk=upload.pk).dispatched_at is None

    env = {**WORKER_ENV, "FACTLAB_MEDIA_ROOT": str(settings.MEDIA_ROOT)}  # the worker reads the upload there
    with broker(redis_db=5), CeleryWorker(broker_url=redis_url(5), env=env) as worker:
        healed = heal_scoring_jobs()
        assert sorted(healed["undispatched"]) == sorted(job.chunks.values_list("id", flat=True))
        assert heal_import_jobs() == [upload.pk]
        wait_for(lambda: job_finished(job), timeout=60, what="the job sent by the beat", workers=[worker])
        wait_for(lambda: ImportJob.objects.get(pk=upload.pk).status != ImportStatus.PENDING and ImportJob.objects.get(pk=upload.pk).finished_at, timeout=60, what="the import", workers=[worker])
        upload.refresh_from_db()
        assert upload.status == ImportStatus.SUCCEEDED, upload.error
        assert heal_scoring_jobs() == {"orphaned": [], "undispatched": [], "stale": []}  # nothing left to heal
    assert (job.status, job.done) == (JobStatus.DONE, 4)
    assert_scored_once(job, {"test_words"}, sorted(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True)))


@pytest.mark.celery_worker
@pytest.mark.slow
def test_a_dead_workers_chunk_is_requeued_within_seconds_not_after_the_visibility_timeout(transactional_db, tmp_path):
    campaign = make_scoring_campaign("dead-worker", n_documents=2, with_references=False)
    config = {"state_dir": str(tmp_path), "sleep_on_call": 1, "seconds": 300}
    url = redis_url(6)
    with broker(redis_db=6):
        first = CeleryWorker(broker_url=url, env=WORKER_ENV)  # default visibility timeout: one hour
        try:
            first.start()
            job = submit_scoring_job(metric="test_sleepy", config=config, campaign=campaign, chunk_size=2)
            wait_for((tmp_path / "sleeping").exists, timeout=60, what="the slow chunk to start", workers=[first])
            slow = job.chunks.get(status=ChunkStatus.RUNNING)
            assert is_running(SCORING_CHUNK_LOCK, slow.pk)
            assert requeue_orphaned_chunks(timedelta(0)) == []  # a live worker's chunk is left alone
            first.kill()
        finally:
            first.stop()
        killed_at = time.monotonic()
        wait_for(lambda: not is_running(SCORING_CHUNK_LOCK, slow.pk), timeout=30, what="the dead worker's lock to go")
        with CeleryWorker(broker_url=url, env=WORKER_ENV) as second:
            assert heal_scoring_jobs()["orphaned"] == [slow.pk]
            wait_for(lambda: job_finished(job), timeout=60, what="the requeued chunk", workers=[second])
    assert job.status == JobStatus.DONE and (job.done, job.failed) == (4, 0), job.error
    assert time.monotonic() - killed_at < 90  # minutes at most, against the one-hour visibility timeout
    slow.refresh_from_db()
    assert slow.status == ChunkStatus.DONE and slow.attempts == 2


@pytest.mark.django_db
def test_the_beat_expires_stale_assignments():
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker()
    qualify(worker, campaign)
    from annotate.services.assignments import request_assignment

    assignment = request_assignment(worker, campaign)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert expire_stale_assignments() == 1
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.EXPIRED


def test_the_beat_schedule_covers_every_healing_task(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks == {
        "metrics_service.tasks.heal_scoring_jobs", "annotate.heal_import_jobs",
        "annotate.expire_stale_assignments", "annotate.purge_import_uploads", "annotate.heal_page_preparations",
        "metrics_service.refit_adaptive_labels",
    }
    from factlab.celery import app

    app.loader.import_default_modules()
    assert tasks <= set(app.tasks)
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] == settings.FACTLAB_SCORING_STALE_SECONDS


# --- Redis down: a separate process whose Redis address answers nothing

OUTAGE_SCRIPT = r"""
import json, django
django.setup()
from django.test import Client
from annotate.models import Assignment, ImportJob
from metrics_service.models import ScoringJob
from tests.guarantee_support import frank_answers as answers_for

out = {}
browser = Client()
out["login"] = browser.post("/accounts/login/", {"username": "outage-admin", "password": "outage-pass-123"}).status_code
token = Client().post("/api/auth/token/", {"username": "outage-admin", "password": "outage-pass-123"}, content_type="application/json")
out["token"] = token.status_code
auth = {"HTTP_AUTHORIZATION": "Token " + token.json()["token"]}
api = Client()
out["report"] = api.get("/api/campaigns/outage/report/", **auth).status_code
out["dashboard"] = browser.get("/campaigns/outage/dashboard/").status_code
job = api.post("/api/campaigns/outage/scoring-jobs/", {"metric": "rouge"}, content_type="application/json", **auth)
out["scoring"] = [job.status_code, job.json().get("detail", ""), ScoringJob.objects.count()]
from django.core.files.uploadedfile import SimpleUploadedFile
upload = api.post("/api/imports/", {"file": SimpleUploadedFile("d.jsonl", b"{}"), "format": "jsonl", "campaign": "x"}, **auth)
out["import"] = [upload.status_code, ImportJob.objects.count()]
worker = Client()
worker.post("/accounts/login/", {"username": "outage-worker", "password": "outage-worker-123"})
assignment = Assignment.objects.get(worker__user__username="outage-worker")
submit = worker.post(f"/c/outage/frank/task/{assignment.pk}/submit/", {**answers_for(assignment), "submission_key": "k"}, content_type="application/json")
assignment.refresh_from_db()
out["submit"] = [submit.status_code, assignment.status]
print("RESULT " + json.dumps(out))
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.production_password_hashing  # its users sign in to a process of production settings
def test_with_redis_down_the_site_works_and_broker_jobs_answer_503(django_user_model):
    from annotate.services.assignments import request_assignment

    campaign = make_campaign(entity_check_enabled=False, trap_rate=0.0)
    Campaign.objects.filter(pk=campaign.pk).update(slug="outage")
    campaign.refresh_from_db()
    make_document(campaign)
    django_user_model.objects.create_user("outage-admin", password="outage-pass-123", is_staff=True)
    worker = make_worker("outage-worker", password="outage-worker-123")
    request_assignment(worker, campaign)

    # An explicit cache location would outlive the outage: the cache must follow the dead broker here.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CELERY_")) and k != "FACTLAB_CACHE_URL"}
    env.update(
        DATABASE_URL=worker_database_url(), REDIS_URL=DEAD_REDIS, CELERY_BROKER_URL=DEAD_REDIS, CELERY_TASK_ALWAYS_EAGER="0",
        FACTLAB_LOG_LEVEL="WARNING", DJANGO_SETTINGS_MODULE="factlab.settings",
    )
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", OUTAGE_SCRIPT], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    elapsed = time.monotonic() - started
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = json.loads(line[len("RESULT "):])
    assert out["login"] == 302 and out["token"] in (200, 201)
    assert out["report"] == 200 and out["dashboard"] == 200
    assert out["scoring"][0] == 503 and "task queue (Redis) cannot be reached" in out["scoring"][1] and out["scoring"][2] == 0
    assert out["import"] == [503, 0]
    assert out["submit"] == [200, AssignmentStatus.SUBMITTED], proc.stderr[-3000:]
    assert "failing open" in proc.stderr  # the rate limits said so in the log
    assert elapsed < 120
