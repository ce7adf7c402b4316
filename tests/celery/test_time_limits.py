"""Time limits stop a task in a real worker: a scoring chunk still running at its soft limit is interrupted,
recorded as failed and retried, instead of holding the worker for as long as it would have run."""
from __future__ import annotations

import time

import pytest

from annotate.models import Summary
from metrics_service.models import ChunkStatus, JobStatus, ScoringChunk
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.jobs import submit_scoring_job
from tests.celery.test_scoring_jobs_worker import WORKER_ENV, assert_scored_once, job_finished
from tests.celery.test_scoring_jobs_worker import make_campaign as make_scoring_campaign
from tests.celery_helpers import TEST_SCORERS, CeleryWorker, broker, redis_url, wait_for

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

DB = 13  # broker database of this test


@pytest.fixture(autouse=True)
def _test_scorers(monkeypatch):
    for name, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, name, target)


def test_a_chunk_past_its_soft_limit_is_interrupted_recorded_and_retried(transactional_db, tmp_path, monkeypatch):
    from metrics_service.tasks import score_chunk

    # A task's limits travel in its message from the process that sends it (web and workers share the settings),
    # so this process, which sends the chunk, and the worker both take the short pair.
    monkeypatch.setattr(score_chunk, "soft_time_limit", 3)
    monkeypatch.setattr(score_chunk, "time_limit", 30)
    monkeypatch.setattr(score_chunk, "_exec_options", None)
    campaign = make_scoring_campaign("time-limit", n_documents=2, with_references=False)
    ids = sorted(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    # The first call would sleep two minutes; the retry is fast. The chunk's soft limit is 3 s here.
    config = {"state_dir": str(tmp_path), "sleep_on_call": 1, "seconds": 120}
    env = {**WORKER_ENV, "FACTLAB_TASK_TIME_LIMITS": "metrics_service.tasks.score_chunk=3:30"}
    with broker(redis_db=DB), CeleryWorker(broker_url=redis_url(DB), env=env, pool="prefork") as worker:
        job = submit_scoring_job(metric="test_sleepy", config=config, campaign=campaign, chunk_size=10)
        wait_for((tmp_path / "sleeping").exists, timeout=60, what="the slow call to start", workers=[worker])
        slept_from = time.monotonic()
        chunk = job.chunks.get()
        wait_for(lambda: ScoringChunk.objects.get(pk=chunk.pk).error != "" or job_finished(job), timeout=30,
                 what="the soft limit to stop the chunk", workers=[worker])
        interrupted_after = time.monotonic() - slept_from
        chunk.refresh_from_db()
        first_error = chunk.error
        wait_for(lambda: job_finished(job), timeout=60, what="the retried chunk", workers=[worker])
    assert "SoftTimeLimitExceeded" in first_error and interrupted_after < 20, (first_error, interrupted_after)
    chunk.refresh_from_db()
    assert job.status == JobStatus.DONE and chunk.status == ChunkStatus.DONE and chunk.attempts == 2, job.error
    assert len((tmp_path / "calls").read_text().splitlines()) == 2  # the interrupted call and the retry
    assert_scored_once(job, {"test_sleepy_chars"}, ids)
