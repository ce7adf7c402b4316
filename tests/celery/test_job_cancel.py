"""Cancelling a running job stops it within seconds, not at the end of its current batch or chunk (a real worker on Redis)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotate.models import (
    Campaign,
    Document,
    DocumentPage,
    ImportStatus,
    MetricScore,
    PagePreparation,
    Summary,
)
from annotate.services.imports import import_dataset
from annotate.services.page_preparations import (
    cancel_page_preparation,
    queue_page_preparation,
    retry_page_preparation,
)
from factlab.jobs import (
    PAGE_PREPARATION_LOCK,
    SCORING_CHUNK_LOCK,
    JobCancelled,
    cancel_checkpoint,
    is_running,
)
from metrics_service.models import ChunkStatus
from metrics_service.scorers import REGISTRY
from metrics_service.scoring.jobs import cancel_scoring_job, submit_scoring_job
from tests.celery.test_scoring_jobs_worker import WORKER_ENV
from tests.celery.test_scoring_jobs_worker import make_campaign as make_scoring_campaign
from tests.celery_helpers import TEST_SCORERS, CeleryWorker, broker, redis_url, wait_for

SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"
DB = 12  # broker database of these tests
# How long the page preparation runs before it is cancelled: well under the batch's time even on a fast machine.
RUN_BEFORE_CANCEL_S = 0.5


def test_a_cancel_checkpoint_asks_at_most_once_per_interval():
    asked = []
    checkpoint = cancel_checkpoint(lambda: asked.append(time.monotonic()) or len(asked) >= 3, every=0.2)
    started = time.monotonic()
    with pytest.raises(JobCancelled):
        while time.monotonic() - started < 5:
            checkpoint()
    assert len(asked) == 3 and asked[1] - asked[0] > 0.19 and asked[2] - asked[1] > 0.19


def _campaign_of_copies(slug: str, copies: int) -> Campaign:
    """The FRANK subset's 20 documents, each ``copies`` times (new ids, no entity pool yet): one batch of pages."""
    import_dataset("frank", [SUBSET], campaign_slug=slug, campaign_kind="frank")
    campaign = Campaign.objects.get(slug=slug)
    originals = list(campaign.documents.prefetch_related("summaries"))
    for copy in range(1, copies):
        for document in originals:
            summaries = list(document.summaries.all())
            clone = Document.objects.create(
                campaign=campaign, external_id=f"{document.external_id}-{copy}", dataset=document.dataset, split=document.split,
                text=document.text, sentences=document.sentences, negative_entity=document.negative_entity,
            )
            Summary.objects.bulk_create([
                Summary(document=clone, system=s.system, text=s.text, sentences=s.sentences, is_reference=s.is_reference)
                for s in summaries if s.edited_from_id is None
            ])
    return campaign


@pytest.mark.celery_worker
@pytest.mark.slow
def test_cancelling_a_running_page_preparation_stops_it_within_seconds(transactional_db, settings):
    warm_up = _campaign_of_copies("cancel-warm-up", 1)
    Document.objects.filter(pk__in=list(warm_up.documents.values_list("pk", flat=True))[2:]).delete()
    # Long enough that the cancel comes well inside the batch on a fast machine (about 4 s here for 60).
    campaign = _campaign_of_copies("cancel-me", 3)
    total = campaign.documents.count()
    assert total == 60  # fewer than a batch (200): the old check, between batches, came only at the end
    with broker(redis_db=DB), CeleryWorker(broker_url=redis_url(DB), queues=("cpu",)) as worker:
        # The worker's first preparation loads the NLP pipeline; a running deployment has done so already.
        first = queue_page_preparation(warm_up)
        wait_for(lambda: PagePreparation.objects.get(pk=first.pk).status == ImportStatus.SUCCEEDED, timeout=180,
                 what="the warm-up preparation", workers=[worker])
        run = queue_page_preparation(campaign)
        wait_for(lambda: is_running(PAGE_PREPARATION_LOCK, run.pk), timeout=60, what="the preparation to start", workers=[worker])
        time.sleep(RUN_BEFORE_CANCEL_S)
        cancel_page_preparation(run)
        cancelled = time.monotonic()
        wait_for(lambda: not is_running(PAGE_PREPARATION_LOCK, run.pk), timeout=120, what="the cancelled preparation to stop",
                 workers=[worker])
        stopped_after = time.monotonic() - cancelled
        run.refresh_from_db()
        assert run.status == ImportStatus.CANCELLED and run.done == 0
        assert not DocumentPage.objects.filter(document__campaign=campaign).exists()  # the batch under way is not stored
        # The same batch run to its end, for comparison.
        retried = time.monotonic()
        retry_page_preparation(run)
        wait_for(lambda: PagePreparation.objects.get(pk=run.pk).finished_at is not None, timeout=300,
                 what="the retried preparation", workers=[worker])
        whole_batch = time.monotonic() - retried
    print(f"cancelled preparation stopped after {stopped_after:.1f} s; the whole batch of {total} documents takes {whole_batch:.1f} s")
    assert PagePreparation.objects.get(pk=run.pk).status == ImportStatus.SUCCEEDED
    assert DocumentPage.objects.filter(document__campaign=campaign).count() == total
    # Stopped mid-batch: nothing of the batch was stored (above), and it ended before the batch's run to its end
    # would have (the margin is the whole batch's time less the time it ran before the cancel).
    assert stopped_after < 5 and whole_batch > RUN_BEFORE_CANCEL_S + stopped_after


@pytest.mark.celery_worker
@pytest.mark.slow
def test_cancelling_a_running_scoring_job_stops_its_chunk_within_seconds(transactional_db, monkeypatch):
    for name, target in TEST_SCORERS.items():
        monkeypatch.setitem(REGISTRY, name, target)
    campaign = make_scoring_campaign("cancel-scoring", n_documents=32, with_references=False)
    with broker(redis_db=DB), CeleryWorker(broker_url=redis_url(DB), env=WORKER_ENV, queues=("cpu",)) as worker:
        # One chunk of 64 summaries at a quarter of a second each: 16 s to score it whole.
        job = submit_scoring_job(metric="test_slow", config={"seconds_per_summary": 0.25}, campaign=campaign, chunk_size=64)
        chunk = job.chunks.get()
        assert len(chunk.summary_ids) == 64
        wait_for(lambda: is_running(SCORING_CHUNK_LOCK, chunk.pk), timeout=60, what="the chunk to start", workers=[worker])
        time.sleep(1)
        cancel_scoring_job(job)
        cancelled = time.monotonic()
        wait_for(lambda: not is_running(SCORING_CHUNK_LOCK, chunk.pk), timeout=60, what="the cancelled chunk to stop",
                 workers=[worker])
        stopped_after = time.monotonic() - cancelled
    print(f"cancelled scoring chunk stopped after {stopped_after:.1f} s (16 s to score it whole)")
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.CANCELLED
    assert not MetricScore.objects.filter(config_key=job.config_key).exists()  # nothing half-stored
    assert stopped_after < 5
