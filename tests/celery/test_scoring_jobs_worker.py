"""Scoring jobs through real Celery worker subprocesses on the suite's Redis (dbs 3 and 4).

The data is committed (``transactional_db``) so the worker, connected to the same test database, sees it.
"""
from __future__ import annotations

import time

import pytest

from annotate.models import Campaign, Document, MetricScore, Summary
from metrics_service.models import ChunkStatus, JobStatus, ScoringJob
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.jobs import submit_scoring_job
from tests.celery_helpers import (
    EXTRA_SCORERS_ENV,
    TEST_SCORERS,
    CeleryWorker,
    broker,
    redis_url,
    wait_for,
)
from tests.tiny_models import tiny_seq2seq_dir  # noqa: F401 - fixture

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

WORKER_ENV = {"FACTLAB_EXTRA_SCORERS": EXTRA_SCORERS_ENV, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(autouse=True)
def _test_scorers(monkeypatch):
    for name, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, name, target)


def make_campaign(slug: str, n_documents: int, with_references: bool) -> Campaign:
    campaign = Campaign.objects.create(slug=slug, name=slug)
    for d in range(n_documents):
        doc = Document.objects.create(
            campaign=campaign, external_id=f"{slug}-{d}",
            text=f"Officials in town {d} said the bridge would reopen on Monday after repairs. Traffic was diverted.",
        )
        if with_references:
            Summary.objects.create(document=doc, system="reference", text=f"The bridge in town {d} reopens Monday.", is_reference=True)
        Summary.objects.create(document=doc, system="bart", text=f"The bridge in town {d} will reopen on Monday.")
        Summary.objects.create(document=doc, system="pgn", text=f"Officials in town {d} closed the bridge on Friday.")
    return campaign


def job_finished(job: ScoringJob) -> bool:
    job.refresh_from_db()
    return job.is_finished


def assert_scored_once(job: ScoringJob, outputs: set[str], summary_ids: list[int]) -> None:
    rows = list(MetricScore.objects.filter(config_key=job.config_key, metric__in=outputs).values_list("summary_id", "metric", "job_id"))
    assert len(rows) == len(set(rows)) == len(outputs) * len(summary_ids)
    assert {sid for sid, _, _ in rows} == set(summary_ids)
    assert {jid for _, _, jid in rows} == {job.pk}


def test_rouge_and_coco_jobs_run_on_a_real_worker(transactional_db, tiny_seq2seq_dir):  # noqa: F811
    campaign = make_campaign("worker-real", n_documents=3, with_references=True)
    ids = sorted(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    systems = sorted(Summary.objects.filter(document__campaign=campaign, is_reference=False).values_list("id", flat=True))
    with broker(redis_db=3), CeleryWorker(broker_url=redis_url(3), env=WORKER_ENV) as worker:
        rouge = submit_scoring_job(metric="rouge", campaign=campaign, chunk_size=4)
        coco = submit_scoring_job(metric="coco", config={"model": str(tiny_seq2seq_dir), "masks": ["sent"]}, campaign=campaign, chunk_size=5)
        assert (rouge.queue, coco.queue) == ("cpu", "gpu")
        wait_for(lambda: job_finished(rouge) and job_finished(coco), timeout=120, what="the ROUGE and CoCo jobs", workers=[worker])

    assert (rouge.status, rouge.done, rouge.total) == (JobStatus.DONE, 9, 9), rouge.error
    assert (coco.status, coco.done, coco.total) == (JobStatus.DONE, 9, 9), coco.error
    assert worker.log().count("Task metrics_service.tasks.score_chunk[") >= 2 * (3 + 2)  # received + succeeded, 5 chunks
    assert_scored_once(coco, {"coco_sent"}, ids)
    from metrics_service.scorers import get_scorer

    scorer = get_scorer("rouge")
    free = {n for n in scorer.output_names if MetricScore.objects.filter(summary_id=ids[0], metric=n, config_key=rouge.config_key).exists()}
    reference_based = set(scorer.output_names) - free
    assert reference_based, "references must not get reference-based ROUGE outputs against themselves"
    assert_scored_once(rouge, reference_based, systems)
    assert_scored_once(rouge, free, ids)
    assert rouge.skipped == 3  # the three references


def test_a_killed_worker_loses_only_its_chunk_which_is_retried(transactional_db, tmp_path):
    campaign = make_campaign("worker-kill", n_documents=3, with_references=False)
    ids = sorted(Summary.objects.filter(document__campaign=campaign).values_list("id", flat=True))
    # Chunk 1 (the worker's second call) sleeps; every later call, the retry of chunk 1 included, is fast.
    config = {"state_dir": str(tmp_path), "sleep_on_call": 2, "seconds": 120}
    # Redis gives an unacknowledged message to another worker once it is older than the visibility
    # timeout; the new worker looks for such messages every second here.
    env = {**WORKER_ENV, "CELERY_VISIBILITY_TIMEOUT": "4", "CELERY_UNACKED_RESTORE_INTERVAL": "1", "CELERY_UNACKED_RESTORE_THROTTLE": "1"}
    url = redis_url(4)
    with broker(redis_db=4):
        first = CeleryWorker(broker_url=url, env=env)
        try:
            first.start()
            job = submit_scoring_job(metric="test_sleepy", config=config, campaign=campaign, chunk_size=2)
            chunks = list(job.chunks.order_by("index"))
            wait_for((tmp_path / "sleeping").exists, timeout=60, what="the slow chunk to start", workers=[first])
            first.kill()
        finally:
            first.stop()
        slow = chunks[1]
        slow.refresh_from_db()
        assert slow.status == ChunkStatus.RUNNING and slow.attempts == 1
        assert MetricScore.objects.filter(summary_id__in=slow.summary_ids).count() == 0  # nothing of the killed chunk
        assert MetricScore.objects.filter(summary_id__in=chunks[0].summary_ids, job_id=job.pk).count() == 2
        killed_at = time.monotonic()

        with CeleryWorker(broker_url=url, env=env) as second:
            wait_for(lambda: job_finished(job), timeout=60, what="the job to complete after the restart", workers=[first, second])

    assert job.status == JobStatus.DONE and (job.done, job.failed) == (6, 0), job.error
    slow.refresh_from_db()
    assert slow.status == ChunkStatus.DONE and slow.attempts == 2
    assert len((tmp_path / "calls").read_text().splitlines()) == 4  # chunk 0, chunk 1 (killed), chunk 2, chunk 1 again
    assert_scored_once(job, {"test_sleepy_chars"}, ids)
    for row in MetricScore.objects.filter(job_id=job.pk).select_related("summary"):
        assert row.value == float(len(row.summary.text))
    assert time.monotonic() - killed_at < 60
