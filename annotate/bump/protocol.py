"""BUMP minimal-pair editing (Ma et al., ACL 2023) on the shared workflow.

One item = a reference summary and, for Task 1, the error type to introduce (Task 2: any error). The
worker copies a checkpoint code shown in the middle of the instructions, edits the reference minimally
(or, in Task 1, says the type cannot be introduced: N/A) and submits. Storing a submission creates the
edited ``Summary`` ("human-edit") and an ``Edit`` with automatic hints, waiting for expert review; an
N/A re-queues the (summary, type) as an expert item.
"""
from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar

from django.conf import settings
from django.db import transaction

from annotate.bump import content as bump_content
from annotate.bump import edits
from annotate.bump import gold as bump_gold
from annotate.bump import kinds as bump_kinds
from annotate.bump import pay as bump_pay
from annotate.bump import qualification as bump_qualification
from annotate.bump.importer import import_bump
from annotate.bump.models import Checkpoint, Edit, checkpoint_code
from annotate.bump.selectors import EXPORTABLE_REVIEW
from annotate.exporters.streams import stream_json_array
from annotate.importers.sniff import Recognition, Sample
from annotate.models import (
    Assignment,
    Campaign,
    Item,
    Participation,
    Summary,
)
from annotate.nlp import count_sentences_by_punctuation, split_sentences
from annotate.presentation import article_blocks, present, present_article
from annotate.protocols.base import (
    DatasetFormat,
    ExportStream,
    Protocol,
    QualificationForm,
    ReportRecords,
    SubmissionResult,
    TaskPage,
)
from annotate.services.errors import InvalidSubmission
from annotate.services.gold import SentenceGold
from taxonomies import bump as bump_taxonomy

logger = logging.getLogger(__name__)

CHECKPOINT_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread
CHECKPOINT_LENGTH = 6
EDIT_SYSTEM = "human-edit"
MAX_EDIT_CHARS = 5000
WINDOW_FACTOR = 4  # candidate window widening, so that unseen summaries can come first


def new_checkpoint_code(length: int = CHECKPOINT_LENGTH) -> str:
    """A random code for the instructions' checkpoint (cryptographic randomness: it cannot be guessed)."""
    return "".join(secrets.choice(CHECKPOINT_ALPHABET) for _ in range(length))


def checkpoint_matches(expected: str, given: Any) -> bool:
    """The typed code matches, ignoring case and surrounding spaces."""
    return isinstance(given, str) and bool(expected) and given.strip().upper() == expected.upper()


def count_sentences(text: str) -> int:
    """Sentences of an edit or its reference, for the "no sentence added or removed" rule."""
    return count_sentences_by_punctuation(text)


def shown_reference(summary: Summary) -> str:
    """The reference exactly as the editing page shows it: what an edit is compared against."""
    return present(summary.text)


def edit_problems(item: Item, reference: str, text: str) -> dict[str, str]:
    """Why ``text`` is not an acceptable edit of ``reference`` for ``item`` (:func:`annotate.bump.edits.edit_problems`,
    with the campaign's limit and the article's words as real words)."""
    return edits.edit_problems(reference, text, max_distance=item.campaign.max_edit_distance, count_sentences=count_sentences,
                               context=item.document.text)


def task_page_data(assignment: Assignment) -> dict[str, Any]:
    """Everything the editing page shows: article, reference, the requested type, the checkpoint code."""
    item = assignment.item
    document = item.document
    requested = bump_taxonomy.BY_CODE.get(item.requested_error_type)
    article = present_article(document.sentences or split_sentences(document.text))
    return {
        "assignment": assignment.pk,
        # Shown through the presentation layer like every worker-facing text; the edit check compares
        # against this very text (shown_reference), so the unchanged reference is never an edit.
        "article": article,
        "blocks": article_blocks(article),
        "reference": shown_reference(item.summary),
        "requested": None if requested is None else {
            "code": requested.code, "name": requested.name, "description": requested.description,
            "example": requested.example_edit, "explanation": requested.explanation,
        },
        "checkpoint_code": checkpoint_code(assignment),
        "max_edit_distance": item.campaign.max_edit_distance,
    }


def qualification_test(participation: Participation) -> bump_content.TaxonomyTest | bump_content.AccuracyTest:
    """The worker's qualification test for their current attempt: a random subset of the campaign's pool
    (Task 1: edits to type; Task 2: summaries to judge and type)."""
    campaign = participation.campaign
    draw = bump_content.taxonomy_test if campaign.kind == bump_kinds.TAXONOMY else bump_content.accuracy_test
    return draw(settings.SECRET_KEY, campaign.pk, participation.worker_id, participation.qualification_attempts, campaign.training_material)


def create_edited_summary(source: Summary, text: str, *, requested_error_type: str, external_id: str) -> Summary:
    """The edited summary row of a minimal pair (system "human-edit", linked to its reference)."""
    return Summary.objects.create(
        document=source.document, system=EDIT_SYSTEM, text=text, sentences=split_sentences(text),
        edited_from=source, requested_error_type=requested_error_type, external_id=external_id,
    )


def requeue_for_experts(item: Item) -> Item:
    """An N/A (summary, type) becomes an expert item, once (a second N/A reuses the open one)."""
    expert, _ = Item.objects.get_or_create(
        campaign=item.campaign, document=item.document, summary=item.summary,
        requested_error_type=item.requested_error_type, for_experts=True,
        defaults={"position": item.position},
    )
    return expert


def schedule_auto_scoring(campaign: Campaign, summary_ids: list[int]) -> None:
    """Score new edited summaries with the campaign's ``auto_score_metrics`` once the submit has committed."""
    if not campaign.auto_score_metrics or not summary_ids:
        return

    def run() -> None:
        from annotate.signals import summaries_added

        try:
            summaries_added.send(sender=Campaign, campaign=campaign, summary_ids=summary_ids)
        except Exception:  # scoring must never lose a stored edit; the failure is logged for the admin
            logger.exception("automatic scoring of summaries %s in campaign %s failed", summary_ids, campaign.slug)

    transaction.on_commit(run)



BUMP_FIELDS = {"article", "reference_summary", "edited_summary", "error_type"}


def recognize_bump(sample: Sample) -> Recognition | None:
    """BUMP's task files, and which task: Task 1 asked for one given error type (its records carry the
    reviewed ``corrected_error_type`` and type names such as "Extrinsic Entity Error"); Task 2 let the annotator
    introduce any error and name it afterwards (no ``corrected_error_type``)."""
    if sample.shape != "json-array" or not sample.keys >= BUMP_FIELDS:
        return None
    task1 = "corrected_error_type" in sample.keys or all(
        str(r.get("error_type", "")).strip().lower().endswith("error") for r in sample.records if r.get("error_type"))
    if task1:
        return Recognition("a JSON array of BUMP pairs with 'corrected_error_type' (BUMP Task 1: a given error type)",
                           kind=bump_kinds.TAXONOMY)
    return Recognition("a JSON array of BUMP pairs without 'corrected_error_type' (BUMP Task 2: any error)",
                       kind=bump_kinds.FREE)

class _BumpProtocol(SentenceGold, Protocol):
    family = "bump"
    urls_module = "annotate.bump.urls"
    api_urls_module = "annotate.bump.api_urls"
    tutorial_url_name = None
    qualification_url_name = "bump-qualification"
    task_url_name = "bump-task"
    # The admin campaign page links to the expert review queue.
    review_url_name = "bump-review"
    allows_not_applicable = False
    # BUMP has edits, no trap sentences, no reading check, no sentence judgements or per-sentence times.
    terms: ClassVar[dict[str, str | None]] = {
        "items": "Edits submitted", "items_csv": "edits", "trap_score": None, "entity": None,
        "too_fast": None, "judgements_csv": None, "items_done": "Edits",
    }
    # BUMP (Ma et al., 2023): no tutorial, a qualification that must be answered without a mistake, each
    # (summary, type) edited once, no control sentences.
    campaign_defaults: ClassVar[Mapping[str, object]] = {
        "tutorial_required": False,
        "qualification_required": True,
        "qualification_pass_score": 1.0,
        "redundancy": 1,
        "trap_rate": 0.0,
        "entity_check_enabled": False,
        "max_edit_distance": 6,
    }
    export_formats: ClassVar[Mapping[str, str]] = {"bump": "BUMP's minimal pairs"}
    # An edit's bonus waits for its expert review (``annotate.bump.pay.settle_edit_bonus``).
    bonus_at_submission = False
    labels_sentences = False  # its items are edits: no sentence labels for adaptive redundancy to stop on

    nothing_left = "There is no summary left for you to edit in this campaign."

    def task_page(self, campaign: Campaign, assignment: Assignment) -> TaskPage:
        taxonomy = campaign.kind == bump_kinds.TAXONOMY
        return TaskPage("bump/task.html", {**task_page_data(assignment), "taxonomy": taxonomy}, {
            "taxonomy": taxonomy, "types": bump_taxonomy.REQUESTABLE,
            "example_article": bump_taxonomy.EXAMPLE_ARTICLE, "example_reference": bump_taxonomy.EXAMPLE_REFERENCE,
        })

    def worker_rules(self, campaign: Campaign) -> dict[str, bool]:
        return {"traps": False, "checks": False, "entity_check": False, "review": True}

    def pay_hold_reason(self, participation: Participation) -> str | None:
        return bump_pay.hold_reason(participation)

    def import_gold(self, campaign: Campaign) -> int:
        return bump_gold.import_bump_gold(campaign)

    def pay_deferral(self, participation: Participation, assignment: Assignment) -> str | None:
        return bump_pay.pay_deferral(participation, assignment)

    held_bonus_prefix = bump_pay.HELD_EDIT_BONUS_PREFIX

    def release_held_bonuses(self, participation: Participation, keys: list[str]) -> Decimal:
        return bump_pay.release_held_edit_bonuses(participation, keys)

    def order_candidates(self, worker, campaign: Campaign, candidates, window: int) -> list[Item]:
        # BUMP spreads a summary's edits over different workers: from a wider window, summaries the worker has
        # not edited come first, each group shuffled.
        wide = candidates(window * WINDOW_FACTOR)
        seen = set(
            Assignment.objects.filter(worker=worker, item__campaign=campaign, item__summary_id__in={i.summary_id for i in wide})
            .values_list("item__summary_id", flat=True)
        )
        random.shuffle(wide)
        wide.sort(key=lambda item: item.summary_id in seen)
        return wide[:window]

    def qualification_form(self, campaign: Campaign, participation, post=None) -> QualificationForm:
        return bump_qualification.qualification_form(self.kind == bump_kinds.TAXONOMY, qualification_test(participation), post)

    takes_training_material = True

    def parse_training_material(self, data: Any) -> dict[str, Any]:
        return bump_content.parse_material(data, taxonomy=self.kind == bump_kinds.TAXONOMY)

    def parse_qualification(self, campaign: Campaign, participation, post) -> dict[str, Any]:
        return {k: v for k, v in post.items() if k != "csrfmiddlewaretoken"}

    def score_qualification(self, campaign: Campaign, participation, answers: dict[str, Any]) -> float:
        return bump_qualification.score(self.kind == bump_kinds.TAXONOMY, qualification_test(participation), answers)

    def export(self, campaign: Campaign, fmt: str, export_filters, *, file: str, reveal_workers: bool, include_gold: bool) -> ExportStream:
        from annotate.bump.exporter import iter_bump_records

        return ExportStream(stream_json_array(iter_bump_records(campaign)), "application/json", f"{campaign.slug}-bump.json")

    def parquet_tables(self, campaign: Campaign, export_filters) -> list:
        from annotate.bump.exporter import iter_bump_records
        from annotate.exporters.parquet import Table

        pairs = ({k: v for k, v in r.items() if k != "scores"} | r["scores"] for r in iter_bump_records(campaign))
        return [Table("pairs", pairs, "BUMP's task format: one row per minimal pair, scores as <Metric>_reference/_edited columns")]

    layout_row_kinds: ClassVar[tuple[str, ...]] = ("edits",)

    def layout_rows(self, campaign: Campaign, kind: str, export_filters, name, base: dict[str, Any], *, chunk_size: int):
        from annotate.bump.rows import edit_rows

        return edit_rows(campaign, export_filters, name, base, chunk_size=chunk_size)

    def report_records(self, campaign: Campaign) -> dict[str, ReportRecords]:
        # A review changes an edit without adding a row: the report's data state watches the reviews' times.
        return {"edit_records": ReportRecords(Edit.objects.filter(source_summary__document__campaign=campaign), "source_summary__", "reviewed_at")}

    def written_summaries(self):
        return Edit.objects.filter(edited_summary__isnull=False).values("edited_summary_id")

    def pair_verdicts(self, campaign: Campaign) -> dict[int, str | None]:
        edits = Edit.objects.filter(edited_summary__document__campaign=campaign).values_list(
            "edited_summary_id", "review_status", "corrected_error_type",
        )
        return {summary_id: corrected if status in EXPORTABLE_REVIEW else None for summary_id, status, corrected in edits}

    def prepare_assignment(self, assignment: Assignment) -> None:
        assignment.layout = {"checkpoint": True}

    def assignment_claimed(self, assignment: Assignment) -> None:
        Checkpoint.objects.create(assignment=assignment, code=new_checkpoint_code())

    assignment_relations: ClassVar[tuple[str, ...]] = ("checkpoint",)

    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        item = assignment.item
        campaign = item.campaign
        if not checkpoint_matches(checkpoint_code(assignment), payload.get("checkpoint")):
            raise InvalidSubmission(
                "The checkpoint code is wrong: copy the code shown in the middle of the instructions into the "
                "checkpoint box. Your edit was kept; nothing was stored.",
                field_errors={"checkpoint": "wrong code"},
            )
        not_applicable = payload.get("not_applicable", False)
        if not isinstance(not_applicable, bool):
            raise InvalidSubmission("not_applicable must be true or false")
        if not_applicable:
            if not self.allows_not_applicable:
                raise InvalidSubmission("N/A is not possible in this task: introduce one error of any kind.")
            Edit.objects.create(
                assignment=assignment, worker_id=assignment.worker_id, source_summary=item.summary,
                requested_error_type=item.requested_error_type, is_not_applicable=True,
            )
            requeue_for_experts(item)
            return SubmissionResult(stored_rows=1, too_fast=self._too_fast(assignment), extra={"not_applicable": True})
        text = payload.get("edited")
        if not isinstance(text, str):
            raise InvalidSubmission("The edited summary is missing.", field_errors={"edited": "missing"})
        if len(text) > MAX_EDIT_CHARS:
            raise InvalidSubmission(f"The edited summary is too long (over {MAX_EDIT_CHARS} characters).", field_errors={"edited": "too long"})
        reference = shown_reference(item.summary)
        problems = edit_problems(item, reference, text)
        if problems:
            raise InvalidSubmission(problems["edited"] + " Your edit was kept; nothing was stored.", field_errors=problems)
        text = edits.clean_edit(text)  # stored without invisible characters or character variants
        edited = create_edited_summary(
            item.summary, text, requested_error_type=item.requested_error_type, external_id=f"edit:{assignment.pk}"
        )
        inserted = edits.inserted_words(reference, text)
        hints = edits.edit_hints(inserted, item.document.text, item.requested_error_type)
        Edit.objects.create(
            assignment=assignment, worker_id=assignment.worker_id, source_summary=item.summary, edited_summary=edited,
            requested_error_type=item.requested_error_type, text=text,
            word_distance=edits.word_edit_distance(reference, text), inserted_words=inserted,
            hint_inserted_in_article=hints.inserted_in_article, hint_likely_kind=hints.likely_kind,
            hint_disagrees=hints.disagrees,
        )
        schedule_auto_scoring(campaign, [edited.pk])
        return SubmissionResult(stored_rows=1, new_summary_ids=[edited.pk], too_fast=self._too_fast(assignment), extra={"hint": hints.likely_kind})

    @staticmethod
    def _too_fast(assignment: Assignment) -> bool:
        """The speed rule on the server's clock (``annotate.bump.pay``): feeds the shared fast-worker hold."""
        assignment.too_fast = bump_pay.is_too_fast(assignment, (assignment.submitted_at - assignment.created_at).total_seconds())
        return assignment.too_fast


class BumpTaxonomyProtocol(_BumpProtocol):
    """Task 1: introduce one error of the requested type, or N/A."""

    kind = bump_kinds.TAXONOMY
    label = "BUMP taxonomy edit (Task 1)"
    allows_not_applicable = True
    def reference_items(self, store, document, reference) -> None:
        for error_type in bump_taxonomy.REQUESTABLE:  # one item per requestable error type
            store.item(document, reference, error_type.code)

    # BUMP's task file becomes a Task 1 campaign unless the import names another kind.
    dataset_formats: ClassVar[Mapping[str, DatasetFormat]] = {
        "bump": DatasetFormat(import_bump, (".json",), public_labels="BUMP", recognize=recognize_bump,
                              label="BUMP Task 1 or Task 2 (.json)"),
    }


class BumpFreeProtocol(_BumpProtocol):
    """Task 2: introduce one error of any kind (no N/A)."""

    kind = bump_kinds.FREE
    label = "BUMP free edit (Task 2)"

    def reference_items(self, store, document, reference) -> None:
        store.item(document, reference, "")  # one item per reference: any error
