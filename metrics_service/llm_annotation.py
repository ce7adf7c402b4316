"""An LLM as a FRANK annotator: judgements stored like a person's, by a clearly marked pseudo-worker.

* :func:`submit_llm_annotation` — a scoring job (metric ``llm_frank``, chunked and resumable like every
  scoring job; the cpu queue since the model runs in the LLM server) over the campaign's system summaries;
* :func:`annotate_chunk` — what a chunk runs: one request per summary sentence (the stored sentences the
  humans judged, so indices line up), validated JSON answers; the chunk's ``SentenceJudgement`` rows are
  replaced in the transaction that marks it done, with ``source="model"`` and the worker of
  :func:`llm_worker`. A summary whose answers stay unusable fails the chunk with the validation error
  (Celery retries it; answers already obtained come from the response cache).

Model judgements never enter human aggregates (``selectors.judgements_frame`` leaves them out unless
asked); the report compares them with the humans (``report`` section ``llm_annotators``).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotate.models import (
    Campaign,
    JudgementSource,
    MetricScore,
    MetricSource,
    SentenceJudgement,
    Summary,
    Worker,
)
from annotate.protocols import protocol_for
from metrics_service.scorers import ScorerError
from metrics_service.scorers.llm import LLMAnswerError

from .models import ScoringJob
from .scoring import jobs, registry

LLM_PROVIDER = "llm"
LLM_METRIC = "llm_frank"


def llm_worker(model: str) -> Worker:
    """The pseudo-worker of ``model``: provider ``llm``, shown as ``llm:<model>``, and no usable password."""
    external_id = f"llm:{model}"[:200]
    worker = Worker.objects.filter(provider=LLM_PROVIDER, external_id=external_id).first()
    if worker is not None:
        return worker
    with transaction.atomic():
        username = "llm-annotator-" + hashlib.sha1(model.encode()).hexdigest()[:12]
        user, _ = get_user_model().objects.get_or_create(username=username)
        if user.has_usable_password():
            user.set_unusable_password()
            user.save(update_fields=["password"])
        worker, _ = Worker.objects.get_or_create(provider=LLM_PROVIDER, external_id=external_id, defaults={"user": user})
    return worker


def annotation_targets(campaign: Campaign) -> list[int]:
    """The summaries a person annotates in a FRANK campaign: system summaries (no references, no edits)."""
    if protocol_for(campaign.kind).family != "frank":
        raise ValueError(f"campaign {campaign.slug!r} is a {campaign.kind} campaign; the LLM annotator does the FRANK task")
    ids = list(
        Summary.objects.filter(document__campaign=campaign, is_reference=False, edited_from__isnull=True)
        .order_by("id").values_list("id", flat=True)
    )
    if not ids:
        raise ValueError(f"campaign {campaign.slug!r} has no system summaries to annotate")
    return ids


def submit_llm_annotation(
    *, campaign: Campaign, model: str | None = None, config: dict[str, Any] | None = None, user=None,
    chunk_size: int = 16, sync: bool = False, progress: Callable[[ScoringJob], None] | None = None,
) -> ScoringJob:
    """Start the LLM annotator on ``campaign`` (``model`` or ``FACTLAB_LLM_MODEL``); ``ValueError`` on bad input."""
    config = dict(config or {})
    if model:
        config["model"] = model
    return jobs.submit_scoring_job(
        metric=LLM_METRIC, config=config, campaign=campaign, summary_ids=annotation_targets(campaign),
        user=user, chunk_size=chunk_size, sync=sync, progress=progress,
    )


def annotate_chunk(job: ScoringJob, summary_ids: Sequence[int]) -> tuple[list[MetricScore], int, Callable[[], None]]:
    """Judge every sentence of the chunk's summaries; the rows (``llm_frank_factual``) and the judgement store."""
    if job.campaign_id is not None and protocol_for(job.campaign.kind).family != "frank":
        # Submitted as a plain metric on another protocol's campaign: FRANK labels would not belong there.
        raise ScorerError(f"campaign {job.campaign.slug!r} is a {job.campaign.kind} campaign; the LLM annotator does the FRANK task")
    scorer = registry.cached_scorer(job)
    summaries = list(Summary.objects.filter(pk__in=summary_ids).select_related("document").order_by("id"))
    sentence_lists = [list(s.sentences) or [s.text] for s in summaries]
    verdicts = scorer.judge_summaries([s.document.text for s in summaries], sentence_lists)
    failed = [(s.pk, v) for s, v in zip(summaries, verdicts) if isinstance(v, LLMAnswerError)]
    if failed:
        raise LLMAnswerError(f"{len(failed)} summary(ies) got unusable answers; summary {failed[0][0]}, {failed[0][1]}")
    rows = [
        MetricScore(summary_id=s.pk, metric="llm_frank_factual", config_key=job.config_key,
                    value=sum(v.factual for v in vs) / len(vs), source=MetricSource.COMPUTED, job_id=job.pk)
        for s, vs in zip(summaries, verdicts) if vs
    ]

    def store() -> None:
        worker = llm_worker(scorer.endpoint.model)
        SentenceJudgement.objects.filter(worker=worker, summary_id__in=[s.pk for s in summaries]).delete()
        SentenceJudgement.objects.bulk_create(
            SentenceJudgement(summary_id=s.pk, sentence_index=v.sentence_index, worker=worker, factual=v.factual,
                              categories=list(v.categories), source=JudgementSource.MODEL)
            for s, vs in zip(summaries, verdicts) for v in vs
        )

    return rows, 0, store
