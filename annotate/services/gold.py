"""Gold: the known answers control items are scored against, and the steps every protocol's gold goes through.

A control item is an ordinary item: its page is built by the same code from the same kind of data, so
nothing in its HTML, ids, order or timing tells it apart. Only the server knows which of its answers have
gold. The campaign's protocol says whether it has gold, which items hold it and how a worker's answers score
against it (``Protocol.has_gold``, ``control_item_ids``, ``gold_tallies``); the sentence-labelling protocols
answer from the helpers here (``sentence_*``), on :class:`~annotate.models.GoldLabel`, one label per summary
sentence, from three sources:

* imported data (:func:`gold_from_imported_labels`): each protocol stores the gold its formats' data implies
  (``Protocol.import_gold``: FRANK's human scores in ``annotate/frank/gold.py``, BUMP's accepted edits and
  references in ``annotate/bump/gold.py``), then per-sentence majorities of imported judgements (QAGS' three
  workers, FRANK's sentence file) are added here (:func:`imported_judgement_gold`);
* an admin or reviewer (:func:`set_gold_label`), in the browser or through the API;
* optionally, certain crowd labels (:func:`gold_from_crowd`).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.core.cache import cache
from django.db import connection, transaction

from annotate.models import (
    AssignmentStatus,
    Campaign,
    Document,
    GoldLabel,
    GoldSource,
    Item,
    JudgementSource,
    Participation,
    SentenceJudgement,
    Summary,
    Trap,
    TrapSource,
)
from annotate.protocols import GoldTally, all_protocols, protocol_for
from metrics_service.stats.majority import majority_label, modal_categories
from taxonomies.frank import BY_CODE  # a plain data module

from .checks_version import checks_changed
from .errors import InvalidSubmission
from .overlap import band_sql, record_overlaps, summary_sentences
from .quality import gold_tallies_of_rows, scored_assignments_sql, worker_quality

#: Imported judgements of one sentence needed before their majority is gold.
MIN_IMPORTED_VOTES = 3
#: Collected judgements of one sentence, from trusted workers, before a crowd label can become gold.
MIN_CROWD_WORKERS = 3


# ---------------------------------------------------------------- gold from data

class SentenceGoldRows:
    """Sentence gold labels that imported data implies, collected before they are stored: the first label of a
    sentence wins, and :meth:`store` keeps every label a sentence already has (an admin's is never overwritten).
    Labels that came with a published benchmark's data are public: anyone may hold them."""

    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign
        #: The campaign's summaries, with the reference an edit was made from and their document.
        # In id order, as everything that adds labels from it: rows in the order the table happens to hold them
        # (which rows an earlier delete freed) would number the same gold differently from one database to the next.
        self.summaries = list(Summary.objects.filter(document__campaign=campaign).select_related("edited_from", "document").order_by("pk"))
        self._published = {summary.pk: summary.document.public_labels for summary in self.summaries}
        self._rows: dict[tuple[int, int], GoldLabel] = {}

    def add(self, summary_id: int, index: int, factual: bool, category: str, note: str, *, reviewed_here: bool = False) -> None:
        """One sentence's label (``reviewed_here``: decided in this platform's review, so never public)."""
        benchmark = "" if reviewed_here else self._published.get(summary_id, "")
        note = f"{note}; public: released with {benchmark}" if benchmark else note
        self._rows.setdefault((summary_id, index), GoldLabel(
            summary_id=summary_id, sentence_index=index, factual=factual, category="" if factual else category,
            source=GoldSource.IMPORTED, note=note[:300], public=bool(benchmark),
        ))

    def store(self) -> int:
        """Store the labels of sentences that have none yet; returns how many were added."""
        existing = set(GoldLabel.objects.filter(summary__document__campaign=self.campaign).values_list("summary_id", "sentence_index"))
        new = [row for key, row in sorted(self._rows.items()) if key not in existing]  # ids in sentence order
        GoldLabel.objects.bulk_create(new, ignore_conflicts=True)
        return len(new)


def imported_judgement_gold(campaign: Campaign) -> int:
    """Store the majority of a sentence's imported judgements (at least :data:`MIN_IMPORTED_VOTES`) as its
    gold, with the single modal error category when there is one; a tie gives no gold (tie rule "none" of
    :func:`~metrics_service.stats.majority.majority_label`: gold must be known). Returns how many were added."""
    rows = SentenceGoldRows(campaign)
    votes: dict[tuple[int, int], list[tuple[bool, list[str]]]] = defaultdict(list)
    for summary_id, index, factual, categories in SentenceJudgement.objects.filter(
        summary__document__campaign=campaign, source=JudgementSource.IMPORTED
    ).order_by("pk").values_list("summary_id", "sentence_index", "factual", "categories"):
        votes[(summary_id, index)].append((factual, categories))
    for (summary_id, index), answers in votes.items():
        if len(answers) < MIN_IMPORTED_VOTES:
            continue
        factual = majority_label(sum(f for f, _ in answers), len(answers), tie="none")
        if factual is None:
            continue
        modal = modal_categories(cats for f, cats in answers if not f) if not factual else frozenset()
        category = next(iter(modal)) if len(modal) == 1 else ""
        rows.add(summary_id, index, factual, category, f"majority of {len(answers)} imported judgements")
    return rows.store()


def gold_from_imported_labels(campaign: Campaign) -> int:
    """Store the gold the campaign's imported data implies: each registered protocol's rules for data of its
    formats (``Protocol.import_gold``, in registry order, the first label of a sentence kept), then the
    majorities of imported judgements. A sentence that has gold keeps it (an admin's label is never
    overwritten). Marks the control items. Returns how many labels were added."""
    with transaction.atomic():
        added, seen = 0, set()
        for protocol in all_protocols():
            rule = type(protocol).import_gold
            if rule not in seen:  # kinds of one family share their rules
                seen.add(rule)
                added += protocol.import_gold(campaign)
        added += imported_judgement_gold(campaign)
        refresh_control_items(campaign)
    return added


# ---------------------------------------------------------------- control items

def refresh_control_items(campaign: Campaign, documents: Iterable[int] | None = None) -> int:
    """Set ``Item.is_control`` from the gold (of ``documents`` only, when given), as the campaign's protocol
    says which items hold gold (``Protocol.control_item_ids``); returns the control count."""
    items = Item.objects.filter(campaign=campaign)
    if documents is not None:  # one admin label need not read the whole campaign's gold
        documents = list(documents)
    record_overlaps(campaign, documents)  # every path that sets gold comes here
    if documents is not None:
        items = items.filter(document_id__in=documents)
    wanted = protocol_for(campaign.kind).control_item_ids(campaign, documents)
    control, plain = [], []
    for pk in items.values_list("pk", flat=True):
        (control if pk in wanted else plain).append(pk)
    Item.objects.filter(pk__in=control, is_control=False).update(is_control=True)
    Item.objects.filter(pk__in=plain, is_control=True).update(is_control=False)
    recount_bonus_evidence(campaign)
    return len(control)


def _evidence_key(campaign: Campaign) -> str:
    # The creation time too: a test database numbers its campaigns from 1 again, the cache outlives it.
    return f"factlab:bonus-evidence:{campaign.pk}:{campaign.created_at.timestamp() if campaign.created_at else 0}"


def _count_evidence(campaign: Campaign) -> tuple[int, int, int]:
    """(private erroneous gold, public erroneous gold, traps from human edits that count)."""
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign, factual=False)
    human_traps = Trap.objects.filter(document__campaign=campaign, source=TrapSource.BUMP_EDIT, expected_factual=False, weight__gt=0)
    return gold.filter(public=False).count(), gold.filter(public=True).count(), human_traps.count()


def remember_bonus_evidence(campaign: Campaign) -> tuple[int, int, int]:
    """Count the campaign's bonus evidence again and keep it for the pages (called where gold or traps change:
    every gold change refreshes the control items, traps change when pages are prepared), so that a task page
    reads it without a query on gold or traps."""
    counts = _count_evidence(campaign)
    cache.set(_evidence_key(campaign), counts, timeout=None)
    return counts


def recount_bonus_evidence(campaign: Campaign) -> None:
    """The campaign's gold or traps changed: count the evidence again now, and once more when the change
    commits (what other transactions changed meanwhile is counted then)."""
    remember_bonus_evidence(campaign)
    transaction.on_commit(lambda: remember_bonus_evidence(campaign))
    checks_changed(campaign)  # the workers' counts of checked answers are counted again


def bonus_evidence(campaign: Campaign, *, kept: bool = False) -> int:
    """Erroneous sentences whose label the page does not give away and which may pay a bonus: private gold (or
    public gold the campaign accepts knowingly) and traps made from human BUMP edits (the pay rules' evidence).
    ``kept``: as counted at the last change of gold or traps (:func:`remember_bonus_evidence`), so that a task
    page reads it without a query on them; else counted now."""
    counts = cache.get(_evidence_key(campaign)) if kept else None
    if counts is None:
        counts = remember_bonus_evidence(campaign)
    private, public, human_traps = counts
    return private + (public if campaign.bonus_on_public_labels else 0) + human_traps


def sentence_control_item_ids(campaign: Campaign, documents: list[int] | None = None) -> set[int]:
    """``Protocol.control_item_ids`` for sentence gold: an item of one summary (BUMP) is a control item when
    that summary has gold; a document item (FRANK) when one of the document's original summaries (not edits)
    has."""
    items = Item.objects.filter(campaign=campaign)
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign)
    if documents is not None:
        items, gold = items.filter(document_id__in=documents), gold.filter(summary__document_id__in=documents)
    gold_summaries = set(gold.values_list("summary_id", flat=True).distinct())
    gold_documents = set(gold.filter(summary__edited_from__isnull=True).values_list("summary__document_id", flat=True).distinct())
    return {
        pk for pk, document_id, summary_id in items.values_list("pk", "document_id", "summary_id")
        if (summary_id in gold_summaries if summary_id is not None else document_id in gold_documents)
    }


def sentence_gold_exists(campaign: Campaign) -> bool:
    """``Protocol.has_gold`` for sentence gold: some sentence of the campaign has a gold label."""
    return GoldLabel.objects.filter(summary__document__campaign=campaign).exists()


def campaign_has_checks(campaign: Campaign) -> bool:
    """Whether the campaign can score its workers: it has gold (as its protocol says) or shows traps."""
    return campaign.trap_rate > 0 or protocol_for(campaign.kind).has_gold(campaign)


def sentence_gold_tallies(
    worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
) -> list[GoldTally]:
    """``Protocol.gold_tallies`` for sentence judgements: the worker's yes/no answers on gold sentences,
    counted by the database per class, outcome, publicity, stratum (data set, overlap band) and submission
    (:func:`sentence_gold_statement`)."""
    sql, params = sentence_gold_statement(worker_id, campaign, until=until, assignment_id=assignment_id)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return gold_tallies_of_rows(cursor.fetchall())


def sentence_gold_statement(
    worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
) -> tuple[str, list]:
    """``Protocol.gold_tallies_statement`` for sentence judgements: counted by the database, since every submission
    asks again and a worker's history grows with each item. The query starts from the worker's assignments (a
    submission stores its judgements under its assignment's worker), the selective index.

    Gold is scored on Yes/No only: which category a real error belongs to is where honest annotators disagree
    most (FRANK's own), and the category of imported gold is often unknown."""
    assignments, assignment_params, where, where_params = scored_assignments_sql(worker_id, campaign, until=until, assignment_id=assignment_id)
    label_table = GoldLabel._meta.db_table
    if connection.vendor == "postgresql":
        # Each judgement's gold label by the unique (summary, sentence) index, in a LATERAL subquery that PostgreSQL
        # cannot turn into a hash join: one was planned from a new campaign's statistics and read every gold
        # label of every campaign at each submission. (The demo's SQLite has no LATERAL; it probes the index.)
        labels = f"""JOIN LATERAL (
            SELECT label.factual, label.public, label.overlap FROM {label_table} label
            WHERE label.summary_id = j.summary_id AND label.sentence_index = j.sentence_index LIMIT 1
        ) g ON TRUE"""
    else:
        labels = f"JOIN {label_table} g ON g.summary_id = j.summary_id AND g.sentence_index = j.sentence_index"
    gold_sql = f"""
        SELECT g.factual, COALESCE(j.factual = g.factual, FALSE), g.public, d.dataset, {band_sql('g.overlap')}, a.submitted_at, COUNT(*)
        FROM {assignments}
        JOIN {Item._meta.db_table} i ON i.id = a.item_id
        JOIN {Document._meta.db_table} d ON d.id = i.document_id
        JOIN {SentenceJudgement._meta.db_table} j ON j.assignment_id = a.id
        {labels}
        WHERE {where}
        GROUP BY 1, 2, 3, 4, 5, 6"""
    params = [*assignment_params, *where_params]
    return gold_sql, params


class SentenceGold:
    """The gold-and-quality hooks of a protocol whose gold is per summary sentence (a mixin before ``Protocol``):
    its items hold :class:`~annotate.models.GoldLabel` rows and its workers' sentence judgements are scored on
    them. Its data's own gold rules stay the protocol's (``import_gold``)."""

    def has_gold(self, campaign: Campaign) -> bool:
        return sentence_gold_exists(campaign)

    def control_item_ids(self, campaign: Campaign, documents: list[int] | None) -> set[int]:
        return sentence_control_item_ids(campaign, documents)

    def gold_tallies(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> list[GoldTally]:
        return sentence_gold_tallies(worker_id, campaign, until=until, assignment_id=assignment_id)

    def gold_tallies_statement(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> tuple[str, list] | None:
        return sentence_gold_statement(worker_id, campaign, until=until, assignment_id=assignment_id)

    def bonus_evidence(self, campaign: Campaign, *, kept: bool = False) -> int | None:
        return bonus_evidence(campaign, kept=kept)


# ---------------------------------------------------------------- gold set by people

def set_gold_label(
    summary: Summary, sentence_index: int, factual: bool, category: str = "", *, user=None, note: str = "", public: bool = False,
) -> GoldLabel:
    """An admin's or reviewer's label for one sentence (replaces any label it had); raises
    ``InvalidSubmission`` naming the bad field. Its items become control items. It is private unless
    ``public`` (e.g. the admin copied it from a published benchmark)."""
    if isinstance(sentence_index, bool) or not isinstance(sentence_index, int):
        raise InvalidSubmission("sentence_index must be an integer", field_errors={"sentence_index": "integer"})
    count = len(summary_sentences(summary))
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
    changed = labels.exclude(public=public).update(public=public)
    recount_bonus_evidence(campaign)  # public labels pay no bonus
    return changed


def remove_gold_label(label: GoldLabel) -> None:
    document = label.summary.document
    with transaction.atomic():
        label.delete()
        refresh_control_items(document.campaign, [document.pk])


# ---------------------------------------------------------------- certain crowd labels

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
    ).order_by("pk").values_list("summary_id", "sentence_index", "worker_id", "factual"):
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
