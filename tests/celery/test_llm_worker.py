"""The LLM judge and the LLM annotator through a real Celery worker subprocess (the suite's Redis, db 9),
which calls the local OpenAI-compatible test server over HTTP like a deployment calls vLLM."""
from __future__ import annotations

import pytest

from annotate.models import JudgementSource, MetricScore, SentenceJudgement, Summary
from metrics_service.llm_annotation import submit_llm_annotation
from metrics_service.models import JobStatus, ScoringJob
from metrics_service.scoring.jobs import submit_scoring_job
from tests.celery_helpers import CeleryWorker, broker, redis_url, wait_for
from tests.llm_server import llm_env, llm_server  # noqa: F401 (fixtures)
from tests.tiny_models import tiny_causal_lm_dir  # noqa: F401 (fixture)

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]


def _finished(*jobs: ScoringJob) -> bool:
    for job in jobs:
        job.refresh_from_db()
    return all(job.is_finished for job in jobs)


def test_llm_jobs_run_on_a_real_worker(transactional_db, llm_env):  # noqa: F811
    from tests.factories import ARTICLE, make_campaign, make_document

    campaign = make_campaign()
    for k in range(2):
        make_document(campaign, article=[f"Report number {k}.", *ARTICLE], item=False)
    summaries = list(Summary.objects.filter(document__campaign=campaign).order_by("id"))
    n_sentences = sum(len(s.sentences) for s in summaries)
    before = len(llm_env.requests)
    # The worker inherits FACTLAB_LLM_BASE_URL / _MODEL / _CACHE from this process's environment.
    with broker(redis_db=9), CeleryWorker(broker_url=redis_url(9), queues=("cpu",)) as worker:
        judge = submit_scoring_job(metric="llm_judge", config={"concurrency": 2}, campaign=campaign, chunk_size=2)
        annotate = submit_llm_annotation(campaign=campaign, chunk_size=2)
        assert judge.queue == annotate.queue == "cpu"
        wait_for(lambda: _finished(judge, annotate), timeout=300, what="the LLM jobs", workers=[worker])
    assert (judge.status, judge.done) == (JobStatus.DONE, len(summaries)), judge.error
    assert (annotate.status, annotate.done) == (JobStatus.DONE, len(summaries)), annotate.error
    assert MetricScore.objects.filter(metric="llm_judge", job_id=judge.pk).count() == len(summaries)
    assert SentenceJudgement.objects.filter(source=JudgementSource.MODEL).count() == n_sentences
    assert len(llm_env.requests) - before == len(summaries) + n_sentences
