"""Typed error spans on the shared workflow.

One item = a summary with its article. The worker marks the wrong words (each span typed with AggreFact's
unified taxonomy, optionally with a FRANK category) or answers "no error" explicitly. Storing a submission
checks the spans against the summary's words (``annotate.spans.words``) and creates a ``SpanAnswer``. Control
summaries carry gold spans (from imported annotations or set by an admin); answers on them are scored word by
word per class (``annotate.spans.gold``) through the shared quality rules.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar

from django.conf import settings

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import Assignment, Campaign, Item
from annotate.presentation import article_blocks, present_article
from annotate.protocols.base import (
    AnswerRows,
    DatasetFormat,
    ExportStream,
    GoldTally,
    Protocol,
    ReportSection,
    SubmissionResult,
    TaskPage,
)
from annotate.services.errors import InvalidSubmission
from metrics_service.stats.spans import majority_answers
from taxonomies.frank import CATEGORIES as FRANK_CATEGORIES
from taxonomies.frank import CODES as FRANK_CODES

from . import exporter, taxonomy
from . import qualification as span_qualification
from .gold import word_tally
from .importer import import_span_offsets, import_span_records
from .models import AnswerSource, GoldOrigin, GoldSpans, SpanAnswer
from .words import as_json, clean_spans, from_json, spaced_words, words

MAX_SPANS = 50


def parse_answer(word_list: list[str], payload: dict[str, Any]) -> tuple[list, list[str]]:
    """A submitted answer's spans (cleaned) and FRANK categories, or ``InvalidSubmission`` naming the field.

    ``payload``: ``{"no_error": bool, "spans": [{"start": word, "end": word (exclusive), "type": unified type,
    "frank": optional FRANK code}]}``; "no error" must be said explicitly, and never beside a span.
    """
    no_error = payload.get("no_error")
    if not isinstance(no_error, bool):
        raise InvalidSubmission("no_error must be true or false.", field_errors={"no_error": "expected true or false"})
    raw = payload.get("spans", [])
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise InvalidSubmission("spans must be a list of objects.", field_errors={"spans": "expected a list of objects"})
    if no_error and raw:
        raise InvalidSubmission("You answered “no error” and marked spans: choose one.", field_errors={"spans": "no error and spans"})
    if not no_error and not raw:
        raise InvalidSubmission("Mark at least one wrong span, or answer “no error”.", field_errors={"spans": "empty"})
    if len(raw) > MAX_SPANS:
        raise InvalidSubmission(f"At most {MAX_SPANS} spans per summary.", field_errors={"spans": "too many"})
    categories = []
    for k, span in enumerate(raw):
        frank = span.get("frank") or ""
        if frank and frank not in FRANK_CODES:
            raise InvalidSubmission(f"Span {k + 1}: unknown FRANK category {frank!r}.", field_errors={f"spans[{k}].frank": "unknown"})
        categories.append(frank)
    try:
        spans = clean_spans(word_list, [(s.get("start"), s.get("end"), s.get("type")) for s in raw])
    except ValueError as exc:
        raise InvalidSubmission(f"{str(exc)[0].upper()}{str(exc)[1:]}.", field_errors={"spans": str(exc)}) from exc
    return spans, categories


class SpansProtocol(Protocol):
    kind = "spans"
    label = "Typed error spans"
    family = "spans"
    urls_module = "annotate.spans.urls"
    task_url_name = "spans-task"
    qualification_url_name = "spans-qualification"
    tutorial_url_name = "spans-tutorial"
    # The admin campaign page links to the reviewers' gold spans.
    review_url_name = "spans-gold"
    labels_sentences = False  # the answers are word spans: no sentence labels for adaptive redundancy
    terms: ClassVar[dict[str, str | None]] = {
        "items": "Summaries", "items_csv": "summaries", "trap_score": "Control score", "entity": None,
        "too_fast": "Too fast", "judgements_csv": None, "items_done": "Summaries",
    }
    campaign_defaults: ClassVar[Mapping[str, object]] = {
        "tutorial_required": False, "qualification_required": False, "redundancy": 3, "trap_rate": 0.0,
        "entity_check_enabled": False,
    }
    dataset_formats: ClassVar[Mapping[str, DatasetFormat]] = {
        # Released annotations are published: gold derived from them is public (a bonus needs the campaign's own).
        "span_records": DatasetFormat(import_span_records, (".json", ".jsonl"), public_labels="released span annotations"),
        "span_offsets": DatasetFormat(import_span_offsets, (".json", ".jsonl")),
    }
    export_formats: ClassVar[Mapping[str, str]] = {"spans": "span answers as span_offsets JSON lines, with per-summary unified types"}
    answer_row_kinds: ClassVar[Mapping[str, AnswerRows]] = {"span_answer": AnswerRows(
        "one row per span answer (crowd, imported or model): its spans as JSON and the summary's unified types",
        {"no_error": "bool", "n_spans": "int64", "spans": "string", "unified_types": "string"},
    )}
    unit_words = ("summary", "summaries")

    nothing_left = "There is no summary left for you in this campaign."

    def task_page(self, campaign: Campaign, assignment: Assignment) -> TaskPage:
        """The summary's words to select (its article beside them); the page's JSON holds no gold."""
        summary = assignment.item.summary
        document = summary.document
        data = {"assignment": assignment.pk, "words": words(summary.text), "types": [{"code": t.code, "name": t.name} for t in taxonomy.TYPES]}
        return TaskPage("spans/task.html", data, {
            "blocks": article_blocks(present_article(document.sentences or [document.text])), "words": spaced_words(summary.text),
            "types": taxonomy.TYPES, "frank_categories": FRANK_CATEGORIES,
        })

    def worker_rules(self, campaign: Campaign) -> dict[str, bool]:
        return {"traps": self.has_gold(campaign), "checks": False, "entity_check": False, "review": False}

    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        summary = assignment.item.summary
        word_list = words(summary.text)
        spans, categories = parse_answer(word_list, payload)
        SpanAnswer.objects.create(
            summary=summary, source=AnswerSource.CROWD, assignment=assignment, worker_id=assignment.worker_id,
            spans=as_json(spans), n_words=len(word_list), frank_categories=categories,
        )
        # The speed rule on the server's clock, per summary sentence as the campaign's minimum is set.
        elapsed = (assignment.submitted_at - assignment.created_at).total_seconds()
        assignment.too_fast = elapsed / max(len(summary.sentences or [summary.text]), 1) < assignment.item.campaign.min_seconds_per_sentence
        return SubmissionResult(stored_rows=1, too_fast=assignment.too_fast, extra={"spans": len(spans)})

    # ------------------------------------------------------------------ qualification

    @staticmethod
    def _test(campaign: Campaign, participation) -> list:
        return span_qualification.draw_test(settings.SECRET_KEY, campaign.pk, participation.worker_id, participation.qualification_attempts)

    def qualification_form(self, campaign: Campaign, participation, post=None):
        return span_qualification.qualification_form(self._test(campaign, participation), post)

    def parse_qualification(self, campaign: Campaign, participation, post) -> dict[str, Any]:
        return span_qualification.parse(self._test(campaign, participation), post)

    def score_qualification(self, campaign: Campaign, participation, answers: dict[str, Any]) -> float:
        return span_qualification.score(self._test(campaign, participation), answers)

    # ------------------------------------------------------------------ gold

    def import_gold(self, campaign: Campaign) -> int:
        """Imported annotations become gold spans where a summary has none yet (the majority rule)."""
        imported = SpanAnswer.objects.filter(summary__document__campaign=campaign, source=AnswerSource.IMPORTED)
        rows = list(imported.exclude(summary__gold_spans__isnull=False).values("summary_id", "annotator", "spans", "n_words"))
        if not rows:
            return 0
        import pandas as pd

        frame = pd.DataFrame([{"summary_id": r["summary_id"], "worker_id": r["annotator"], "n_tokens": r["n_words"],
                               "spans": from_json(r["spans"])} for r in rows])
        majority = majority_answers(frame)
        GoldSpans.objects.bulk_create([
            GoldSpans(summary_id=row.summary_id, spans=as_json(row.spans), n_words=row.n_tokens, origin=GoldOrigin.IMPORTED)
            for row in majority.itertuples(index=False)
        ])
        return len(majority)

    def has_gold(self, campaign: Campaign) -> bool:
        return GoldSpans.objects.filter(summary__document__campaign=campaign).exists()

    def control_item_ids(self, campaign: Campaign, documents: list[int] | None) -> set[int]:
        items = Item.objects.filter(campaign=campaign, summary__gold_spans__isnull=False)
        if documents is not None:
            items = items.filter(document_id__in=documents)
        return set(items.values_list("pk", flat=True))

    def gold_tallies(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> list[GoldTally]:
        answers = SpanAnswer.objects.filter(
            worker_id=worker_id, source=AnswerSource.CROWD, assignment__item__campaign=campaign, summary__gold_spans__isnull=False,
        ).select_related("summary__gold_spans", "summary__document", "assignment")
        if until is not None:
            answers = answers.filter(assignment__submitted_at__lte=until)
        if assignment_id is not None:
            answers = answers.filter(assignment_id=assignment_id)
        tallies = []
        for answer in answers:
            gold = answer.summary.gold_spans
            (err_right, err_total), (ok_right, ok_total) = word_tally(gold.n_words, from_json(gold.spans), from_json(answer.spans))
            public = bool(answer.summary.document.public_labels) and gold.origin == GoldOrigin.IMPORTED
            at = answer.assignment.submitted_at
            tallies += [GoldTally(False, err_right, err_total, public=public, at=at), GoldTally(True, ok_right, ok_total, public=public, at=at)]
        return [t for t in tallies if t.total]

    # ------------------------------------------------------------------ export

    def export(self, campaign: Campaign, fmt: str, export_filters, *, file: str, reveal_workers: bool, include_gold: bool) -> ExportStream:
        def name(answer: SpanAnswer) -> str:
            if answer.source == AnswerSource.IMPORTED:
                return answer.annotator
            return str(answer.worker_id) if reveal_workers else worker_pseudonym(campaign.pk, answer.worker_id)

        return ExportStream(exporter.jsonl(campaign, name), "application/x-ndjson", f"{campaign.slug}-spans.jsonl")

    def answer_rows(self, campaign: Campaign, kind: str, export_filters, name: Callable[[int | None], str | None]) -> Iterable[dict[str, Any]]:
        return exporter.rows(campaign, name)

    def report_sections(self, campaign: Campaign) -> list[ReportSection]:
        from .report import human_agreement, span_report

        counts, alpha = human_agreement(campaign)
        # The report is built by a worker, so the word-level analyses (unified types per system category and
        # dataset, detectors' AUC per type with their intervals) come with it rather than only from span_report.
        full = span_report(campaign)
        details = {key: full[key] for key in ("agreement", "unified_types", "detectors") if key in full}
        return [ReportSection("Typed error spans", counts, "Krippendorff's alpha (nominal, per word, over the types)", alpha, details)]
