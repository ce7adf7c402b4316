"""Read-only queries: aggregated human labels, campaign progress, the worker table.

Aggregation of judgements into FRANK's scores is defined once, in ``annotate.aggregation``.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.db.models import Avg, Count, Q, Sum

from annotate.aggregation import frank_scores
from annotate.models import (
    LIVE_ASSIGNMENT_STATUSES,
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Campaign,
    Item,
    JudgementSource,
    Participation,
    SentenceJudgement,
)
from taxonomies.frank import CODES, data_file_key


def majority(votes: Iterable[bool]) -> bool:
    """True when strictly more than half of ``votes`` are True (a tie is not a majority of errors)."""
    votes = list(votes)
    return sum(votes) * 2 > len(votes)


def summary_factuality(summary_ids: Iterable[int], *, source: str = JudgementSource.COLLECTED) -> dict[int, dict[str, Any]]:
    """Human factuality of each summary from its sentence judgements (``annotate.aggregation.frank_scores``).

    Returns ``{summary_id: {"Factuality": float, <code>: float, ..., "sentences": int, "annotators": int}}``
    (category scores keyed by FRANK code) for summaries with at least one judgement.
    """
    votes: dict[int, list[tuple[int, bool, list[str]]]] = defaultdict(list)
    annotators: dict[int, set[int]] = defaultdict(set)
    rows = SentenceJudgement.objects.filter(summary_id__in=list(summary_ids), source=source).values_list(
        "summary_id", "sentence_index", "worker_id", "factual", "categories"
    )
    for summary_id, index, worker_id, factual, categories in rows:
        votes[summary_id].append((index, factual, categories or []))
        annotators[summary_id].add(worker_id)
    result: dict[int, dict[str, Any]] = {}
    for summary_id, summary_votes in votes.items():
        scores = frank_scores(summary_votes)
        result[summary_id] = {
            "Factuality": scores["Factuality"],
            **{code: scores[data_file_key(code)] for code in CODES},
            "sentences": len({index for index, _, _ in summary_votes}),
            "annotators": len(annotators[summary_id]),
        }
    return result


def campaign_progress(campaign: Campaign) -> dict[str, int]:
    """Items done (with ``redundancy`` submitted assignments) out of all, and assignments by state."""
    items = Item.objects.filter(campaign=campaign, for_experts=False).annotate(
        submitted=Count("assignments", filter=Q(assignments__status=AssignmentStatus.SUBMITTED))
    )
    counts = dict(
        Assignment.objects.filter(item__campaign=campaign).values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    return {
        "items_total": items.count(),
        "items_done": items.filter(submitted__gte=campaign.redundancy).count(),
        "items_started": items.filter(submitted__gt=0).count(),
        "in_flight": counts.get(AssignmentStatus.ACTIVE, 0),
        "submitted": counts.get(AssignmentStatus.SUBMITTED, 0),
        "expired": counts.get(AssignmentStatus.EXPIRED, 0),
        "released": counts.get(AssignmentStatus.RELEASED, 0),
        "too_fast": Assignment.objects.filter(item__campaign=campaign, too_fast=True).count(),
        "judgements_needed": items.count() * campaign.redundancy,
        "live": Assignment.objects.filter(item__campaign=campaign, status__in=LIVE_ASSIGNMENT_STATUSES).count(),
    }


def worker_table(campaign: Campaign) -> list[dict[str, Any]]:
    """One row per worker of the campaign: items, quality figures, blocking, lead time and bonus owed."""
    owed = dict(
        BonusEntry.objects.filter(campaign=campaign, paid_at__isnull=True).values_list("worker_id").annotate(t=Sum("amount")).values_list("worker_id", "t")
    )
    lead = {
        row["worker_id"]: row
        for row in Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.SUBMITTED)
        .values("worker_id")
        .annotate(mean_item=Avg("lead_time_seconds"), too_fast=Count("id", filter=Q(too_fast=True)))
    }
    per_sentence = dict(
        SentenceJudgement.objects.filter(assignment__item__campaign=campaign)
        .values_list("worker_id")
        .annotate(m=Avg("lead_time_seconds"))
        .values_list("worker_id", "m")
    )
    rows = []
    for p in Participation.objects.filter(campaign=campaign).select_related("worker__user").order_by("worker_id"):
        w = p.worker
        rows.append({
            "participation": p,
            "worker": w,
            "name": w.external_id or w.user.get_username(),
            "provider": w.provider or "local",
            "items": p.items_submitted,
            "trap_score": p.trap_score,
            "traps": f"{p.trap_correct}/{p.trap_total}",
            "entity": f"{p.entity_checks - p.entity_failures}/{p.entity_checks}",
            "qualification": p.get_qualification_status_display(),
            "qualification_score": p.qualification_score,
            "blocked": p.is_blocked or w.is_blocked,
            "blocked_reason": p.blocked_reason or w.blocked_reason,
            "seconds_per_item": lead.get(w.pk, {}).get("mean_item"),
            "seconds_per_sentence": per_sentence.get(w.pk),
            "too_fast": lead.get(w.pk, {}).get("too_fast", 0),
            "fast_worker": p.is_fast_worker,
            "owed": owed.get(w.pk, Decimal("0.00")),
        })
    return rows
