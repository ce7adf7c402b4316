"""Scoring jobs in-process (eager Celery): chunking, upserts, references, progress, cancel, retries, admin."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    Campaign,
    Document,
    MetricScore,
    MetricSource,
    Summary,
)
from metrics_service.models import (
    ChunkStatus,
    JobStatus,
    Queue,
    ScoringChunk,
    ScoringJob,
)
from metrics_service.scorers import REGISTRY, ScorerError
from metrics_service.scorers.base import Scorer
from metrics_service.scoring import chunks as scoring_chunks
from metrics_service.scoring import registry
from metrics_service.scoring.chunks import RetryableChunkError, process_chunk, resolve_references
from metrics_service.scoring.healing import requeue_stale_chunks
from metrics_service.scoring.jobs import auto_score_summaries, cancel_scoring_job, job_progress, retry_scoring_job, submit_scoring_job
from tests.celery_helpers import TEST_SCORERS

pytestmark = pytest.mark.django_db


class RefOnlyScorer(Scorer):
    name = "test_refonly"
    needs_references = True
    output_names = ("test_refonly",)

    def score(self, documents, summaries, references=None):
        self._check_lengths(documents, summaries, references)
        return {"test_refonly": [float(len(r) - len(s)) for s, r in zip(summaries, references)]}


class ModelScorer(Scorer):
    name = "test_model"
    uses_model = True
    output_names = ("test_model",)

    def score(self, documents, summaries, references=None):
        return {"test_model": [1.0] * len(summaries)}


class StrictScorer(Scorer):
    """Accepts only ``n`` (a positive integer), like a real scorer validating its options."""

    name = "test_strict"
    output_names = ("test_strict",)

    def __init__(self, n: int = 1):
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        super().__init__(n=n)

    def score(self, documents, summaries, references=None):
        return {"test_strict": [float(self.config["n"])] * len(summaries)}


class BrokenScorer(Scorer):
    """Fails with ``error`` ("runtime": a transient error, "scorer": ScorerError, "length": wrong output size)."""

    name = "test_broken"
    output_names = ("test_broken",)

    def score(self, documents, summaries, references=None):
        kind = self.config.get("error", "runtime")
        if kind == "scorer":
            raise ScorerError("weights not found at /nowhere")
        if kind == "length":
            return {"test_broken": [0.0]}
        raise RuntimeError("CUDA out of memory (simulated)")


LOCAL_SCORERS = {
    "test_refonly": f"{__name__}:RefOnlyScorer",
    "test_model": f"{__name__}:ModelScorer",
    "test_strict": f"{__name__}:StrictScorer",
    "test_broken": f"{__name__}:BrokenScorer",
}


@pytest.fixture(autouse=True)
def _test_scorers(monkeypatch):
    for name, target in {**TEST_SCORERS, **LOCAL_SCORERS}.items():
        monkeypatch.setitem(REGISTRY, name, target)
    registry._SCORER_CACHE.clear()
    yield
    registry._SCORER_CACHE.clear()


@pytest.fixture
def campaign() -> Campaign:
    """Three documents: with a reference and two systems; without reference; with a reference and a BUMP edit."""
    campaign = Campaign.objects.create(slug="jobs", name="Jobs", kind="bump_taxonomy")
    d1 = Document.objects.create(campaign=campaign, external_id="d1", text="the cat sat on the mat today")
    d2 = Document.objects.create(campaign=campaign, external_id="d2", text="a dog barked at night")
    d3 = Document.objects.create(campaign=campaign, external_id="d3", text="rain fell on the city all day")
    ref1 = Summary.objects.create(document=d1, system="reference", text="the cat sat on the mat", is_reference=True)
    Summary.objects.create(document=d1, system="bart", text="the cat sat")
    Summary.objects.create(document=d1, system="pgn", text="a dog sat on the mat")
    Summary.objects.create(document=d2, system="bart", text="a dog barked")
    ref3 = Summary.objects.create(document=d3, system="reference", text="rain fell all day", is_reference=True)
    Summary.objects.create(document=d3, system="human-edit", text="snow fell all day", edited_from=ref3)
    assert ref1.pk
    return campaign


def summary(campaign: Campaign, external_id: str, system: str, edited: bool = False) -> Summary:
    return Summary.objects.get(document__campaign=campaign, document__external_id=external_id, system=system, edited_from__isnull=not edited)


def scores(job: ScoringJob | None = None, metric: str | None = None) -> dict[tuple[int, str], float]:
    qs = MetricScore.objects.all()
    if job is not None:
        qs = qs.filter(config_key=job.config_key)
    if metric is not None:
        qs = qs.filter(metric=metric)
    return {(s.summary_id, s.metric): s.value for s in qs}


def test_job_is_split_into_chunks_and_every_summary_is_scored(campaign):
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)

    assert job.status == JobStatus.DONE and job.finished_at is not None and job.started_at is not None
    assert (job.total, job.done, job.failed) == (6, 6, 0)
    chunks = list(job.chunks.order_by("index"))
    assert [len(c.summary_ids) for c in chunks] == [2, 2, 2]
    assert sorted(i for c in chunks for i in c.summary_ids) == sorted(Summary.objects.values_list("id", flat=True))
    assert all(c.status == ChunkStatus.DONE and c.attempts == 1 for c in chunks)

    words = scores(job, "test_words")
    assert len(words) == 6  # references are scored too (reference-free outputs)
    assert words[(summary(campaign, "d1", "pgn").pk, "test_words")] == 6.0
    overlap = scores(job, "test_ref_overlap")
    # bart and pgn of d1 against d1's reference; the edit against d3's reference; not d2 (no reference), not references.
    assert overlap == {
        (summary(campaign, "d1", "bart").pk, "test_ref_overlap"): 3.0,
        (summary(campaign, "d1", "pgn").pk, "test_ref_overlap"): 4.0,
        (summary(campaign, "d3", "human-edit", edited=True).pk, "test_ref_overlap"): 3.0,
    }
    assert job.skipped == 3  # d2's summary and the two references
    assert "3 without a reference" in job.message
    row = MetricScore.objects.get(summary=summary(campaign, "d1", "bart"), metric="test_words")
    assert (row.source, row.job_id, row.config_key) == (MetricSource.COMPUTED, job.pk, job.config_key)


def test_rerunning_a_job_upserts_without_duplicates(campaign):
    first = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=4)
    count = MetricScore.objects.count()
    bart = summary(campaign, "d1", "bart")
    bart.text = "the cat sat on a red mat"
    bart.save()

    second = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=3)

    assert second.config_key == first.config_key and second.status == JobStatus.DONE
    assert MetricScore.objects.count() == count
    row = MetricScore.objects.get(summary=bart, metric="test_words", config_key=first.config_key)
    assert row.value == 7.0 and row.job_id == second.pk


def test_a_different_configuration_is_stored_beside_the_first(campaign):
    a = submit_scoring_job(metric="test_strict", config={"n": 2}, campaign=campaign)
    b = submit_scoring_job(metric="test_strict", config={"n": 3}, campaign=campaign)
    assert a.config_key != b.config_key
    assert MetricScore.objects.filter(metric="test_strict").count() == 12
    assert set(scores(b).values()) == {3.0}


def test_references_are_resolved_per_summary(campaign):
    d1_ref, d3_ref = summary(campaign, "d1", "reference"), summary(campaign, "d3", "reference")
    # An edit of d1's system summary stored under d2 takes the reference of its source's document.
    cross_edit = Summary.objects.create(
        document=Document.objects.get(external_id="d2"), system="human-edit", text="x", edited_from=summary(campaign, "d1", "pgn")
    )
    found = resolve_references(list(Summary.objects.select_related("edited_from")))
    assert found[summary(campaign, "d1", "bart").pk] == d1_ref
    assert found[summary(campaign, "d3", "human-edit", edited=True).pk] == d3_ref
    assert found[cross_edit.pk] == d1_ref
    assert found[summary(campaign, "d2", "bart").pk] is None
    assert found[d1_ref.pk] is None and found[d3_ref.pk] is None


def test_reference_based_scorer_skips_summaries_without_reference(campaign):
    job = submit_scoring_job(metric="test_refonly", campaign=campaign)
    assert job.status == JobStatus.DONE and job.done == 6 and job.skipped == 3
    assert set(scores(job)) == {
        (summary(campaign, "d1", "bart").pk, "test_refonly"),
        (summary(campaign, "d1", "pgn").pk, "test_refonly"),
        (summary(campaign, "d3", "human-edit", edited=True).pk, "test_refonly"),
    }
    assert "reference-based test_refonly outputs not computed" in job_progress(job)["message"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "no_such_metric"}, "unknown metric 'no_such_metric'"),
        ({"metric": ""}, "metric must be a non-empty scorer name"),
        ({"metric": "test_strict", "config": ["n", 2]}, "must be an object of options, not list"),
        ({"metric": "test_strict", "config": {"n": 0}}, "invalid configuration for metric 'test_strict': n must be a positive integer"),
        ({"metric": "test_strict", "config": {"m": 2}}, "invalid configuration for metric 'test_strict'"),
        ({"metric": "test_strict", "config": {"n": object()}}, "not JSON-serialisable"),
        ({"metric": "test_words", "chunk_size": 0}, "chunk_size must be an integer between 1 and"),
        ({"metric": "test_words", "summary_ids": []}, "summary_ids is empty"),
        ({"metric": "test_words", "summary_ids": ["1"]}, "summary_ids must be a list of integer summary ids"),
        ({"metric": "test_words", "summary_ids": [987654]}, "1 summary id(s) not found in campaign 'jobs': 987654"),
    ],
)
def test_bad_metric_config_or_selection_is_refused_and_nothing_stored(campaign, kwargs, message):
    with pytest.raises(ValueError, match=None) as excinfo:
        submit_scoring_job(campaign=campaign, **kwargs)
    assert message in str(excinfo.value)
    assert ScoringJob.objects.count() == 0 and ScoringChunk.objects.count() == 0 and MetricScore.objects.count() == 0


def test_campaign_or_summaries_are_required_and_an_empty_campaign_is_refused():
    with pytest.raises(ValueError, match="give a campaign or a list of summary ids"):
        submit_scoring_job(metric="test_words")
    empty = Campaign.objects.create(slug="empty", name="Empty")
    with pytest.raises(ValueError, match="campaign 'empty' has no summaries to score"):
        submit_scoring_job(metric="test_words", campaign=empty)


def test_summary_ids_without_campaign_score_only_those(campaign):
    ids = [summary(campaign, "d1", "bart").pk, summary(campaign, "d2", "bart").pk]
    job = submit_scoring_job(metric="test_words", summary_ids=ids)
    assert job.campaign is None and job.total == 2 and job.status == JobStatus.DONE
    assert {sid for sid, _ in scores(job)} == set(ids)


@pytest.fixture
def undispatched(monkeypatch):
    """Submitted chunks stay queued (as if no worker ran yet); tests drive ``process_chunk`` themselves."""
    sent: list[tuple[int, list[int]]] = []
    monkeypatch.setattr(scoring_chunks, "dispatch_after_commit", lambda job, ids: sent.append((job.pk, list(ids))))
    return sent


def test_progress_is_derived_from_chunks_and_not_doubled_by_redelivery(campaign, undispatched):
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=4)
    assert job_progress(job) | {} == {
        "id": job.pk, "metric": "test_words", "config": job.config, "config_key": job.config_key, "status": "pending",
        "done": 0, "total": 6, "failed": 0, "skipped": 0, "percent": 0.0, "message": "0/6 summaries scored", "error": "",
        "created_at": job.created_at.isoformat(), "started_at": None, "finished_at": None,
    }
    first, second = job.chunks.order_by("index")
    assert undispatched == [(job.pk, [first.pk, second.pk])]

    assert process_chunk(first.pk) == ChunkStatus.DONE
    assert process_chunk(first.pk) == ChunkStatus.DONE  # a re-delivered message: left alone
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (JobStatus.RUNNING, 4, 6)
    assert job_progress(job)["percent"] == pytest.approx(66.7)

    # The broker re-delivers a chunk whose worker died while it was "running": it is taken over once.
    ScoringChunk.objects.filter(pk=second.pk).update(status=ChunkStatus.RUNNING, attempts=1, started_at=timezone.now())
    assert process_chunk(second.pk) == ChunkStatus.DONE
    job.refresh_from_db()
    second.refresh_from_db()
    assert (job.status, job.done, second.attempts) == (JobStatus.DONE, 6, 2)
    assert MetricScore.objects.filter(config_key=job.config_key, metric="test_words").count() == 6


def test_cancel_skips_pending_chunks(campaign, undispatched):
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)
    chunks = list(job.chunks.order_by("index"))
    process_chunk(chunks[0].pk)

    job = cancel_scoring_job(job)

    assert job.status == JobStatus.CANCELLED and job.finished_at is not None and job.done == 2
    assert list(job.chunks.order_by("index").values_list("status", flat=True)) == [
        ChunkStatus.DONE, ChunkStatus.CANCELLED, ChunkStatus.CANCELLED,
    ]
    assert process_chunk(chunks[1].pk) == ChunkStatus.CANCELLED  # a queued message arriving later does nothing
    assert {sid for sid, _ in scores(job)} == set(chunks[0].summary_ids)
    assert job_progress(job)["status"] == "cancelled" and "cancelled" in job.message
    assert cancel_scoring_job(job).status == JobStatus.CANCELLED  # idempotent

    done = submit_scoring_job(metric="test_words", campaign=campaign, sync=True)
    with pytest.raises(ValueError, match=f"scoring job {done.pk} already finished \\(done\\)"):
        cancel_scoring_job(done)


def test_a_chunk_running_when_its_job_is_cancelled_stops_before_its_next_scorer_call(campaign, undispatched, monkeypatch):
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=3)
    running, pending = job.chunks.order_by("index")
    compute = scoring_chunks.compute_chunk_scores

    def cancel_meanwhile(job_, ids, checkpoint):
        cancel_scoring_job(job_)  # the admin cancels while this chunk is being scored
        return compute(job_, ids, checkpoint)

    monkeypatch.setattr(scoring_chunks, "compute_chunk_scores", cancel_meanwhile)
    assert process_chunk(running.pk) == ChunkStatus.CANCELLED
    running.refresh_from_db()
    pending.refresh_from_db()
    job.refresh_from_db()
    assert running.status == pending.status == ChunkStatus.CANCELLED
    assert job.status == JobStatus.CANCELLED and job.done == 0
    assert not MetricScore.objects.filter(config_key=job.config_key, metric="test_words").exists()  # nothing half-stored
    assert retry_scoring_job(job).status == JobStatus.RUNNING  # both chunks can be scored again
    assert job.chunks.filter(status=ChunkStatus.PENDING).count() == 2


def test_transient_error_goes_back_to_pending_then_fails_on_the_last_attempt(campaign, undispatched):
    job = submit_scoring_job(metric="test_broken", campaign=campaign, chunk_size=10)
    chunk = job.chunks.get()
    with pytest.raises(RetryableChunkError, match="attempt 1: RuntimeError: CUDA out of memory"):
        process_chunk(chunk.pk, final_attempt=False)
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.PENDING, 1)

    assert process_chunk(chunk.pk, final_attempt=True) == ChunkStatus.FAILED
    job.refresh_from_db()
    assert (job.status, job.done, job.failed) == (JobStatus.FAILED, 0, 6)
    assert "attempt 2: RuntimeError" in job.error and "6 in 1 failed chunk(s)" in job.message
    assert MetricScore.objects.count() == 0


def test_eager_task_failure_marks_the_job_failed_without_raising(campaign):
    job = submit_scoring_job(metric="test_broken", campaign=campaign, chunk_size=4)
    assert job.status == JobStatus.FAILED and job.failed == 6
    assert list(job.chunks.values_list("attempts", flat=True)) == [1, 1]


@pytest.mark.parametrize(("error", "expected"), [("scorer", "ScorerError: weights not found"), ("length", "returned 1 values")])
def test_a_scorer_that_cannot_run_fails_at_once(campaign, undispatched, error, expected):
    job = submit_scoring_job(metric="test_broken", config={"error": error}, campaign=campaign)
    chunk = job.chunks.get()
    expected_status = ChunkStatus.FAILED if error == "scorer" else None
    if expected_status:
        assert process_chunk(chunk.pk, final_attempt=False) == ChunkStatus.FAILED
    else:
        with pytest.raises(RetryableChunkError):
            process_chunk(chunk.pk, final_attempt=False)
        process_chunk(chunk.pk, final_attempt=True)
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.FAILED and expected in chunk.error
    assert MetricScore.objects.count() == 0


def test_a_chunk_that_keeps_killing_its_worker_is_given_up(campaign, undispatched, settings):
    settings.FACTLAB_SCORING_MAX_ATTEMPTS = 3
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=10)
    chunk = job.chunks.get()
    ScoringChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.RUNNING, attempts=3)
    assert process_chunk(chunk.pk) == ChunkStatus.FAILED
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "gave up after 3 attempts" in job.error


def test_requeue_stale_chunks_sends_only_old_running_chunks(campaign, monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr(scoring_chunks, "dispatch_after_commit", lambda job, ids: sent.extend(ids))
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)
    old, recent, queued = job.chunks.order_by("index")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    ScoringChunk.objects.filter(pk=old.pk).update(status=ChunkStatus.RUNNING, started_at=an_hour_ago, attempts=1)
    ScoringChunk.objects.filter(pk=recent.pk).update(status=ChunkStatus.RUNNING, started_at=timezone.now(), attempts=1)
    sent.clear()

    assert requeue_stale_chunks(timedelta(minutes=10)) == [old.pk]
    assert sent == [old.pk]
    old.refresh_from_db()
    assert old.status == ChunkStatus.PENDING and "re-queued" in old.error
    monkeypatch.undo()  # real (eager) dispatch from here on
    monkeypatch.setitem(REGISTRY, "test_words", TEST_SCORERS["test_words"])
    ScoringChunk.objects.filter(pk=old.pk).update(status=ChunkStatus.RUNNING)
    assert requeue_stale_chunks(timedelta(minutes=10)) == [old.pk]
    old.refresh_from_db()
    assert old.status == ChunkStatus.DONE and old.attempts == 2
    assert queued.pk not in sent


def test_model_based_scorers_go_to_the_gpu_queue(campaign, monkeypatch):
    from metrics_service import tasks

    calls = []
    monkeypatch.setattr(tasks.score_chunk, "apply_async", lambda args, queue: calls.append((args, queue)))
    gpu = submit_scoring_job(metric="test_model", campaign=campaign, chunk_size=3)
    cpu = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=6)
    assert (gpu.queue, cpu.queue) == (Queue.GPU, Queue.CPU)
    assert [q for _, q in calls] == ["gpu", "gpu", "cpu"]
    assert [a[0] for a, _ in calls] == [*gpu.chunks.order_by("index").values_list("id", flat=True), cpu.chunks.get().pk]


def test_sync_runs_in_process_and_reports_progress(campaign, monkeypatch):
    monkeypatch.setattr(scoring_chunks, "dispatch_after_commit", lambda *a: pytest.fail("sync must not use the broker"))
    seen = []
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=4, sync=True, progress=lambda j: seen.append(j.done))
    assert job.status == JobStatus.DONE and seen == [4, 6]


def test_auto_score_summaries_follows_the_campaign_setting(campaign):
    bart = summary(campaign, "d1", "bart")
    assert auto_score_summaries(campaign, [bart.pk]) == []
    campaign.auto_score_metrics = ["test_words", {"metric": "test_strict", "config": {"n": 4}}]
    campaign.save()
    assert auto_score_summaries(campaign, []) == []

    jobs = auto_score_summaries(campaign, [bart.pk])

    assert [(j.metric, j.total, j.status) for j in jobs] == [("test_words", 1, "done"), ("test_strict", 1, "done")]
    assert MetricScore.objects.filter(summary=bart).count() == 3
    assert MetricScore.objects.exclude(summary=bart).count() == 0
    campaign.auto_score_metrics = [3]
    with pytest.raises(ValueError, match="auto_score_metrics entry 3"):
        auto_score_summaries(campaign, [bart.pk])


def test_admin_lists_progress_and_cancels_jobs(campaign, undispatched, admin_client):
    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=2)
    process_chunk(job.chunks.order_by("index").first().pk)

    page = admin_client.get("/admin/metrics_service/scoringjob/")
    assert page.status_code == 200
    assert b'<progress max="6" value="2"' in page.content and b"2/6" in page.content
    detail = admin_client.get(f"/admin/metrics_service/scoringjob/{job.pk}/change/")
    assert detail.status_code == 200 and b"chunk" in detail.content.lower()

    response = admin_client.post(
        "/admin/metrics_service/scoringjob/", {"action": "cancel_jobs", "_selected_action": [job.pk]}, follow=True
    )
    assert response.status_code == 200 and b"1 scoring job(s) cancelled." in response.content
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED


def test_campaign_admin_action_reports_a_metric_it_cannot_submit(campaign, admin_client, monkeypatch):
    # ROUGE/BLEU come from the scorers package; a metric that cannot be loaded is reported, not a crash.
    monkeypatch.setitem(REGISTRY, "bleu", "tests.no_such_module:Bleu")
    monkeypatch.setitem(REGISTRY, "rouge", TEST_SCORERS["test_words"])
    response = admin_client.post(
        "/admin/annotate/campaign/", {"action": "score_rouge_bleu", "_selected_action": [campaign.pk]}, follow=True
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert "Jobs: rouge scoring job" in text and "Jobs: bleu not submitted: metric &#x27;bleu&#x27; cannot be loaded" in text
    assert ScoringJob.objects.filter(campaign=campaign, metric="rouge", status=JobStatus.DONE).count() == 1


def test_requeue_stale_chunks_command(campaign, undispatched):
    from io import StringIO

    from django.core.management import CommandError, call_command

    job = submit_scoring_job(metric="test_words", campaign=campaign, chunk_size=6)
    chunk = job.chunks.get()
    ScoringChunk.objects.filter(pk=chunk.pk).update(status=ChunkStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=5))
    out = StringIO()
    call_command("requeue_stale_chunks", "--older-than", "600", stdout=out)
    assert out.getvalue().strip() == "re-queued 0 chunk(s)"
    call_command("requeue_stale_chunks", "--older-than", "60", stdout=out)
    assert f"re-queued 1 chunk(s): {chunk.pk}" in out.getvalue()
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.PENDING
    with pytest.raises(CommandError, match="--older-than must be zero or more seconds"):
        call_command("requeue_stale_chunks", "--older-than", "-1")
