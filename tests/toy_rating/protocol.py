"""The toy rating protocol on the shared workflow: one item per summary, answered with a rating of 1 to 5.

Gold: a summary's imported ``human_scores["rating"]`` (or a ``GoldRating`` set otherwise) makes its item a control
item; a worker's rating is right when it falls on the gold's side (4-5 faithful, 1-2 not; a gold 3 scores
nothing). The shared quality rules, bonuses, exports and report read the answers through the hooks below.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar

from annotate.models import Assignment, Campaign, Item
from annotate.presentation import article_blocks, present_article
from annotate.protocols.base import AnswerRows, GoldTally, Protocol, ReportSection, SubmissionResult, TaskPage
from annotate.services.errors import InvalidSubmission

from .models import HIGHEST, LOWEST, GoldRating, Rating


def gold_side(score: int) -> bool | None:
    """Whether a rating says the summary is faithful (True), not (False), or sits on the fence (None).

    Examples
    --------
    >>> [gold_side(s) for s in (1, 3, 5)]
    [False, None, True]
    """
    return True if score >= 4 else False if score <= 2 else None


def parse_rating(payload: dict[str, Any]) -> int:
    """The submitted rating, or ``InvalidSubmission`` naming the field."""
    rating = payload.get("rating")
    if isinstance(rating, bool) or not isinstance(rating, int) or not LOWEST <= rating <= HIGHEST:
        raise InvalidSubmission(f"rating must be a whole number from {LOWEST} to {HIGHEST}, not {rating!r}.",
                                field_errors={"rating": f"expected {LOWEST} to {HIGHEST}"})
    return rating


class RatingProtocol(Protocol):
    kind = "rating"
    label = "Toy: rate a summary from 1 to 5"
    family = "rating"
    urls_module = "tests.toy_rating.urls"
    task_url_name = "rating-task"
    labels_sentences = False  # a rating per summary: no sentence labels for the label models to aggregate
    unit_words = ("summary", "summaries")
    terms: ClassVar[dict[str, str | None]] = {
        "items": "Summaries", "items_csv": "summaries", "trap_score": "Control score", "entity": None,
        "too_fast": "Too fast", "judgements_csv": None, "items_done": "Summaries",
    }
    campaign_defaults: ClassVar[Mapping[str, object]] = {
        "tutorial_required": False, "qualification_required": False, "redundancy": 2, "trap_rate": 0.0,
        "entity_check_enabled": False,
    }
    answer_row_kinds: ClassVar[Mapping[str, AnswerRows]] = {"ratings": AnswerRows("one row per rating of a summary", {"rating": "int64"})}

    def document_items(self, store, document) -> None:
        for summary in document.summaries.filter(is_reference=False).order_by("pk"):
            store.item(document, summary)

    nothing_left = "There is no summary left for you to rate."

    def task_page(self, campaign: Campaign, assignment: Assignment) -> TaskPage:
        """The summary and its article (the shared task view adds the submit URL and key): never its gold rating."""
        summary = assignment.item.summary
        document = summary.document
        return TaskPage("toy_rating/task.html", {}, {
            "summary_text": summary.text, "scores": range(LOWEST, HIGHEST + 1),
            "blocks": article_blocks(present_article(document.sentences or [document.text])),
        })

    def worker_rules(self, campaign: Campaign) -> dict[str, bool]:
        return {"traps": self.has_gold(campaign), "checks": False, "entity_check": False, "review": False}

    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        score = parse_rating(payload)
        Rating.objects.create(assignment=assignment, worker_id=assignment.worker_id, summary=assignment.item.summary, score=score)
        # The speed rule on the server's clock: the campaign's minimum time is per summary here.
        elapsed = (assignment.submitted_at - assignment.created_at).total_seconds()
        assignment.too_fast = elapsed < assignment.item.campaign.min_seconds_per_sentence
        return SubmissionResult(stored_rows=1, too_fast=assignment.too_fast)

    # ------------------------------------------------------------------ gold

    def import_gold(self, campaign: Campaign) -> int:
        if campaign.kind != self.kind:
            return 0
        summaries = Item.objects.filter(campaign=campaign, summary__isnull=False, summary__gold_rating__isnull=True).values_list(
            "summary_id", "summary__human_scores")
        gold = [GoldRating(summary_id=pk, score=int(scores["rating"])) for pk, scores in summaries
                if (scores or {}).get("rating") in range(LOWEST, HIGHEST + 1)]
        GoldRating.objects.bulk_create(gold, ignore_conflicts=True)
        return len(gold)

    def has_gold(self, campaign: Campaign) -> bool:
        return GoldRating.objects.filter(summary__items__campaign=campaign).exists()

    def control_item_ids(self, campaign: Campaign, documents: list[int] | None) -> set[int]:
        items = Item.objects.filter(campaign=campaign, summary__gold_rating__isnull=False)
        if documents is not None:
            items = items.filter(document_id__in=documents)
        return set(items.values_list("pk", flat=True))

    def gold_tallies(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> list[GoldTally]:
        ratings = Rating.objects.filter(worker_id=worker_id, assignment__item__campaign=campaign, summary__gold_rating__isnull=False)
        if until is not None:
            ratings = ratings.filter(assignment__submitted_at__lte=until)
        if assignment_id is not None:
            ratings = ratings.filter(assignment_id=assignment_id)
        tallies = []
        for score, gold, at in ratings.values_list("score", "summary__gold_rating__score", "assignment__submitted_at"):
            expected = gold_side(gold)
            if expected is not None:
                tallies.append(GoldTally(expected, int(gold_side(score) is expected), 1, at=at))
        return tallies

    # ------------------------------------------------------------------ what reads answers

    def answer_rows(self, campaign: Campaign, kind: str, export_filters, name: Callable[[int | None], str | None]) -> Iterable[dict[str, Any]]:
        ratings = Rating.objects.filter(assignment__item__campaign=campaign).order_by("pk").values(
            "summary_id", "summary__system", "summary__document__external_id", "summary__document__dataset",
            "summary__document__split", "worker_id", "score", "created_at")
        for r in ratings:
            yield {
                "record_type": "rating", "campaign": campaign.slug, "document_id": r["summary__document__external_id"],
                "dataset": r["summary__document__dataset"], "split": r["summary__document__split"], "summary_id": r["summary_id"],
                "system": r["summary__system"], "worker": name(r["worker_id"]), "source": "collected", "rating": r["score"],
                "created_at": r["created_at"].isoformat(),
            }

    def report_sections(self, campaign: Campaign) -> list[ReportSection]:
        rows = list(Rating.objects.filter(assignment__item__campaign=campaign).values_list("worker_id", "summary_id", "score"))
        return [ReportSection(
            "Ratings", {"ratings": len(rows), "workers": len({w for w, _, _ in rows}), "summaries": len({s for _, s, _ in rows})},
            "Krippendorff's alpha (ordinal)", rating_alpha(rows),
        )]


def rating_alpha(rows: list[tuple[int, int, int]]) -> float | None:
    """Krippendorff's alpha (ordinal) of ``(worker, summary, rating)`` rows; None without two values to tell apart.

    Examples
    --------
    >>> rating_alpha([(1, 10, 5), (2, 10, 5), (1, 11, 1), (2, 11, 1)])
    1.0
    >>> rating_alpha([(1, 10, 5), (2, 10, 5)]) is None
    True
    """
    import krippendorff
    import numpy as np

    workers = sorted({w for w, _, _ in rows})
    summaries = sorted({s for _, s, _ in rows})
    if len({r for _, _, r in rows}) < 2:
        return None
    matrix = np.full((len(workers), len(summaries)), np.nan)
    for worker, summary, score in rows:
        matrix[workers.index(worker), summaries.index(summary)] = score
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))
