"""Refits of a campaign's label model asked for by a person (the dashboard's button, the API).

Submissions refit adaptive campaigns by themselves (``annotate.services.adaptive``); a campaign whose
judgements were imported (FRANK's or QAGS's released annotations) or collected without adaptive redundancy
gets its stored sentence labels, posteriors and intervals, which the exports' ``label_*`` columns carry,
when someone asks. The refit runs on a worker (task ``metrics_service.refit_labels``), never in the request.
"""
from __future__ import annotations

from django.core.cache import cache
from django.db.models import Count, Max

from annotate.models import Campaign, SentenceJudgement, SentenceLabel
from annotate.protocols import protocol_for
from factlab.jobs import send_after_commit, task_named

REFIT_TASK = "metrics_service.refit_labels"
# A second request within this many seconds joins the refit already queued instead of queueing another.
REQUEST_WINDOW_SECONDS = 60


def _requested_key(campaign: Campaign) -> str:
    return f"factlab:label-refit-requested:{campaign.pk}"


def label_state(campaign: Campaign) -> dict:
    """What the stored labels are: how many, by which model, when last refitted, and whether judgements
    arrived since (``stale``), or another model is chosen now."""
    labels = SentenceLabel.objects.filter(summary__document__campaign=campaign)
    stored = labels.aggregate(n=Count("pk"), refitted_at=Max("updated_at"))
    methods = sorted(set(labels.values_list("method", flat=True).distinct()))
    judgements = SentenceJudgement.objects.filter(summary__document__campaign=campaign).aggregate(n=Count("pk"), latest=Max("created_at"))
    stale = bool(judgements["n"]) and (
        stored["refitted_at"] is None or judgements["latest"] > stored["refitted_at"] or methods != [campaign.label_model]
    )
    return {
        "label_model": campaign.label_model,
        "labels": stored["n"],
        "methods": methods,
        "judgements": judgements["n"],
        "refitted_at": stored["refitted_at"].isoformat() if stored["refitted_at"] else None,
        "stale": stale,
        "queued": cache.get(_requested_key(campaign)) is not None,
    }


class RefitRefused(ValueError):
    """The campaign's work is not sentence labels (e.g. BUMP's edits): there is no label model to fit."""


def request_label_refit(campaign: Campaign) -> bool:
    """Queue a refit of the campaign's label model once the caller's transaction commits; False when one
    asked for in the last ``REQUEST_WINDOW_SECONDS`` is still to come (it will see the same data)."""
    if not protocol_for(campaign.kind).labels_sentences:
        raise RefitRefused(f"a {campaign.kind} campaign has no sentence labels to refit: its workers do not label sentences")
    if not cache.add(_requested_key(campaign), 1, timeout=REQUEST_WINDOW_SECONDS):
        return False
    task = task_named(REFIT_TASK)
    send_after_commit(lambda: task.apply_async(args=[campaign.pk]), what=f"label refit of campaign {campaign.slug}")
    return True


def refit_done(campaign: Campaign) -> None:
    """Called by the refit task when it finishes: a new request may queue the next one."""
    cache.delete(_requested_key(campaign))
