"""Control items: real items with known (gold) sentence labels, and the balanced quality score they give.

A control item is an ordinary item: its page is built by the same code from the same kind of data, so
nothing in its HTML, ids, order or timing tells it apart. Only the server knows which of its sentences have
a :class:`~annotate.models.GoldLabel`, from three sources:

* imported human labels (:func:`gold_from_imported_labels`): a summary with FRANK ``Factuality`` 1.0 is
  factual in every sentence, 0.0 erroneous in every sentence (a one-sentence summary so gets a sentence
  label, with its category when the per-category scores name exactly one); per-sentence majorities of
  imported judgements (QAGS' three workers, FRANK's sentence file); BUMP: a reference is factual, an
  accepted edit's changed sentences are erroneous (its reviewed error type in the note);
* an admin or reviewer (:func:`set_gold_label`), in the browser or through the API;
* optionally, certain crowd labels (:func:`gold_from_crowd`).

A worker's quality is their agreement with gold scored as *balanced accuracy*: the mean of the share right
on factual and the share right on erroneous sentences, so that answering "Yes" everywhere scores 0.5 however
few errors the data has. It is balanced *within strata* of data set and word-overlap band
(:data:`OVERLAP_BANDS`): FRANK's factual gold is mostly copied from the article and its erroneous gold mostly
abstractive, so a rule reading only how much of a sentence the article holds would score 0.87 on the pooled
score; within a band it scores what answering one way scores, 0.5. Block and bonus decisions also look at
the worker's most recent checks (:func:`recent_quality`), so good work banked early does not carry a worker
who stopped reading. Trap answers, when a campaign uses traps, enter the same score, each weighted by
:func:`annotate.models.trap_weight` (traps built mechanically from the shipped article count for less).

Over 400 lines on purpose: gold from each source, the control share of claims and the balanced score are
one concept (what is known about a worker's answers), each a short function.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.db import connection, transaction

from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    Edit,
    GoldLabel,
    GoldSource,
    Item,
    JudgementSource,
    Participation,
    ReviewStatus,
    SentenceJudgement,
    Summary,
    Trap,
    TrapAnswer,
    TrapSource,
    Worker,
)
from annotate.nlp import split_sentences
from taxonomies.frank import BY_CODE, CODES  # a plain data module

from .errors import InvalidSubmission

#: Imported judgements of one sentence needed before their majority is gold, and the share that must agree.
MIN_IMPORTED_VOTES = 3
#: FRANK's per-category human scores that name an error category (``Flip_*`` and the groups are not codes).
#: Collected judgements of one sentence, from trusted workers, before a crowd label can become gold.
MIN_CROWD_WORKERS = 3


# ---------------------------------------------------------------- word overlap with the article

_WORD = re.compile(r"[a-z0-9]+")
#: Lower edges of the word-overlap bands the balanced score is stratified by: under half the words in one
#: article sentence, 0.5-0.8, 0.8 up to (not including) a full copy, and every word found in one article
#: sentence (1.0). On FRANK's imported gold the best one-threshold overlap rule scores 0.89 pooled and 0.53
#: within these bands (benchmarks/control_predictability.py); the band of exact copies matters most.
OVERLAP_BANDS = (0.5, 0.8, 1.0)


def sentence_overlap(sentence: str, article_sentences: Sequence[str], *, vocabularies: Sequence[set[str]] | None = None) -> float:
    """The share of ``sentence``'s words (lower-cased letters and digits) found in its closest article sentence
    (``vocabularies``: the article sentences' words, from :func:`article_vocabularies`, when many sentences of one
    page are measured)."""
    words = _WORD.findall(sentence.lower())
    if not words:
        return 1.0
    best = 0
    for vocabulary in vocabularies if vocabularies is not None else article_vocabularies(article_sentences):
        best = max(best, sum(word in vocabulary for word in words))
    return round(best / len(words), 4)


def article_vocabularies(article_sentences: Sequence[str]) -> list[set[str]]:
    return [set(_WORD.findall(line.lower())) for line in article_sentences]


def sentence_page_features(sentences: Sequence[str], article_sentences: Sequence[str]) -> list[list[float]]:
    """Per sentence of one summary as a page shows it: ``[word overlap with the closest article sentence, word
    count]``, what a script holding the page computes (with the position and the summary's length, known from
    the layout); kept with the layout, so that answers a page feature predicts show (services/predictable_answers)."""
    vocabularies = article_vocabularies(article_sentences)
    return [[sentence_overlap(text, (), vocabularies=vocabularies), len(_WORD.findall(text.lower()))] for text in sentences]


def overlap_band(overlap: float | None) -> int:
    """The band of an overlap (0: below the first edge; -1: not known, e.g. a label from before overlaps were kept)."""
    return -1 if overlap is None else sum(overlap >= edge for edge in OVERLAP_BANDS)


def _band_sql(column: str) -> str:
    """:func:`overlap_band` in SQL, so the database groups checked answers by it."""
    steps = " ".join(f"WHEN {column} >= {edge} THEN {n}" for n, edge in reversed(list(enumerate(OVERLAP_BANDS, 1))))
    return f"CASE WHEN {column} IS NULL THEN -1 {steps} ELSE 0 END"


def record_overlaps(campaign: Campaign, documents: Iterable[int] | None = None) -> int:
    """Store the word overlap of every gold sentence and trap (of ``documents``, when given) that has none yet:
    computed once, when the label or trap is set, since the article and the sentence do not change. Returns
    how many rows were updated."""
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign, overlap__isnull=True)
    traps = Trap.objects.filter(document__campaign=campaign, overlap__isnull=True)
    if documents is not None:
        documents = list(documents)
        gold, traps = gold.filter(summary__document_id__in=documents), traps.filter(document_id__in=documents)
    articles: dict[int, list[str]] = {}

    def article(document: Document) -> list[str]:
        if document.pk not in articles:
            articles[document.pk] = document.sentences or split_sentences(document.text)
        return articles[document.pk]

    labels = list(gold.select_related("summary__document"))
    sentences: dict[int, list[str]] = {}
    for label in labels:
        summary = label.summary
        if summary.pk not in sentences:
            sentences[summary.pk] = summary_sentences(summary)
        text = sentences[summary.pk][label.sentence_index] if label.sentence_index < len(sentences[summary.pk]) else ""
        label.overlap = sentence_overlap(text, article(summary.document))
    GoldLabel.objects.bulk_update(labels, ["overlap"], batch_size=1000)
    made = list(traps.select_related("document"))
    for trap in made:
        trap.overlap = sentence_overlap(trap.text, article(trap.document))
    Trap.objects.bulk_update(made, ["overlap"], batch_size=1000)
    return len(labels) + len(made)


# ---------------------------------------------------------------- gold from data

def summary_sentences(summary: Summary) -> list[str]:
    """A summary's sentences as its pages number them (stored sentences, else split from its text)."""
    return [s for s in (summary.sentences or []) if s.strip()] or split_sentences(summary.text)


def _sentence_count(summary: Summary) -> int:
    return len(summary_sentences(summary))


def _frank_category(scores: dict) -> str:
    """The one error category a one-sentence FRANK summary's per-category scores name ('' if none or several)."""
    named = [code for code in CODES if isinstance(scores.get(code), (int, float)) and scores[code] < 1.0]
    named += ["OtherE"] if isinstance(scores.get("Other"), (int, float)) and scores["Other"] < 1.0 else []
    return named[0] if len(set(named)) == 1 else ""


def _changed_sentences(source: Sequence[str], edited: Sequence[str]) -> list[bool]:
    """Per sentence of ``edited``: True when it is not one of the ``source`` sentences (an edit's change)."""
    kept = Counter(s.strip() for s in source)
    changed = []
    for sentence in edited:
        key = sentence.strip()
        if kept[key] > 0:
            kept[key] -= 1
            changed.append(False)
        else:
            changed.append(True)
    return changed


def imported_gold_rows(campaign: Campaign) -> list[GoldLabel]:
    """The gold labels the campaign's imported data implies (not saved; see the module docstring for the rules)."""
    rows: dict[tuple[int, int], GoldLabel] = {}
    summaries = list(Summary.objects.filter(document__campaign=campaign).select_related("edited_from", "document"))
    # Labels that came with a published benchmark's data are public: anyone may hold them.
    published = {summary.pk: summary.document.public_labels for summary in summaries}

    def add(summary_id: int, index: int, factual: bool, category: str, note: str, *, reviewed_here: bool = False) -> None:
        benchmark = "" if reviewed_here else published.get(summary_id, "")
        note = f"{note}; public: released with {benchmark}" if benchmark else note
        rows.setdefault((summary_id, index), GoldLabel(
            summary_id=summary_id, sentence_index=index, factual=factual, category="" if factual else category,
            source=GoldSource.IMPORTED, note=note[:300], public=bool(benchmark),
        ))

    for summary in summaries:
        factuality = (summary.human_scores or {}).get("Factuality")
        sentences = summary_sentences(summary)
        if factuality in (0, 1) and not isinstance(factuality, bool):
            category = _frank_category(summary.human_scores) if len(sentences) == 1 and factuality == 0 else ""
            for index in range(len(sentences)):
                add(summary.pk, index, factuality == 1, category, f"imported human score Factuality {factuality:g}")
        elif summary.edited_from_id is not None and (summary.metadata or {}).get("bump") is not None:
            # An imported BUMP pair: the data set holds edits its authors accepted.
            error_type = summary.corrected_error_type or summary.requested_error_type
            for index, changed in enumerate(_changed_sentences(summary_sentences(summary.edited_from), sentences)):
                add(summary.pk, index, not changed, "", f"accepted BUMP edit ({error_type or 'free edit'})" if changed else "sentence unchanged by a BUMP edit")
        elif summary.is_reference and (summary.document.metadata or {}).get("source") == "bump":
            for index in range(len(sentences)):
                add(summary.pk, index, True, "", "BUMP reference summary")
    # Edits accepted (or type-corrected) in this platform's expert review.
    for edit in Edit.objects.filter(
        source_summary__document__campaign=campaign, review_status__in=(ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED),
        is_not_applicable=False, edited_summary__isnull=False,
    ).select_related("edited_summary", "source_summary"):
        error_type = edit.corrected_error_type or edit.requested_error_type
        changed_rows = _changed_sentences(summary_sentences(edit.source_summary), summary_sentences(edit.edited_summary))
        for index, changed in enumerate(changed_rows):
            add(edit.edited_summary_id, index, not changed, "", f"BUMP edit accepted in review ({error_type or 'free edit'})",
                reviewed_here=True)
    # Majorities of imported per-sentence judgements (QAGS' workers, FRANK's sentence file).
    votes: dict[tuple[int, int], list[tuple[bool, list[str]]]] = defaultdict(list)
    for summary_id, index, factual, categories in SentenceJudgement.objects.filter(
        summary__document__campaign=campaign, source=JudgementSource.IMPORTED
    ).values_list("summary_id", "sentence_index", "factual", "categories"):
        votes[(summary_id, index)].append((factual, categories))
    for (summary_id, index), answers in votes.items():
        if len(answers) < MIN_IMPORTED_VOTES:
            continue
        factual_votes = sum(f for f, _ in answers)
        if 2 * factual_votes == len(answers):
            continue  # a tie is not a label
        factual = 2 * factual_votes > len(answers)
        category = ""
        if not factual:
            counts = Counter(c for f, cats in answers if not f for c in cats).most_common(2)
            if counts and (len(counts) == 1 or counts[0][1] > counts[1][1]):
                category = counts[0][0]
        add(summary_id, index, factual, category, f"majority of {len(answers)} imported judgements")
    return list(rows.values())


def gold_from_imported_labels(campaign: Campaign) -> int:
    """Store the gold the campaign's imported labels imply; a sentence that has gold keeps it (an admin's label
    is never overwritten). Marks the control items. Returns how many labels were added."""
    with transaction.atomic():
        rows = imported_gold_rows(campaign)
        existing = set(GoldLabel.objects.filter(summary__document__campaign=campaign).values_list("summary_id", "sentence_index"))
        new = [r for r in rows if (r.summary_id, r.sentence_index) not in existing]
        GoldLabel.objects.bulk_create(new, ignore_conflicts=True)
        refresh_control_items(campaign)
    return len(new)


def refresh_control_items(campaign: Campaign, documents: Iterable[int] | None = None) -> int:
    """Set ``Item.is_control`` from the gold labels (of ``documents`` only, when given); returns the control count.

    An item of one summary (BUMP) is a control item when that summary has gold; a document item (FRANK)
    when one of the document's original summaries (not edits) has.
    """
    items = Item.objects.filter(campaign=campaign)
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign)
    if documents is not None:  # one admin label need not read the whole campaign's gold
        documents = list(documents)
    record_overlaps(campaign, documents)  # every path that sets gold comes here
    if documents is not None:
        items = items.filter(document_id__in=documents)
        gold = gold.filter(summary__document_id__in=documents)
    gold_summaries = set(gold.values_list("summary_id", flat=True).distinct())
    gold_documents = set(gold.filter(summary__edited_from__isnull=True).values_list("summary__document_id", flat=True).distinct())
    control, plain = [], []
    for item in items.only("pk", "document_id", "summary_id", "is_control"):
        wanted = item.summary_id in gold_summaries if item.summary_id is not None else item.document_id in gold_documents
        (control if wanted else plain).append(item.pk)
    Item.objects.filter(pk__in=control, is_control=False).update(is_control=True)
    Item.objects.filter(pk__in=plain, is_control=True).update(is_control=False)
    return len(control)


def set_gold_label(
    summary: Summary, sentence_index: int, factual: bool, category: str = "", *, user=None, note: str = "", public: bool = False,
) -> GoldLabel:
    """An admin's or reviewer's label for one sentence (replaces any label it had); raises
    ``InvalidSubmission`` naming the bad field. Its items become control items. It is private unless
    ``public`` (e.g. the admin copied it from a published benchmark)."""
    if isinstance(sentence_index, bool) or not isinstance(sentence_index, int):
        raise InvalidSubmission("sentence_index must be an integer", field_errors={"sentence_index": "integer"})
    count = _sentence_count(summary)
    if not 0 <= sentence_index < count:
        raise InvalidSubmission(
            f"sentence_index {sentence_index} is out of range: summary {summary.pk} has {count} sentences (0 to {count - 1})",
            field_errors={"sentence_index": "out of range"},
        )
    if not isinstance(factual, bool):
        raise InvalidSubmission("factual must be true or false", field_errors={"factual": "boolean"})
    category = category or ""
    if category and category not in BY_CODE:
        raise InvalidSubmission(f"unknown error category {category!r}; expected one of {', '.join(BY_CODE)}", field_errors={"category": "unknown"})
    if factual and category:
        raise InvalidSubmission("a factual sentence takes no error category", field_errors={"category": "not allowed"})
    with transaction.atomic():
        label, _ = GoldLabel.objects.update_or_create(
            summary=summary, sentence_index=sentence_index,
            defaults={
                "factual": factual, "category": category, "source": GoldSource.ADMIN, "set_by": user, "note": note[:300],
                "public": public,
            },
        )
        refresh_control_items(summary.document.campaign, [summary.document_id])
    return label


def mark_gold_public(campaign: Campaign, public: bool, *, label_ids: Iterable[int] | None = None) -> int:
    """An admin's word on whether gold labels are published (``label_ids`` of the campaign, else all of its gold):
    public labels earn no bonus unless the campaign accepts them (``bonus_on_public_labels``); marking
    imported labels private says the admin knows they were never released. Returns how many changed."""
    labels = GoldLabel.objects.filter(summary__document__campaign=campaign)
    if label_ids is not None:
        labels = labels.filter(pk__in=list(label_ids))
    return labels.exclude(public=public).update(public=public)


def remove_gold_label(label: GoldLabel) -> None:
    document = label.summary.document
    with transaction.atomic():
        label.delete()
        refresh_control_items(document.campaign, [document.pk])


# ---------------------------------------------------------------- the balanced quality score

@dataclass(frozen=True)
class Check:
    """One checked answer: the expected class, whether the worker was right, and its weight."""

    expected_factual: bool
    correct: bool
    weight: float = 1.0
    source: str = "gold"  # "gold" or "trap"
    #: How many answers this check stands for (the database sums equal answers; ``weight`` is their total).
    count: int = 1
    #: Built from text the page ships (a mechanical trap), so a script holding the page can compute it.
    from_page: bool = False
    #: Published with a benchmark (or marked public): a worker may hold the answer without reading.
    public: bool = False
    #: Data set and word-overlap band of the sentence ("cnndm/3"): the score is balanced within each.
    stratum: str = ""
    #: When the answer was submitted (the most recent checks decide too: :func:`recent_quality`).
    at: datetime | None = None


@dataclass(frozen=True)
class Quality:
    """A worker's agreement with known labels. ``score`` is None until each class has enough weight."""

    factual_weight: float
    factual_correct: float
    erroneous_weight: float
    erroneous_correct: float
    gold_checks: int
    trap_checks: int
    score: float | None
    min_per_class: int
    #: Erroneous sentences checked against labels the page does not give away (gold, human-written traps).
    independent_erroneous: int = 0
    #: Checked answers on public labels (published gold), and whether they were left out of this score.
    public_checks: int = 0
    public_left_out: bool = False
    #: Per class, the share right averaged over the strata that hold both classes (weighted by their size), and
    #: the weight of those strata: what ``score`` and its confidence bound are computed from.
    factual_share: float | None = None
    erroneous_share: float | None = None
    strata_factual_weight: float = 0.0
    strata_erroneous_weight: float = 0.0
    #: Strata (data set, overlap band) that hold both classes; the score pooled over every check, unstratified.
    strata: int = 0
    pooled_score: float | None = None

    @property
    def decisive(self) -> bool:
        return self.score is not None

    def lower_bound(self, confidence: float) -> float | None:
        """The balanced score with each class's share right replaced by the lower end of its two-sided Wilson
        interval at ``confidence``: what the score is at least, with that confidence (None while unknown)."""
        if self.score is None:
            return None
        if confidence <= 0:
            return self.score
        from statsmodels.stats.proportion import (
            proportion_confint,  # imported on first use
        )

        shares = ((self.factual_share, self.strata_factual_weight), (self.erroneous_share, self.strata_erroneous_weight))
        bounds = [proportion_confint(share * total, total, alpha=1 - confidence, method="wilson")[0] for share, total in shares]
        return float(sum(bounds) / 2)

    def describe(self) -> str:
        part = (
            f"factual sentences {self.factual_correct:g} of {self.factual_weight:g}, "
            f"erroneous {self.erroneous_correct:g} of {self.erroneous_weight:g} "
            f"({self.gold_checks} gold, {self.trap_checks} trap"
            + (f"; {self.public_checks} on public labels left out" if self.public_left_out and self.public_checks else "")
            + ")"
        )
        if self.score is None:
            return (
                f"balanced control score not known yet (needs {self.min_per_class} checked answers of each class "
                f"within strata of data set and word overlap holding both; {part})"
            )
        strata = f", balanced within {self.strata} strata of data set and word overlap" if self.strata > 1 else ""
        return f"balanced control score {self.score:.2f} ({part}{strata})"


def balanced_score(checks: Sequence[Check], min_per_class: int = 1) -> Quality:
    """Balanced accuracy of ``checks`` within strata: per stratum (data set, overlap band) that holds both
    classes, the mean over the two classes of the weighted share answered right, averaged over those strata
    weighted by their size. So answers that follow the stratum alone (what a page rule reads: overlap, data
    set) score 0.5. None while either class has less than ``min_per_class`` weight in those strata.

    With one stratum this is scikit-learn's weighted balanced accuracy; it is computed from the class totals
    since it runs in every submission, where sklearn's input validation cost more than the rest of the
    scoring (about 1.5 ms); tests check the two agree."""
    totals = {True: [0.0, 0.0], False: [0.0, 0.0]}
    cells: dict[str, dict[bool, list[float]]] = defaultdict(lambda: {True: [0.0, 0.0], False: [0.0, 0.0]})
    for check in checks:
        for cell in (totals[check.expected_factual], cells[check.stratum][check.expected_factual]):
            cell[0] += check.weight
            cell[1] += check.weight * check.correct
    usable = [cell for cell in cells.values() if cell[True][0] > 0 and cell[False][0] > 0]
    weight = {c: sum(cell[c][0] for cell in usable) for c in (True, False)}
    shares: dict[bool, float | None] = {True: None, False: None}
    score = pooled = None
    if usable and weight[True] >= min_per_class and weight[False] >= min_per_class:
        everything = weight[True] + weight[False]
        shares = {
            c: sum((cell[True][0] + cell[False][0]) / everything * cell[c][1] / cell[c][0] for cell in usable)
            for c in (True, False)
        }
        score = float((shares[True] + shares[False]) / 2)
    if totals[True][0] > 0 and totals[False][0] > 0 and totals[True][0] >= min_per_class and totals[False][0] >= min_per_class:
        pooled = float((totals[True][1] / totals[True][0] + totals[False][1] / totals[False][0]) / 2)
    return Quality(
        factual_weight=round(totals[True][0], 3), factual_correct=round(totals[True][1], 3),
        erroneous_weight=round(totals[False][0], 3), erroneous_correct=round(totals[False][1], 3),
        gold_checks=sum(c.count for c in checks if c.source == "gold"), trap_checks=sum(c.count for c in checks if c.source == "trap"),
        score=score, min_per_class=min_per_class,
        independent_erroneous=sum(c.count for c in checks if not c.expected_factual and not c.from_page and c.weight > 0),
        public_checks=sum(c.count for c in checks if c.public),
        factual_share=shares[True], erroneous_share=shares[False],
        strata_factual_weight=weight[True], strata_erroneous_weight=weight[False], strata=len(usable), pooled_score=pooled,
    )


#: Checked answers of each class in the window of recent work that block and bonus decisions also look at.
RECENT_CHECKS_PER_CLASS = 10


def recent_checks(checks: Sequence[Check], per_class: int = RECENT_CHECKS_PER_CLASS) -> list[Check]:
    """The most recent ``per_class`` checked answers of each class (a group of equal answers cut to fit, its
    weight in proportion)."""
    left = {True: per_class, False: per_class}
    window = []
    for check in sorted(checks, key=lambda c: c.at or datetime.min, reverse=True):
        take = min(check.count, left[check.expected_factual])
        if take <= 0:
            continue
        left[check.expected_factual] -= take
        window.append(replace(check, count=take, weight=check.weight * take / check.count))
    return window


def recent_quality(checks: Sequence[Check], min_per_class: int) -> Quality:
    """The balanced score of the worker's recent checks (:func:`recent_checks`), so "bank good work, then stop
    reading" shows within a few items. Pooled over the window: a window is small and its strata seldom hold
    both classes, while a worker who stopped reading scores low pooled too (a page rule is what the score over
    all checks, within strata, is for)."""
    return balanced_score([replace(c, stratum="") for c in recent_checks(checks)], min_per_class)


def describe_recent(quality: Quality) -> str:
    return f"last {RECENT_CHECKS_PER_CLASS} checked answers of each class: {quality.describe()}"


def worker_checks(worker: Worker | int, campaign: Campaign, *, until: datetime | None = None) -> list[Check]:
    """Every checked answer of the worker in the campaign (submitted up to ``until``): gold sentences and traps,
    equal answers of one submission summed by the database (one row per class, outcome, stratum and trap
    weight), since every submission asks again and a worker's history grows with each item. Both queries start from the worker's assignments
    (a submission stores its judgements under its assignment's worker), the selective index."""
    worker_id = worker if isinstance(worker, int) else worker.pk
    params: list = [worker_id, AssignmentStatus.SUBMITTED, campaign.pk]
    until_sql = ""
    if until is not None:
        until_sql, params = " AND a.submitted_at <= %s", [*params, until]
    tables = {
        "judgement": SentenceJudgement._meta.db_table, "assignment": Assignment._meta.db_table,
        "item": Item._meta.db_table, "gold": GoldLabel._meta.db_table, "answer": TrapAnswer._meta.db_table,
        "trap": Trap._meta.db_table, "summary": Summary._meta.db_table, "document": Document._meta.db_table,
        "edit": Edit._meta.db_table,
    }
    # Gold is scored on Yes/No only: which category a real error belongs to is where honest annotators
    # disagree most (FRANK's own), and the category of imported gold is often unknown.
    # Grouped by submission too (the window of recent work) and by stratum (data set, overlap band).
    gold_sql = f"""
        SELECT g.factual, COALESCE(j.factual = g.factual, FALSE), g.public, d.dataset, {_band_sql('g.overlap')}, a.submitted_at, COUNT(*)
        FROM {tables['assignment']} a
        JOIN {tables['item']} i ON i.id = a.item_id
        JOIN {tables['document']} d ON d.id = i.document_id
        JOIN {tables['judgement']} j ON j.assignment_id = a.id
        JOIN {tables['gold']} g ON g.summary_id = j.summary_id AND g.sentence_index = j.sentence_index
        WHERE a.worker_id = %s AND a.status = %s AND i.campaign_id = %s{until_sql}
        GROUP BY 1, 2, 3, 4, 5, 6"""
    trap_sql = f"""
        SELECT t.expected_factual, t_answer.correct, t.weight, t.source,
               COALESCE(ed.public_labels, '') <> '' AND e.id IS NULL, d.dataset, {_band_sql('t.overlap')}, a.submitted_at, COUNT(*)
        FROM {tables['answer']} t_answer
        JOIN {tables['assignment']} a ON a.id = t_answer.assignment_id
        JOIN {tables['item']} i ON i.id = a.item_id
        JOIN {tables['document']} d ON d.id = i.document_id
        JOIN {tables['trap']} t ON t.id = t_answer.trap_id
        LEFT JOIN {tables['summary']} es ON es.id = t.edited_summary_id
        LEFT JOIN {tables['document']} ed ON ed.id = es.document_id
        LEFT JOIN {tables['edit']} e ON e.edited_summary_id = t.edited_summary_id
        WHERE a.worker_id = %s AND a.status = %s AND i.campaign_id = %s{until_sql}
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8"""
    with connection.cursor() as cursor:
        cursor.execute(gold_sql, params)
        checks = [
            Check(bool(expected), bool(correct), float(n), "gold", int(n), public=bool(public), stratum=f"{dataset}/{band}", at=at)
            for expected, correct, public, dataset, band, at, n in cursor.fetchall()
        ]
        cursor.execute(trap_sql, params)
        checks += [
            Check(bool(expected), bool(correct), float(weight) * n, "trap", int(n), from_page=source == TrapSource.MECHANICAL,
                  public=bool(public), stratum=f"{dataset}/{band}", at=at)
            for expected, correct, weight, source, public, dataset, band, at, n in cursor.fetchall()
        ]
    return checks


def worker_quality(
    participation: Participation, *, until: datetime | None = None, in_submission: bool = False, for_bonus: bool = False,
) -> Quality:
    """The worker's balanced quality score in the participation's campaign (answers submitted up to ``until``).

    ``in_submission``: called while the participation's latest submission is being stored (``until`` is its
    time), so the answers the quality rules just scored for it are the same ones and are reused.
    ``for_bonus``: the score a bonus is decided on, public labels left out unless the campaign accepts them
    (:func:`private_quality`).
    """
    campaign = participation.campaign
    checks = _participation_checks(participation, until=until, in_submission=in_submission)
    if for_bonus and not campaign.bonus_on_public_labels:
        return private_quality(checks, campaign.control_min_per_class)
    return balanced_score(checks, campaign.control_min_per_class)


def scored_checks(participation: Participation) -> list[Check] | None:
    """The checks the block rules scored in the submission under way (None outside one): read without a query."""
    scored = getattr(participation, "_submission_checks", None)
    return scored[1] if scored is not None and scored[0] == participation.items_submitted else None


def _participation_checks(participation: Participation, *, until: datetime | None, in_submission: bool) -> list[Check]:
    scored = getattr(participation, "_submission_checks", None)
    if in_submission and scored is not None and scored[0] == participation.items_submitted:
        return scored[1]
    return worker_checks(participation.worker_id, participation.campaign, until=until)


def worker_recent_quality(participation: Participation, *, until: datetime | None = None, in_submission: bool = False) -> Quality:
    """:func:`recent_quality` of the worker in the participation's campaign (as :func:`worker_quality`)."""
    checks = _participation_checks(participation, until=until, in_submission=in_submission)
    return recent_quality(checks, participation.campaign.control_min_per_class)


def private_quality(checks: Sequence[Check], min_per_class: int) -> Quality:
    """The balanced score over the checks whose answer is not published: a worker holding a benchmark's released
    labels (FRANK, QAGS, BUMP, AggreFact) answers its gold right without reading, so that gold says nothing
    about the worker; it still counts towards blocking, where agreeing with it is the least to expect."""
    quality = balanced_score([c for c in checks if not c.public], min_per_class)
    return replace(quality, public_checks=sum(c.count for c in checks if c.public), public_left_out=True)


def campaign_has_checks(campaign: Campaign) -> bool:
    """Whether the campaign can score its workers: it has gold labels or shows traps."""
    return campaign.trap_rate > 0 or GoldLabel.objects.filter(summary__document__campaign=campaign).exists()


def quality_block_reason(participation: Participation) -> str | None:
    """Why the worker should be blocked for their answers on known labels, or None.

    Three balanced scores, each only once decisive: all checked answers (gold and weighted traps) below
    ``control_block_threshold`` once each class has ``control_min_per_class``; the most recent of them
    (:func:`recent_quality`) below it; and the trap answers alone below ``trap_block_threshold`` once there are
    ``trap_min_count`` of them, of both classes.
    """
    campaign = participation.campaign
    checks = worker_checks(participation.worker_id, campaign)
    # Kept for the pay rules of the same submission (under the participation's lock, nothing else is
    # submitted in between): they score the same answers, and the history grows with every item.
    participation._submission_checks = (participation.items_submitted, checks)
    quality = balanced_score(checks, campaign.control_min_per_class)
    if quality.score is not None and quality.score < campaign.control_block_threshold:
        return f"answers disagree with known labels: {quality.describe()}, below the required {campaign.control_block_threshold:.2f}"[:300]
    recent = recent_quality(checks, campaign.control_min_per_class)
    if recent.score is not None and recent.score < campaign.control_block_threshold:
        return f"recent answers disagree with known labels: {describe_recent(recent)}, below the required {campaign.control_block_threshold:.2f}"[:300]
    traps = [c for c in checks if c.source == "trap"]
    if sum(c.count for c in traps) >= campaign.trap_min_count:
        # Pooled, not within overlap bands: this rule catches a worker who fails the traps (the mechanical ones
        # differ from the article as their kind says, which is what they test); bonuses never rest on them.
        trap_quality = balanced_score([replace(c, stratum="") for c in traps], 1)
        if trap_quality.score is not None and trap_quality.score < campaign.trap_block_threshold:
            right = sum(c.count for c in traps if c.correct)
            return (
                f"only {right} of {sum(c.count for c in traps)} control sentences were judged correctly "
                f"(balanced over correct and wrong ones: {trap_quality.score:.0%}, below the required {campaign.trap_block_threshold:.0%})"
            )
    return None


# ---------------------------------------------------------------- what the page alone predicts of the gold

#: Above this, a predictor reading only the page separates the campaign's gold (the control page warns).
PREDICTABILITY_WARNING = 0.6
#: The cheap page features a script computes: word overlap with the article, sentence length and position,
#: summary length (embedding overlap is left out: no model weights are shipped or downloaded).
PAGE_FEATURES = ("word overlap", "sentence length", "sentence position", "summary length")


@dataclass(frozen=True)
class Predictor:
    """One predictor of the gold from page features, and its best balanced score pooled and within strata."""

    name: str
    pooled: float | None
    stratified: float | None


@dataclass(frozen=True)
class Predictability:
    gold: int
    predictors: list[Predictor]

    @property
    def best(self) -> Predictor | None:
        scored = [p for p in self.predictors if p.stratified is not None]
        return max(scored, key=lambda p: p.stratified) if scored else None

    @property
    def best_pooled(self) -> Predictor | None:
        scored = [p for p in self.predictors if p.pooled is not None]
        return max(scored, key=lambda p: p.pooled) if scored else None

    @property
    def warning(self) -> bool:
        return self.best is not None and self.best.stratified > PREDICTABILITY_WARNING


def gold_page_features(campaign: Campaign) -> tuple[list[list[float]], list[str], list[bool], list[str]]:
    """Per gold sentence of the campaign: its page features (:data:`PAGE_FEATURES`), data set, label and stratum."""
    record_overlaps(campaign)
    counts: dict[int, list[str]] = {}
    features, datasets, labels, strata = [], [], [], []
    for label in GoldLabel.objects.filter(summary__document__campaign=campaign).select_related("summary__document").order_by("pk"):
        summary = label.summary
        if summary.pk not in counts:
            counts[summary.pk] = summary_sentences(summary)
        sentences = counts[summary.pk]
        text = sentences[label.sentence_index] if label.sentence_index < len(sentences) else ""
        features.append([label.overlap or 0.0, len(_WORD.findall(text.lower())), label.sentence_index, len(sentences)])
        datasets.append(summary.document.dataset)
        labels.append(label.factual)
        strata.append(f"{summary.document.dataset}/{overlap_band(label.overlap)}")
    return features, datasets, labels, strata


def _scores(predicted, labels: Sequence[bool], strata: Sequence[str]) -> tuple[float | None, float | None]:
    """(pooled, within strata) balanced score of ``predicted``, by :func:`balanced_score` on the answers summed."""
    counts = Counter(zip(strata, labels, (bool(p) == y for p, y in zip(predicted, labels))))
    checks = [Check(y, right, float(n), count=n, stratum=stratum) for (stratum, y, right), n in counts.items()]
    quality = balanced_score(checks, 1)
    return quality.pooled_score, quality.score


def gold_predictability(campaign: Campaign) -> Predictability:
    """How well cheap predictors computed from the page alone separate the campaign's gold: for each page
    feature the best one-threshold rule (either direction, chosen on half the gold and scored on the other), a per-data-set rule, and a logistic regression
    over all of them (5-fold cross-validated); each with its best balanced score pooled and within strata of
    data set and overlap band (what workers are scored by: near 0.5 when the page does not give gold away)."""
    import numpy as np

    features, datasets, labels, strata = gold_page_features(campaign)
    predictors: list[Predictor] = []
    if len(set(labels)) < 2:
        return Predictability(gold=len(labels), predictors=predictors)
    matrix, y = np.asarray(features, dtype=float), np.asarray(labels, dtype=bool)
    # Thresholds are chosen on one half of the gold and scored on the other (both ways): the best of 80 rules
    # picked and scored on the same few hundred sentences would look predictive by chance alone.
    fold = np.random.default_rng(0).permutation(len(labels)) % 2
    labels_a, strata_a = np.asarray(labels), np.asarray(strata)

    def best_rule(values, train, which: int) -> tuple[float, bool]:
        best = (-1.0, 0.0, True)
        for threshold in np.unique(np.quantile(values[train], np.linspace(0, 1, 41))):
            for above in (True, False):
                predicted = (values[train] >= threshold) == above
                score = _scores(predicted, labels_a[train].tolist(), strata_a[train].tolist())[which] or 0.0
                best = max(best, (score, threshold, above), key=lambda b: b[0])
        return best[1], best[2]

    for column, name in enumerate(PAGE_FEATURES):
        values = matrix[:, column]
        scores = []
        for which in (0, 1):  # the rule best pooled, then the rule best within strata
            predicted = np.zeros(len(labels), dtype=bool)
            for k in (0, 1):
                threshold, above = best_rule(values, fold != k, which)
                predicted[fold == k] = (values[fold == k] >= threshold) == above
            scores.append(_scores(predicted, labels, strata)[which])
        predictors.append(Predictor(f"{name} (best threshold)", scores[0], scores[1]))
    factual_share = y.mean()
    by_dataset = {name: y[[d == name for d in datasets]].mean() for name in set(datasets)}
    pooled, stratified = _scores([by_dataset[d] > factual_share for d in datasets], labels, strata)
    predictors.append(Predictor("data set", pooled, stratified))
    folds = min(5, int(min(y.sum(), (~y).sum())))
    if folds >= 2:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        names = sorted(set(datasets))
        onehot = np.asarray([[d == name for name in names] for d in datasets], dtype=float)
        model = make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000))
        predicted = cross_val_predict(model, np.hstack([matrix, onehot]), y, cv=folds)
        pooled, stratified = _scores(predicted, labels, strata)
        predictors.append(Predictor("logistic regression on all of them", pooled, stratified))
    return Predictability(gold=len(labels), predictors=predictors)


def cached_gold_predictability(campaign: Campaign) -> Predictability:
    """:func:`gold_predictability` for the control page, computed again only when the gold changed."""
    from django.core.cache import cache
    from django.db.models import Count, Max

    gold = GoldLabel.objects.filter(summary__document__campaign=campaign).aggregate(n=Count("id"), last=Max("updated_at"))
    key = f"factlab:gold-predictability:{campaign.pk}:{gold['n']}:{gold['last'].timestamp() if gold['last'] else 0}"
    result = cache.get(key)
    if result is None:
        result = gold_predictability(campaign)
        cache.set(key, result, timeout=7 * 24 * 3600)
    return result


# ---------------------------------------------------------------- handing out control items

def arrange_candidates(campaign: Campaign, candidates: list[Item], rng: random.Random | None = None) -> list[Item]:
    """Order a claim's candidate window so that about ``control_share`` of a worker's items are control items.

    Each claim draws, independently and at random, whether it prefers a control item (probability
    ``control_share``) or a plain one; items of the preferred kind come first, the window's order kept
    within each kind. So control items come at random positions in each worker's sequence (not every k-th),
    and a window holding only one kind is served as it is.
    """
    if len({item.is_control for item in candidates}) < 2:
        return candidates
    share = campaign.control_share
    want_control = share >= 1 or (share > 0 and (rng or random).random() < share)
    return sorted(candidates, key=lambda item: item.is_control != want_control)  # stable: window order kept


# ---------------------------------------------------------------- certain crowd labels

def gold_from_crowd(campaign: Campaign) -> int:
    """Turn certain crowd labels into gold (``campaign.crowd_gold_posterior`` > 0); returns how many were added.

    Rule (one-coin naive Bayes, named here so it can be audited): only collected answers of *trusted*
    workers count, i.e. workers whose balanced score is decisive and at least ``control_block_threshold``,
    and only sentences with at least ``MIN_CROWD_WORKERS`` of them. Each such worker is right with
    probability ``p`` = their balanced score (capped at 0.99); with a uniform prior, the posterior of
    "factual" is ``sigmoid(sum over answers of ±log(p / (1 - p)))``. A sentence whose posterior of its
    more likely class is at least ``crowd_gold_posterior`` becomes gold (source "crowd"); a sentence that
    has gold keeps it.
    """
    threshold = campaign.crowd_gold_posterior
    if threshold <= 0:
        return 0
    accuracy: dict[int, float] = {}
    for participation in Participation.objects.filter(campaign=campaign).select_related("campaign"):
        quality = worker_quality(participation)
        if quality.score is not None and quality.score >= campaign.control_block_threshold:
            accuracy[participation.worker_id] = min(quality.score, 0.99)
    if not accuracy:
        return 0
    existing = set(GoldLabel.objects.filter(summary__document__campaign=campaign).values_list("summary_id", "sentence_index"))
    evidence: dict[tuple[int, int], list[tuple[bool, float]]] = defaultdict(list)
    for summary_id, index, worker_id, factual in SentenceJudgement.objects.filter(
        summary__document__campaign=campaign, source=JudgementSource.COLLECTED, worker_id__in=list(accuracy),
        assignment__status=AssignmentStatus.SUBMITTED,
    ).values_list("summary_id", "sentence_index", "worker_id", "factual"):
        if (summary_id, index) not in existing:
            evidence[(summary_id, index)].append((factual, accuracy[worker_id]))
    new = []
    for (summary_id, index), answers in evidence.items():
        if len(answers) < MIN_CROWD_WORKERS:
            continue
        log_odds = sum((1 if factual else -1) * math.log(p / (1 - p)) for factual, p in answers)
        posterior_factual = 1 / (1 + math.exp(-log_odds))
        factual = posterior_factual >= 0.5
        posterior = posterior_factual if factual else 1 - posterior_factual
        if posterior >= threshold:
            new.append(GoldLabel(
                summary_id=summary_id, sentence_index=index, factual=factual, source=GoldSource.CROWD,
                note=f"posterior {posterior:.3f} from {len(answers)} trusted workers",
            ))
    with transaction.atomic():
        GoldLabel.objects.bulk_create(new, ignore_conflicts=True)
        refresh_control_items(campaign)
    return len(new)
