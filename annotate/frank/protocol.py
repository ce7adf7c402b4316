"""FRANK sentence annotation (Pagnoni et al., NAACL 2021) on the shared workflow.

One item = one article and its summaries. The server decides the page layout when the assignment is
created (order of summaries, where trap sentences are appended, the entity question's options) and keeps
it in ``assignment.layout``; the page only ever gets sentences and option texts (:func:`task_page_data`).
The worker's answer to the entity question is FRANK's own row (``annotate.frank.models.EntityAnswer``).
Services here: the entity check, storing a submission, scoring trap/tutorial/qualification answers.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db.models import Aggregate, OuterRef, Subquery, TextField
from django.urls import reverse
from django.utils import timezone

from annotate.frank import content as frank_content
from annotate.frank import page_cache
from annotate.frank.entities import entity_question
from annotate.frank.gold import import_frank_gold
from annotate.frank.importer import import_frank
from annotate.frank.models import entity_answer, no_entity_answer_yet
from annotate.frank.page import place_traps, present_page
from annotate.frank.prepared import campaign_common_words, prepared_page, similarity_lookup, summary_sentences
from annotate.frank.qualification import (
    campaign_gold_documents,
    parse_qualification_form,
    qualification_rows,
)
from annotate.frank.services import entity_answer_row
from annotate.importers.aggrefact import import_aggrefact, import_llm_aggrefact
from annotate.importers.jsonl import import_jsonl
from annotate.importers.qags import import_qags
from annotate.importers.recognizers import (
    recognize_aggrefact,
    recognize_jsonl,
    recognize_llm_aggrefact,
    recognize_qags,
)
from annotate.importers.sniff import Recognition, Sample
from annotate.models import (
    Assignment,
    Campaign,
    Document,
    Participation,
    SentenceJudgement,
    Summary,
    Trap,
    TrapAnswer,
)
from annotate.nlp import split_sentences
from annotate.presentation import article_paragraphs, style_like
from annotate.protocols.base import (
    DatasetFormat,
    ExportStream,
    Protocol,
    QualificationForm,
    SubmissionResult,
    TaskPage,
)
from annotate.rows import write_together
from annotate.services.errors import (
    InvalidSubmission,
)
from annotate.services.gold import SentenceGold, campaign_has_checks
from taxonomies.frank import (
    BY_CODE,
    CATEGORIES,
    CODES,
    MAX_CATEGORIES_PER_ANSWER,
)

if TYPE_CHECKING:
    from annotate.exporters.parquet import Table
    from annotate.exporters.tabular import ExportFilters

MAX_SECONDS_PER_SENTENCE = 30 * 60  # a client-reported lead time above this is a forgotten tab, not work


# ---------------------------------------------------------------- answers and their scoring

def parse_answer(
    raw: Any, where: str, *, max_categories: int | None = MAX_CATEGORIES_PER_ANSWER,
) -> tuple[bool, list[str], float | None]:
    """Validate one sentence answer ``{"factual": bool, "categories": [...], "seconds": number}``.

    Returns ``(factual, categories, seconds)``; raises ``InvalidSubmission`` naming ``where`` and the field.
    A "No" needs at least one FRANK category and at most ``max_categories`` (the instructions' rule, which
    the page enforces too); a "Yes" takes none. The tutorial passes ``max_categories=None`` so that a third
    category gets its teaching feedback rather than a refusal.
    """
    if not isinstance(raw, dict):
        raise InvalidSubmission(f"{where}: expected an answer object")
    factual = raw.get("factual")
    if not isinstance(factual, bool):
        raise InvalidSubmission(f"{where}: answer Yes or No (factual must be true or false)", field_errors={where: "factual"})
    categories = raw.get("categories", [])
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise InvalidSubmission(f"{where}: categories must be a list of category codes")
    unknown = [c for c in categories if c not in BY_CODE]
    if unknown:
        raise InvalidSubmission(f"{where}: unknown error category {unknown[0]!r}; expected one of {', '.join(CODES)}")
    categories = [c for c in CODES if c in categories]
    if factual and categories:
        raise InvalidSubmission(f"{where}: a correct sentence takes no error category")
    if not factual and not categories:
        raise InvalidSubmission(f"{where}: select at least one error category", field_errors={where: "categories"})
    if max_categories is not None and len(categories) > max_categories:
        raise InvalidSubmission(f"{where}: select at most {max_categories} error categories (the one or two that apply)",
                                field_errors={where: "categories"})
    seconds = raw.get("seconds")
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
            raise InvalidSubmission(f"{where}: seconds must be a non-negative number")
        seconds = float(min(seconds, MAX_SECONDS_PER_SENTENCE))
    return factual, categories, seconds


def answer_correct(expected_factual: bool, expected_category: str, factual: bool, categories: Sequence[str]) -> bool:
    """The one scoring rule of tutorial, qualification and trap sentences (stated in the instructions).

    The Yes/No matches and, for an erroneous sentence, its error category is among those selected ("every
    kind of error that applies"), with at most ``MAX_CATEGORIES_PER_ANSWER`` selected, so ticking every
    category is not a way to be right.
    """
    if factual != expected_factual:
        return False
    if expected_factual or not expected_category:
        return True
    return expected_category in categories and len(categories) <= MAX_CATEGORIES_PER_ANSWER


def trap_answer_correct(expected_factual: bool, expected_category: str, factual: bool, categories: Sequence[str]) -> bool:
    """FRANK's continuous evaluation, by the one rule (:func:`answer_correct`)."""
    return answer_correct(expected_factual, expected_category, factual, categories)


def key_answer_correct(key: frank_content.KeySentence, factual: bool, categories: Sequence[str]) -> bool:
    """Tutorial and qualification answers, by the one rule (:func:`answer_correct`)."""
    return answer_correct(key.factual, key.category or "", factual, categories)


def qualification_exercise(participation: Participation) -> frank_content.Exercise:
    """The worker's qualification test for their current attempt: from the campaign's imported material, else
    one of its own gold documents (keys not in the source), else a random subset of the shipped pool."""
    campaign = participation.campaign
    if not (campaign.training_material or {}).get("qualification"):
        for documents in campaign_gold_documents(campaign):  # private gold first
            exercise = frank_content.gold_qualification_for(
                documents, settings.SECRET_KEY, campaign.pk, participation.worker_id, participation.qualification_attempts,
            )
            if exercise is not None:
                return exercise
    return frank_content.campaign_qualification(
        campaign.training_material, settings.SECRET_KEY, participation.campaign_id, participation.worker_id,
        participation.qualification_attempts,
    )


def tutorial_feedback(
    summary: int, index: int, factual: bool, categories: Sequence[str], exercise: frank_content.Exercise = frank_content.TUTORIAL,
) -> dict[str, Any]:
    """Immediate feedback on one tutorial answer: ``{"correct": bool, "message": str}``.

    A partially right "No" (the right category among others) is accepted with a note on the extra ones.
    """
    key = exercise.sentence(summary, index)
    if key.factual:
        if factual:
            return {"correct": True, "message": f"Correct: this sentence is accurate. {key.explanation}"}
        return {"correct": False, "message": f"Not quite: this sentence is correct. {key.explanation}"}
    # Phrases that read well after "a"/"an" ("an other error" and "an out of article error" do not).
    name = {"OtherE": "error that fits no other category", "OutE": "out-of-article error"}.get(
        key.category, BY_CODE[key.category].name.split(" (")[0].lower()
    )
    article = "an" if name[0] in "aeiou" else "a"
    if factual:
        return {"correct": False, "message": f"Look again: this sentence has {article} {name}. {key.explanation}"}
    if key.category not in categories:
        return {"correct": False, "message": f"Not this category: the sentence has {article} {name} ('{BY_CODE[key.category].annotator_label}'). {key.explanation}"}
    if not key_answer_correct(key, factual, categories):
        return {"correct": False, "message": f"Too many categories: select the error that applies (at most {MAX_CATEGORIES_PER_ANSWER}). "
                f"This sentence has {article} {name}. {key.explanation}"}
    extra = [BY_CODE[c].annotator_label for c in categories if c != key.category]
    note = f" ('{'; '.join(extra)}' does not apply here.)" if extra else ""
    return {"correct": True, "message": f"Correct: {article} {name}. {key.explanation}{note}"}


def score_qualification(answers: Any, exercise: frank_content.Exercise = frank_content.QUALIFICATION) -> tuple[float, list[bool]]:
    """Score qualification answers ``{"summaries": [[answer, ...], ...]}`` against ``exercise``'s key.

    Returns ``(share correct, per-sentence correctness)``. Every sentence must be answered. The marks stay
    on the server: the worker is only told pass or fail.
    """
    rows = answers.get("summaries") if isinstance(answers, dict) else None
    if not isinstance(rows, list) or len(rows) != len(exercise.summaries):
        raise InvalidSubmission(f"answer all {len(exercise.summaries)} summaries")
    marks: list[bool] = []
    for s, (summary_key, row) in enumerate(zip(exercise.summaries, rows)):
        if not isinstance(row, list) or len(row) != len(summary_key):
            raise InvalidSubmission(f"summary {s + 1}: answer all {len(summary_key)} sentences")
        for i, (key, raw) in enumerate(zip(summary_key, row)):
            factual, categories, _ = parse_answer(raw, f"summary {s + 1}, sentence {i + 1}")
            marks.append(key_answer_correct(key, factual, categories))
    return sum(marks) / len(marks), marks


def scale_lead_times(seconds: Sequence[float], elapsed: float) -> float:
    """Factor applied to client-reported per-sentence times: 1, or ``elapsed / sum`` when they sum to more
    than the server-measured ``elapsed`` seconds."""
    total = sum(seconds)
    return elapsed / total if total > elapsed and total > 0 else 1.0


# ---------------------------------------------------------------- layout

def build_layout(document: Document, trap_rate: float, rng: random.Random, placement: random.Random | None = None) -> dict[str, Any]:
    """The page layout of an item: summaries in a shuffled order (``rng``: the worker's), traps on a
    ``trap_rate`` share of them (``placement``: the item's, so that every worker on the item sees the same
    sentences; ``rng`` when None).

    The number of traps is ``trap_rate * n`` rounded stochastically (so its mean is exact) and the traps are
    spread over randomly chosen summaries, each trap in place of the summary's sentence closest to it in length
    (:func:`annotate.frank.page.place_traps`, never one repeating a shown sentence): a summary shows as many
    sentences as it has. A row's ``sentences`` counts the summary's own sentences shown, ``trap_at`` is where
    its trap stands (a row without it, laid out before: the trap follows the last sentence).
    Everything comes from the document's prepared page (:mod:`annotate.frank.prepared`): no NLP here.
    """
    page = prepared_page(document)
    summaries = list(page["summaries"])
    placement = placement or rng
    n = len(summaries)
    wanted = min(n, math.floor(trap_rate * n + placement.random())) if trap_rate > 0 else 0
    traps = page["traps"] if wanted else []
    slots = sorted(placement.sample(range(n), min(wanted, n))) if traps else []
    trap_of = place_traps(
        [s["raw"] for s in summaries], [(t["id"], t["text"], t["edited"]) for t in traps], slots, placement,
        similarity_of=similarity_lookup(page),
    ) if slots else {}
    trap_features = {t["id"]: t["features"] for t in traps}
    rows = []
    for p, summary in enumerate(summaries):
        trap_id, at = trap_of.get(p, (None, None))
        row = {"summary": summary["id"], "sentences": len(summary["raw"]) - (trap_id is not None), "trap": trap_id}
        # What a script computes from the page, per shown sentence (never sent: the page shows the text itself).
        row["features"] = list(summary["features"])
        if trap_id is not None:
            row["trap_at"] = at
            row["features"][at] = trap_features[trap_id]
        rows.append(row)
    rng.shuffle(rows)
    return {"summaries": rows, "entity": entity_question(document, rng, page["entity_pool"])}


def item_placement(item_id: int) -> random.Random:
    """The random source of an item's trap placement: the same for every worker on the item (two identities
    comparing their pages find the same sentences), unknowable without the server's secret."""
    return random.Random(f"{settings.SECRET_KEY}:trap-placement:{item_id}")


def _row_sentences(row: dict[str, Any]) -> tuple[int, int | None]:
    """``(how many of the summary's sentences the row covers, where its trap stands or None)``."""
    if row["trap"] and "trap_at" in row:
        return row["sentences"] + 1, row["trap_at"]
    return row["sentences"], None


def task_page_data(assignment: Assignment, relevant_k: int) -> dict[str, Any]:
    """Everything the annotation page shows, and nothing else (no trap marks, no entity answer).

    Texts are those of the presentation layer (detokenised, each trap in its summary's style, the same
    number of underlines for every sentence: :func:`annotate.frank.page.present_page`), read from the
    document's prepared page.
    """
    document = assignment.item.document
    layout = assignment.layout
    page = prepared_page(document)
    summaries = {s["id"]: s for s in page["summaries"]}
    traps = {t["id"]: t for t in page["traps"]}
    if any(r["summary"] not in summaries or (r["trap"] and r["trap"] not in traps) for r in layout["summaries"]):
        return _task_page_data_from_database(assignment, relevant_k)  # a layout older than the page's traps
    k = max(relevant_k, 0)
    shown_pages = []
    for row in layout["summaries"]:
        summary = summaries[row["summary"]]
        covered, at = _row_sentences(row)
        shown = summary["shown"][:covered]
        rankings = summary["ranking"][:covered]
        if row["trap"]:
            trap = traps[row["trap"]]
            if at is None:  # a layout from before traps replaced sentences: appended
                shown, rankings = shown + [style_like(trap["text"], shown, page["casing"])], rankings + [trap["ranking"]]
            else:
                text = style_like(trap["text"], shown, page["casing"])  # like the summary, the replaced sentence included
                shown, rankings = shown[:at] + [text] + shown[at + 1:], rankings[:at] + [trap["ranking"]] + rankings[at + 1:]
        shown_pages.append([{"text": text, "relevant": ranking[:k]} for text, ranking in zip(shown, rankings)])
    return _page_data(assignment, layout, page["article"], shown_pages, page["paragraphs"])


def _page_data(assignment: Assignment, layout: dict[str, Any], article: list[str], pages: list[list[dict[str, Any]]],
               paragraphs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The page's data; ``paragraphs``: the article's layout where the prepared page keeps it."""
    entity = layout.get("entity")
    return {
        "assignment": assignment.pk,
        "article": article,
        "paragraphs": article_paragraphs(article) if paragraphs is None else paragraphs,
        "summaries": [{"sentences": page} for page in pages],
        "entity_options": entity["options"] if entity else [],
        "entity_done": (entity is None) or entity_answer(assignment) is not None,
        "categories": [{"code": c.code, "label": c.annotator_label} for c in CATEGORIES],
    }


def _task_page_data_from_database(assignment: Assignment, relevant_k: int) -> dict[str, Any]:
    """:func:`task_page_data` from the stored rows, for a layout whose summaries or traps the prepared page lacks."""
    document = assignment.item.document
    layout = assignment.layout
    article = document.sentences or split_sentences(document.text)
    by_id = {s.pk: s for s in Summary.objects.filter(pk__in=[r["summary"] for r in layout["summaries"]])}
    trap_text = dict(Trap.objects.filter(pk__in=[r["trap"] for r in layout["summaries"] if r["trap"]]).values_list("pk", "text"))
    shown_article, pages = present_page(
        article,
        [summary_sentences(by_id[row["summary"]])[: _row_sentences(row)[0]] for row in layout["summaries"]],
        [trap_text[row["trap"]] if row["trap"] else None for row in layout["summaries"]],
        relevant_k,
        relevance=page_cache.relevant_sentences,  # cached per distinct input
        trap_at=[_row_sentences(row)[1] for row in layout["summaries"]],
        common=campaign_common_words(document.campaign_id),
    )
    return _page_data(assignment, layout, shown_article, pages)



def recognize_frank_zip(sample: Sample) -> Recognition | None:
    """FRANK's data folder (or a FactLab FRANK export) zipped: its annotations file beside article files."""
    names = {m.rsplit("/", 1)[-1] for m in sample.members}
    if sample.shape == "zip" and "human_annotations.json" in names:
        return Recognition("a zip holding human_annotations.json (FRANK's data folder or a FactLab FRANK export)")
    return None

class FrankProtocol(SentenceGold, Protocol):
    kind = "frank"
    label = "FRANK sentence annotation"
    family = "frank"
    urls_module = "annotate.frank.urls"
    tutorial_url_name = "frank-tutorial"
    qualification_url_name = "frank-qualification"
    task_url_name = "frank-task"
    preview_url_name = "frank-preview"
    terms: ClassVar[dict[str, str | None]] = {**Protocol.terms, "items_done": "Articles"}
    # FRANK's values are the model's field defaults (redundancy 3, pass score 0.85, traps 25%...).
    campaign_defaults: ClassVar[Mapping[str, object]] = {}
    # FRANK's folder travels as a zip; QAGS and FactLab JSONL records become FRANK campaigns by default.
    dataset_formats: ClassVar[Mapping[str, DatasetFormat]] = {
        "frank": DatasetFormat(import_frank, (".zip",), public_labels="FRANK", recognize=recognize_frank_zip,
                               label="FRANK folder or FactLab FRANK export (.zip)"),
        "qags": DatasetFormat(import_qags, (".jsonl",), options=("dataset",), public_labels="QAGS", recognize=recognize_qags,
                              label="QAGS (.jsonl)"),
        "jsonl": DatasetFormat(import_jsonl, (".jsonl",), recognize=recognize_jsonl,
                               label="FactLab JSON lines (.jsonl, see docs/import-jsonl.md)"),
        "aggrefact": DatasetFormat(import_aggrefact, (".csv",), public_labels="AggreFact", recognize=recognize_aggrefact,
                                   label="AggreFact (.csv)"),
        "llm_aggrefact": DatasetFormat(import_llm_aggrefact, (".csv", ".jsonl"), public_labels="LLM-AggreFact",
                                       recognize=recognize_llm_aggrefact, label="LLM-AggreFact (.csv or .jsonl)"),
    }
    export_formats: ClassVar[Mapping[str, str]] = {"frank": "FRANK's data folder (sentence judgements and summary scores)"}
    export_parts = ("summaries", "sentences", "articles")  # annotate.frank.exporter.FILES

    def document_items(self, store, document: Document) -> None:
        store.item(document)  # one item per article: all its summaries on one page

    takes_training_material = True

    def parse_training_material(self, data: Any) -> dict[str, Any]:
        return frank_content.parse_material(data)

    nothing_left = "There is no article left for you in this campaign."

    def task_page(self, campaign: Campaign, assignment: Assignment) -> TaskPage:
        data = {**task_page_data(assignment, campaign.relevant_sentences_k), "preview": False}
        return TaskPage("frank/task.html", data, {"categories": CATEGORIES, "preview": False},
                        urls={"entity": reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk])})

    def worker_rules(self, campaign: Campaign) -> dict[str, bool]:
        return {"traps": campaign.trap_rate > 0, "checks": campaign_has_checks(campaign), "entity_check": campaign.entity_check_enabled, "review": False}

    def import_gold(self, campaign: Campaign) -> int:
        return import_frank_gold(campaign)

    def qualification_form(self, campaign: Campaign, participation: Participation, post=None) -> QualificationForm:
        exercise = qualification_exercise(participation)
        return QualificationForm("frank/qualification.html", {
            "exercise": frank_content.public_view(exercise), "categories": CATEGORIES,
            "rows": qualification_rows(exercise, post),
        })

    def qualification_source(self, campaign: Campaign) -> str:
        if (campaign.training_material or {}).get("qualification"):
            return "imported"
        _, documents = campaign_gold_documents(campaign)
        return "campaign" if any(frank_content.gold_test_eligible(d) for d in documents) else "shipped"

    def parse_qualification(self, campaign: Campaign, participation: Participation, post) -> dict[str, Any]:
        # Each worker and attempt gets their own random subset of the pool.
        return parse_qualification_form(qualification_exercise(participation), post)

    def score_qualification(self, campaign: Campaign, participation: Participation, answers: dict[str, Any]) -> float:
        return score_qualification(answers, qualification_exercise(participation))[0]

    def export(self, campaign: Campaign, fmt: str, export_filters: ExportFilters, *, file: str, reveal_workers: bool,
               include_gold: bool) -> ExportStream:
        from annotate.frank.exporter import stream_frank_file, stream_frank_zip

        if file == "zip":
            chunks = stream_frank_zip(campaign, export_filters, reveal_workers=reveal_workers, include_gold=include_gold)
            return ExportStream(chunks, "application/zip", f"{campaign.slug}-frank.zip")
        chunks = stream_frank_file(campaign, file, export_filters, reveal_workers=reveal_workers, include_gold=include_gold)
        return ExportStream(chunks, "application/json", f"{campaign.slug}-frank-{file}.json")

    def parquet_tables(self, campaign: Campaign, export_filters: ExportFilters) -> list[Table]:
        from annotate.exporters.parquet import Table
        from annotate.frank.exporter import iter_summary_records

        return [Table(
            "human_annotations", iter_summary_records(campaign, export_filters, platform_names=True),
            "FRANK's human_annotations.json: one row per summary, with its summary_id and the dataset named as in every other table",
        )]

    layout_row_kinds: ClassVar[tuple[str, ...]] = ("judgements",)

    def layout_rows(self, campaign: Campaign, kind: str, export_filters: ExportFilters, name, base: dict[str, Any], *,
                    chunk_size: int):
        from annotate.frank.rows import judgement_rows

        return judgement_rows(campaign, export_filters, name, base, chunk_size=chunk_size)

    def prepare_campaign(self, campaign, *, only_missing: bool = True, progress=None, checkpoint=None) -> int:
        from annotate.frank.prepared import prepare_campaign

        return prepare_campaign(campaign, only_missing=only_missing, progress=progress, checkpoint=checkpoint)

    def pages_version(self) -> str:
        from annotate.frank.prepared import VERSION

        return VERSION

    def campaigns_with_unprepared_pages(self, campaigns):
        from annotate.frank.prepared import campaigns_with_unprepared_pages

        return campaigns_with_unprepared_pages(campaigns)

    def prepare_assignment(self, assignment: Assignment) -> None:
        campaign = assignment.item.campaign
        layout = build_layout(assignment.item.document, campaign.trap_rate, random.Random(), item_placement(assignment.item.pk))
        if not campaign.entity_check_enabled:
            layout["entity"] = None
        words = prepared_page(assignment.item.document).get("reading_words")
        if assignment.item.summary_id is None and words is not None:  # an item of the whole document, as counted
            layout["reading_words"] = words
        assignment.layout = layout
        no_entity_answer_yet(assignment)

    assignment_relations: ClassVar[tuple[str, ...]] = ("entity_answer",)
    claimed_item_relations: ClassVar[tuple[str, ...]] = ("document__prepared_page",)

    def submission_annotations(self) -> dict[str, Any]:
        return {"item_trap_expectations": _item_trap_expectations()}

    def assignment_details(self, assignment: Assignment) -> dict[str, Any]:
        answer = entity_answer(assignment)
        return {"entity_choice": None if answer is None else answer.choice, "entity_correct": None if answer is None else answer.correct}

    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        layout = assignment.layout
        reading_checks = reading_check_failures = 0
        reading_answer = None
        if layout.get("entity") and entity_answer(assignment) is None:
            # The page sends the reading check's answer with the answers (one request less per item); an
            # answer given on its own before (the entity endpoint) stands, and a second one is not read.
            choice = payload.get("entity_choice")
            if choice is None:
                raise InvalidSubmission("entity_choice: answer the reading check question (which option was not mentioned "
                                        "in the article) first.")
            reading_answer = entity_answer_row(assignment, choice)
            reading_checks, reading_check_failures = 1, int(not reading_answer.correct)
        rows = payload.get("summaries")
        if not isinstance(rows, list) or len(rows) != len(layout["summaries"]):
            raise InvalidSubmission(f"expected answers for {len(layout['summaries'])} summaries")
        submitted_at = assignment.submitted_at or timezone.now()
        elapsed = max(0.0, (submitted_at - assignment.created_at).total_seconds())
        judgements: list[SentenceJudgement] = []
        trap_rows: list[tuple[int, bool, list[str]]] = []
        seconds_all: list[float] = []
        for position, (spec, row) in enumerate(zip(layout["summaries"], rows)):
            expected = spec["sentences"] + (1 if spec["trap"] else 0)
            answers = row.get("answers") if isinstance(row, dict) else None
            if not isinstance(answers, list) or len(answers) != expected:
                raise InvalidSubmission(f"summary {position + 1}: answer all {expected} sentences")
            for index, raw in enumerate(answers):
                factual, categories, seconds = parse_answer(raw, f"summary {position + 1}, sentence {index + 1}")
                if seconds is not None:
                    seconds_all.append(seconds)
                if spec["trap"] and index == spec.get("trap_at", spec["sentences"]):
                    trap_rows.append((spec["trap"], factual, categories))
                else:
                    judgements.append(SentenceJudgement(
                        summary_id=spec["summary"], sentence_index=index, worker_id=assignment.worker_id, assignment=assignment,
                        factual=factual, categories=categories, lead_time_seconds=seconds,
                    ))
        # Client-reported times cannot add up to more than the time the server saw the page open: when they
        # do, all of them are scaled down to it.
        scale = scale_lead_times(seconds_all, elapsed)
        for judgement in judgements:
            if judgement.lead_time_seconds is not None:
                # Rounded down to the millisecond, so that scaled times never add up to more than ``elapsed``.
                judgement.lead_time_seconds = math.floor(judgement.lead_time_seconds * scale * 1000) / 1000
        expected = _trap_expectations(assignment, [t for t, _, _ in trap_rows])
        answers = []
        for trap_id, factual, categories in trap_rows:
            expected_factual, expected_category = expected[trap_id]
            ok = trap_answer_correct(expected_factual, expected_category, factual, categories)
            answers.append(TrapAnswer(assignment=assignment, trap_id=trap_id, factual=factual, categories=categories, correct=ok))
        # The reading check's answer, the sentence answers and the trap answers: one round trip on PostgreSQL.
        write_together(insert=[[reading_answer] if reading_answer is not None else [], judgements, answers])
        correct = sum(a.correct for a in answers)
        campaign = assignment.item.campaign
        answered = len(judgements) + len(trap_rows)
        # The too-fast flag uses the server's clock only (a client can report any times it likes).
        per_sentence = elapsed / max(answered, 1)
        assignment.too_fast = per_sentence < campaign.min_seconds_per_sentence
        return SubmissionResult(
            stored_rows=len(judgements), traps_correct=correct, traps_total=len(trap_rows), too_fast=assignment.too_fast,
            reading_checks=reading_checks, reading_check_failures=reading_check_failures,
            extra={"seconds_per_sentence": round(per_sentence, 2)},
        )


class _TrapExpectationRows(Aggregate):
    """The rows aggregated as JSON text: ``[[trap id, expected factual, expected category], ...]``."""

    function = "JSON_AGG"
    template = "CAST(%(function)s(JSON_BUILD_ARRAY(%(expressions)s)) AS TEXT)"
    output_field = TextField()

    def as_sqlite(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, function="JSON_GROUP_ARRAY", template="%(function)s(JSON_ARRAY(%(expressions)s))", **extra)


def _item_trap_expectations() -> Subquery:
    """The expected answers of the traps of the locked assignment's document (``_trap_expectations`` reads them):
    read with the submission's lock instead of in a query of their own."""
    traps = (Trap.objects.filter(document_id=OuterRef("item__document_id")).order_by().values("document_id")
             .annotate(rows=_TrapExpectationRows("id", "expected_factual", "expected_category")).values("rows"))
    return Subquery(traps)


def _trap_expectations(assignment: Assignment, trap_ids: list[int]) -> dict[int, tuple[bool, str]]:
    """Each trap's expected answer and error category, by trap id: from what the submission's lock read with the
    assignment (``item_trap_expectations``), else (an assignment loaded otherwise, a trap not of its document) one
    query; none without traps."""
    kept = getattr(assignment, "item_trap_expectations", None)
    expected = {row[0]: (bool(row[1]), row[2]) for row in json.loads(kept)} if kept else {}
    missing = [trap_id for trap_id in trap_ids if trap_id not in expected]
    if missing:
        expected.update((trap.pk, (trap.expected_factual, trap.expected_category)) for trap in Trap.objects.filter(pk__in=missing))
    return expected
