"""Independence of workers: answers copied from another worker are not paid as independent work.

Control sentences (gold, traps) cannot show copying: a copier of a good reader scores as well as the reader.
What shows it are the *other* sentences, whose labels nobody knows: independent readers disagree on a fair
share of them (FRANK's crowd workers reach a kappa near 0.6), a copier agrees with the one it copies on all.

For each pair of workers with at least ``MIN_SHARED_ITEMS`` submitted items and ``MIN_SHARED_SENTENCES``
non-control sentences in common, compared when either submits a shared item:

* **agreement beyond chance**: Cohen's kappa of their factual labels on those sentences (undefined, so never
  a flag, when one of them gave a single label everywhere: nothing to copy), and the share of identical
  answers (label and error categories);
* **the campaign's baseline**: the same kappa pooled over the campaign's other pairs (recent judgements),
  so "far beyond" is measured against what this campaign's independent workers show;
* **order and timing**: on how many shared items each submitted after the other (only the second can copy),
  and how many per-sentence times are identical.

A pair is flagged (:class:`~annotate.models.CopyFlag`) when its kappa is at least ``KAPPA_FLAG`` and at least
``BASELINE_MARGIN`` above the baseline (when the campaign has one), with ``IDENTICAL_FLAG`` of the answers
identical. Flags join into groups (:func:`copy_groups`). A flagged worker who submitted after a partner on
at least ``FOLLOW_SHARE`` of their shared items (a follower: the reader who is copied answered first) has their
pay held for review at their next submission, with the evidence as the reason: what the ledger owed them
and was not paid out yet is moved into held decisions (reversal entries), released by the admin's review
(:func:`annotate.services.pay_rules.release_held_pay`). Label models count a group once
(``metrics_service.selectors.judgements_frame``). An admin who finds a pair independent deletes its flag.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from django.db import connection
from django.db.models import Exists, OuterRef, Q

from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Campaign,
    CopyFlag,
    GoldLabel,
    PairTally,
    Participation,
    PayDecision,
    PayDecisionKind,
    SentenceJudgement,
)
from annotate.protocols import protocol_for
from annotate.rows import row_by_key_sql

from .ledger import add_ledger_entry

MIN_SHARED_ITEMS = 4
MIN_SHARED_SENTENCES = 10
KAPPA_FLAG = 0.9
IDENTICAL_FLAG = 0.95
BASELINE_MARGIN = 0.25
FOLLOW_SHARE = 1 / 3
#: Judgements read for the campaign's baseline (the most recent ones): the cost does not grow with the campaign.
BASELINE_JUDGEMENTS = 4000
BASELINE_MIN_PAIRS = 3
HELD_COPY_PREFIX = "held-copy"


@dataclass(frozen=True)
class PairStats:
    """What two workers' answers on their shared non-control sentences show."""

    shared_items: int
    shared_sentences: int
    identical: int
    same_times: int
    kappa: float | None
    first_after_second: int  # shared items the first worker submitted after the second
    second_after_first: int


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no labels; None when chance agreement is certain (no variation).

    Examples
    --------
    >>> cohen_kappa([(True, True), (False, False), (True, False), (False, False)])
    0.5
    """
    return kappa_from_counts(len(pairs), sum(a == b for a, b in pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs))


def kappa_from_counts(n: int, agree: int, yes_first: int, yes_second: int) -> float | None:
    """Cohen's kappa of two raters' yes/no labels from their counts: ``n`` pairs, ``agree`` of them equal,
    ``yes_first`` and ``yes_second`` the yeses of each; None when chance agreement is certain.

    Examples
    --------
    >>> kappa_from_counts(4, 3, 2, 1)
    0.5
    >>> kappa_from_counts(3, 3, 3, 3) is None
    True
    """
    if n == 0:
        return None
    observed = agree / n
    pa, pb = yes_first / n, yes_second / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if pa in (0.0, 1.0) or pb in (0.0, 1.0) or expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def _non_control(queryset):
    """Judgements of sentences without a gold label (trap answers are stored apart and never come here)."""
    gold = GoldLabel.objects.filter(summary_id=OuterRef("summary_id"), sentence_index=OuterRef("sentence_index"))
    return queryset.exclude(Exists(gold))


def _pairs_sql(partner_count: int, *, one_assignment: bool = False) -> str:
    """One query comparing a worker with each of several others on the items both submitted in a campaign:
    per partner, the shared items, who submitted each later, and on their shared non-control sentences the
    counts kappa, identical answers (label and the same set of categories) and identical times rest on.
    ``one_assignment``: only the item of the worker's assignment ``%(assignment)s`` (what a submission adds).
    The named partners are one placeholder each, not an array: the demo's SQLite runs the same query."""
    named = ", ".join(f"%(partner_{k})s" for k in range(partner_count)) or "NULL"
    # The same set of categories: containment both ways on PostgreSQL's jsonb; the demo's SQLite keeps JSON as
    # text, where the lists compare as written (answers store their categories in the taxonomy's order).
    mine, theirs = "COALESCE(mine_categories, '[]')", "COALESCE(theirs_categories, '[]')"
    same_categories = f"{mine} @> {theirs} AND {theirs} @> {mine}" if connection.vendor == "postgresql" else f"{mine} = {theirs}"
    assignment, item = Assignment._meta.db_table, Assignment._meta.get_field("item").related_model._meta.db_table
    judgement, gold = SentenceJudgement._meta.db_table, GoldLabel._meta.db_table
    # The two workers' answers on each shared non-control sentence. An assignment's judgements are its worker's,
    # so each side is found by its assignment alone. PostgreSQL reads them per shared item (LATERAL: two probes of
    # the assignment index each), whatever its estimates: planned as a plain join it had scanned every judgement
    # of the worker, or of the table, against the shared items (20-36 ms a submission on a worker's ~200 items,
    # against ~9 ms). The demo's SQLite has no LATERAL, and its nested loops probe the same indexes.
    answers = ("jm.factual AS mine_factual, jt.factual AS theirs_factual, jm.categories AS mine_categories, "
               "jt.categories AS theirs_categories, jm.lead_time_seconds AS mine_seconds, jt.lead_time_seconds AS theirs_seconds")
    judged = f"""{judgement} jm
                JOIN {judgement} jt ON jt.assignment_id = s.theirs_id AND jt.summary_id = jm.summary_id AND jt.sentence_index = jm.sentence_index
                WHERE jm.assignment_id = s.mine_id
                  AND NOT EXISTS (SELECT 1 FROM {gold} g WHERE g.summary_id = jm.summary_id AND g.sentence_index = jm.sentence_index)"""
    # One submission's assignment by its key, not found among all of the worker's assignments (row_by_key_sql).
    mine_from = f"{row_by_key_sql(Assignment, '%(assignment)s')} a" if one_assignment else f"{assignment} a"
    if connection.vendor == "postgresql":
        answered = f"SELECT s.partner, x.* FROM shared s CROSS JOIN LATERAL (SELECT {answers} FROM {judged}) x"
    else:
        answered = f"SELECT s.partner, {answers} FROM shared s CROSS JOIN {judged}"
    return f"""
        WITH mine AS (
            SELECT a.id, a.item_id, a.submitted_at FROM {mine_from} JOIN {item} i ON i.id = a.item_id
            WHERE a.worker_id = %(me)s AND a.status = %(submitted)s AND i.campaign_id = %(campaign)s),
        shared AS (
            SELECT o.worker_id AS partner, m.id AS mine_id, o.id AS theirs_id, m.submitted_at AS mine_at, o.submitted_at AS theirs_at
            FROM {assignment} o JOIN mine m ON m.item_id = o.item_id
            WHERE o.status = %(submitted)s AND o.worker_id <> %(me)s AND (o.worker_id IN ({named}) OR o.worker_id IN (
                SELECT p.worker_id FROM {assignment} p WHERE p.item_id = %(item)s AND p.status = %(submitted)s))),
        items AS (
            SELECT partner, COUNT(*) AS shared_items, COUNT(*) FILTER (WHERE mine_at > theirs_at) AS mine_after,
                   COUNT(*) FILTER (WHERE theirs_at > mine_at) AS theirs_after
            FROM shared GROUP BY partner),
        answered AS ({answered}),
        sentences AS (
            SELECT partner, COUNT(*) AS n, COUNT(*) FILTER (WHERE mine_factual = theirs_factual) AS agree,
                   COUNT(*) FILTER (WHERE mine_factual) AS mine_yes, COUNT(*) FILTER (WHERE theirs_factual) AS theirs_yes,
                   COUNT(*) FILTER (WHERE mine_factual = theirs_factual AND {same_categories}) AS identical,
                   COUNT(*) FILTER (WHERE mine_seconds = theirs_seconds) AS same_times
            FROM answered GROUP BY partner)
        SELECT i.partner, i.shared_items, i.mine_after, i.theirs_after, COALESCE(s.n, 0), COALESCE(s.agree, 0),
               COALESCE(s.mine_yes, 0), COALESCE(s.theirs_yes, 0), COALESCE(s.identical, 0), COALESCE(s.same_times, 0)
        FROM items i LEFT JOIN sentences s ON s.partner = i.partner"""


class PairCounts(NamedTuple):
    """The counts a pair's statistics are computed from, which add up item by item (the first worker's view)."""

    shared_items: int
    first_after_second: int
    second_after_first: int
    shared_sentences: int
    agree: int
    first_yes: int
    second_yes: int
    identical: int
    same_times: int

    def swapped(self) -> PairCounts:
        """The same counts seen from the second worker."""
        return PairCounts(self.shared_items, self.second_after_first, self.first_after_second, self.shared_sentences, self.agree,
                          self.second_yes, self.first_yes, self.identical, self.same_times)

    def stats(self) -> PairStats:
        return PairStats(
            shared_items=self.shared_items, shared_sentences=self.shared_sentences, identical=self.identical,
            same_times=self.same_times, kappa=kappa_from_counts(self.shared_sentences, self.agree, self.first_yes, self.second_yes),
            first_after_second=self.first_after_second, second_after_first=self.second_after_first,
        )


def pair_counts(campaign: Campaign, me: int, partners: Sequence[int] = (), *, item_id: int | None = None,
                assignment_id: int | None = None) -> dict[int, PairCounts]:
    """Compare worker ``me`` with each of ``partners`` and of the other workers who submitted item ``item_id``
    on the items both submitted in ``campaign`` (``me`` first); partners without a shared item are left out.
    ``assignment_id``: only on the item of this submitted assignment of ``me`` (``item_id``). One query."""
    params = {
        "me": me, "item": item_id, "submitted": AssignmentStatus.SUBMITTED, "campaign": campaign.pk, "assignment": assignment_id,
        **{f"partner_{k}": partner for k, partner in enumerate(partners)},
    }
    with connection.cursor() as cursor:
        cursor.execute(_pairs_sql(len(partners), one_assignment=assignment_id is not None), params)
        rows = cursor.fetchall()
    return {partner: PairCounts(*counts) for partner, *counts in rows}


def pairs_stats(campaign: Campaign, me: int, partners: Sequence[int] = (), *, item_id: int | None = None) -> dict[int, PairStats]:
    """:func:`pair_counts` over the whole history, as statistics: a pair's counts from scratch (one query whose
    cost grows with the pair's shared history; a submission reads the kept tallies instead)."""
    return {partner: counts.stats() for partner, counts in pair_counts(campaign, me, partners, item_id=item_id).items()}


def pair_stats(campaign: Campaign, first_id: int, second_id: int) -> PairStats:
    """Compare two workers on the items both submitted in ``campaign``."""
    return pairs_stats(campaign, first_id, [second_id]).get(second_id, NOTHING_SHARED)


_TALLIED = ("shared_items", "a_after_b", "b_after_a", "shared_sentences", "agree", "a_yes", "b_yes", "identical", "same_times")


def tally_submission_pairs(participation: Participation, assignment: Assignment) -> dict[int, PairStats]:
    """Add the item of ``assignment``, just submitted, to the tallies of the worker's pairs with each co-worker
    who submitted it, and return those pairs' statistics over their whole shared history (the worker first),
    kept for the submission's review of pairs (:func:`review_pairs`).

    Called in every submission of a protocol with sentence answers, inside its transaction, after
    :func:`~annotate.services.assignments.lock_worker_assignment` took the item's turn: submissions of one item
    take turns (a PostgreSQL lock held to their commit; the demo's SQLite has one writer at a time), so that
    each shared item is added once, by the second of the two submissions, which sees the first. Usually two
    queries (the item compared, the tallies updated): the cost does not grow with a pair's shared history.
    Tallies of an older checks version, or of a pair that has none yet, are counted from the history."""
    if not protocol_for(participation.campaign.kind).labels_sentences:
        return {}
    campaign, me = participation.campaign, participation.worker_id
    on_item = pair_counts(campaign, me, item_id=assignment.item_id, assignment_id=assignment.pk)
    added = {_pair(me, partner): _first(me, partner, counts) for partner, counts in on_item.items()}
    totals = _add_to_current_tallies(campaign, added) if added else {}
    if len(totals) < len(added):
        totals.update(_tally_again(campaign, me, {pair: counts for pair, counts in added.items() if pair not in totals}))
    stats = {partner: _first(me, partner, totals[_pair(me, partner)]).stats() for partner in on_item}
    participation._submission_pairs = (assignment.pk, stats)
    return stats


def submission_pairs(participation: Participation, assignment: Assignment) -> dict[int, PairStats] | None:
    """What :func:`tally_submission_pairs` returned for ``assignment`` in the submission under way (None: not
    tallied in this request)."""
    kept = getattr(participation, "_submission_pairs", None)
    return kept[1] if kept is not None and kept[0] == assignment.pk else None


def _pair(me: int, partner: int) -> tuple[int, int]:
    return (me, partner) if me < partner else (partner, me)


def _first(me: int, partner: int, counts: PairCounts) -> PairCounts:
    """Counts of ``me`` and ``partner`` seen from ``me`` turned to the tally's order (lower id first), and back."""
    return counts if me < partner else counts.swapped()


def _pair_rows(rows: Sequence[tuple[int, ...]]) -> tuple[str, list]:
    """``rows`` of integers (at least one, all of one width) as a table's SQL and its parameters. On PostgreSQL one
    array a column (``SELECT * FROM UNNEST(…)``): the statement's text and parameter count stay the same whatever
    the number of co-workers, so psycopg converts it once and PostgreSQL prepares it once per connection, where each
    count of pairs was a statement of its own with a parameter per value. Elsewhere (the demo's SQLite) a typed
    ``VALUES`` list."""
    width = len(rows[0])
    if connection.vendor == "postgresql":
        return f"SELECT * FROM UNNEST({', '.join(['CAST(%s AS BIGINT[])'] * width)})", [[row[i] for row in rows] for i in range(width)]
    values = ", ".join(["(" + ", ".join(["CAST(%s AS BIGINT)"] * width) + ")"] * len(rows))
    return f"VALUES {values}", [value for row in rows for value in row]


def _add_to_current_tallies(campaign: Campaign, added: dict[tuple[int, int], PairCounts]) -> dict[tuple[int, int], PairCounts]:
    """Add ``added`` (by pair, lower id first) to the pairs' tallies of the campaign's current checks version, in one
    statement; returns the new totals of the pairs it added to (the others have no current tally). On PostgreSQL
    the rows are locked in the pairs' order first, so that submissions adding to the same pairs queue up instead
    of deadlocking."""
    table = PairTally._meta.db_table
    rows = [(*pair, *added[pair]) for pair in sorted(added)]
    lock = " ORDER BY t.worker_a_id, t.worker_b_id FOR UPDATE OF t" if connection.vendor == "postgresql" else ""
    source, values = _pair_rows(rows)
    sql = f"""
        WITH item_counts(worker_a, worker_b, {", ".join(_TALLIED)}) AS ({source}),
        counted AS (
            SELECT t.id FROM {table} t JOIN item_counts c ON c.worker_a = t.worker_a_id AND c.worker_b = t.worker_b_id
            WHERE t.campaign_id = %s AND t.checks_version = %s{lock})
        UPDATE {table} SET {", ".join(f"{name} = {table}.{name} + c.{name}" for name in _TALLIED)}
        FROM item_counts c, counted
        WHERE {table}.id = counted.id AND c.worker_a = {table}.worker_a_id AND c.worker_b = {table}.worker_b_id
        RETURNING {table}.worker_a_id, {table}.worker_b_id, {", ".join(f"{table}.{name}" for name in _TALLIED)}"""
    with connection.cursor() as cursor:
        cursor.execute(sql, values + [campaign.pk, campaign.checks_version])
        found = cursor.fetchall()
    return {(a, b): PairCounts(*counts) for a, b, *counts in found}


def _tally_again(campaign: Campaign, me: int, added: dict[tuple[int, int], PairCounts]) -> dict[tuple[int, int], PairCounts]:
    """Tallies of pairs of ``me`` that had none of the current checks version: each counted from the whole history
    (this submission's item included), under the tally row's lock. A row is made first where there is none, so
    that a submission of the other worker that needs the same pair waits for this one, then adds its own item to
    the count made here; a pair counted by another submission meanwhile gets ``added`` (the item of ``me``
    it could not see) instead. Returns the pairs' totals.

    Plain statements (make the missing rows, lock the pairs' rows, write their counts), not the ORM's bulk
    writes: in a crowd most pairs share their first item (every submission then lands here), and building a
    bulk update's ``CASE`` per counted field cost the submission more CPU than all its other writes."""
    table = PairTally._meta.db_table
    pairs = sorted(added)
    zeros = ", ".join(["0"] * len(_TALLIED))
    made = ", ".join([f"(%s, %s, %s, NULL, {zeros})"] * len(pairs))
    lock = " FOR UPDATE OF t" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (campaign_id, worker_a_id, worker_b_id, checks_version, {', '.join(_TALLIED)}) "
            f"VALUES {made} ON CONFLICT DO NOTHING",
            [value for pair in pairs for value in (campaign.pk, *pair)],
        )
        # Locked in the pairs' order, as every writer of tallies locks them.
        source, values = _pair_rows(pairs)
        cursor.execute(
            f"WITH chosen(worker_a, worker_b) AS ({source}) "
            f"SELECT t.worker_a_id, t.worker_b_id, t.checks_version FROM {table} t "
            f"JOIN chosen ON chosen.worker_a = t.worker_a_id AND chosen.worker_b = t.worker_b_id "
            f"WHERE t.campaign_id = %s ORDER BY t.worker_a_id, t.worker_b_id{lock}",
            values + [campaign.pk],
        )
        versions = {(a, b): version for a, b, version in cursor.fetchall()}
    counted_meanwhile = {pair for pair, version in versions.items() if version == campaign.checks_version}
    totals = _add_to_current_tallies(campaign, {pair: added[pair] for pair in counted_meanwhile}) if counted_meanwhile else {}
    stale = [pair for pair in pairs if pair in versions and pair not in counted_meanwhile]
    if stale:
        partners = [b if a == me else a for a, b in stale]
        history = pair_counts(campaign, me, partners)
        for pair, partner in zip(stale, partners):
            totals[pair] = _first(me, partner, history[partner])
        _set_tallies(campaign, {pair: totals[pair] for pair in stale})
    return totals


def _set_tallies(campaign: Campaign, counted: dict[tuple[int, int], PairCounts]) -> None:
    """Write ``counted`` (by pair, lower id first) as the pairs' tallies of the campaign's current checks version,
    in one statement (the caller holds their rows' locks)."""
    table = PairTally._meta.db_table
    rows = [(*pair, *counted[pair]) for pair in sorted(counted)]
    source, values = _pair_rows(rows)
    sql = f"""
        WITH counted(worker_a, worker_b, {", ".join(_TALLIED)}) AS ({source})
        UPDATE {table} SET checks_version = %s, {", ".join(f"{name} = c.{name}" for name in _TALLIED)}
        FROM counted c
        WHERE {table}.campaign_id = %s AND {table}.worker_a_id = c.worker_a AND {table}.worker_b_id = c.worker_b"""
    with connection.cursor() as cursor:
        cursor.execute(sql, values + [campaign.checks_version, campaign.pk])


NOTHING_SHARED = PairStats(shared_items=0, shared_sentences=0, identical=0, same_times=0, kappa=None, first_after_second=0, second_after_first=0)


def campaign_baseline_kappa(campaign: Campaign, exclude: set[int]) -> float | None:
    """Kappa of factual labels pooled over the pairs of workers on the campaign's recent non-control
    sentences, leaving out the workers in ``exclude`` and flagged pairs; None with too few pairs."""
    flagged = set(CopyFlag.objects.filter(campaign=campaign).values_list("worker_a_id", "worker_b_id"))
    rows = _non_control(SentenceJudgement.objects.filter(summary__document__campaign=campaign, source="collected")).exclude(
        worker_id__in=exclude).order_by("-id").values_list("summary_id", "sentence_index", "worker_id", "factual")[:BASELINE_JUDGEMENTS]
    by_sentence: dict[tuple[int, int], list[tuple[int, bool]]] = defaultdict(list)
    for summary_id, index, worker_id, factual in rows:
        by_sentence[(summary_id, index)].append((worker_id, factual))
    pairs, seen_pairs = [], set()
    for votes in by_sentence.values():
        for i, (wa, fa) in enumerate(votes):
            for wb, fb in votes[i + 1:]:
                key = (min(wa, wb), max(wa, wb))
                if key not in flagged:
                    pairs.append((fa, fb))
                    seen_pairs.add(key)
    if len(seen_pairs) < BASELINE_MIN_PAIRS:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    p = sum(a + b for a, b in pairs) / (2 * n)  # pooled marginal: workers of a campaign are exchangeable
    expected = p * p + (1 - p) * (1 - p)
    return None if expected >= 1 else (observed - expected) / (1 - expected)


def _flag_threshold(baseline: float | None) -> float:
    if baseline is None:
        return KAPPA_FLAG
    return max(KAPPA_FLAG, min(baseline + BASELINE_MARGIN, 0.98))


def _evidence(stats: PairStats, a: int, b: int, baseline: float | None) -> str:
    base = "too few other pairs" if baseline is None else f"{baseline:.2f}"
    return (
        f"workers {a} and {b} answered {stats.identical} of {stats.shared_sentences} non-control sentences identically "
        f"over {stats.shared_items} shared items (kappa {stats.kappa:.2f}; the campaign's other pairs: {base}); "
        f"{a} submitted after {b} on {stats.first_after_second}, {b} after {a} on {stats.second_after_first}; "
        f"identical per-sentence times on {stats.same_times}"
    )[:300]


def review_pairs(participation: Participation, assignment: Assignment) -> list[CopyFlag]:
    """Compare the worker with every other worker who submitted ``assignment``'s item; store or refresh the
    flags of pairs that agree far beyond independent workers. Returns the flags stored now."""
    campaign = participation.campaign
    me = participation.worker_id
    stored: list[CopyFlag] = []
    compared = submission_pairs(participation, assignment)
    if compared is None:  # not tallied by this request (a submission judged again): from the history
        compared = pairs_stats(campaign, me, item_id=assignment.item_id)
    for partner, mine_first in sorted(compared.items()):  # flags numbered by partner, not by the tally's row order
        a, b = min(me, partner), max(me, partner)
        stats = mine_first if a == me else replace(
            mine_first, first_after_second=mine_first.second_after_first, second_after_first=mine_first.first_after_second,
        )
        if (stats.shared_items < MIN_SHARED_ITEMS or stats.shared_sentences < MIN_SHARED_SENTENCES or stats.kappa is None
                or stats.kappa < KAPPA_FLAG or stats.identical < IDENTICAL_FLAG * stats.shared_sentences):
            continue
        baseline = campaign_baseline_kappa(campaign, exclude={a, b})
        if stats.kappa < _flag_threshold(baseline):
            continue
        fields = {
            "shared_items": stats.shared_items, "shared_sentences": stats.shared_sentences, "identical_answers": stats.identical,
            "kappa": stats.kappa, "baseline_kappa": baseline, "a_after_b": stats.first_after_second,
            "b_after_a": stats.second_after_first,
            "evidence": _evidence(stats, a, b, baseline),
        }
        flag, _ = CopyFlag.objects.update_or_create(campaign=campaign, worker_a_id=a, worker_b_id=b, defaults=fields)
        stored.append(flag)
    return stored


def follower_evidence(participation: Participation) -> str | None:
    """The evidence of a flag in which this worker answered after their partner on at least ``FOLLOW_SHARE`` of
    the shared items (None: no such flag)."""
    me = participation.worker_id
    followed = []
    for flag in CopyFlag.objects.filter(Q(worker_a_id=me) | Q(worker_b_id=me), campaign_id=participation.campaign_id):
        after = flag.a_after_b if flag.worker_a_id == me else flag.b_after_a
        if after >= FOLLOW_SHARE * flag.shared_items:
            partner = flag.worker_b_id if flag.worker_a_id == me else flag.worker_a_id
            followed.append((-after / flag.shared_items, -flag.shared_items, partner, flag.evidence))
    # Two copiers of one reader follow each other too: the evidence named is the partner followed on the largest
    # share of the most items, then the one who joined first (the lower id), the same whichever flag was found first.
    return f"answers not independent: {min(followed)[3]}"[:300] if followed else None


def copy_hold(participation: Participation, assignment: Assignment) -> str | None:
    """Called at submission, with the participation locked: review the item's pairs and, when this worker
    follows a flagged partner, the reason to hold their pay. The first time, what the ledger owes them in the
    campaign and was not paid out yet is moved into held decisions (a reversal entry each), so a review
    releases it or not; returns the reason (None: independent as far as can be seen)."""
    if not protocol_for(participation.campaign.kind).labels_sentences:
        return None  # no sentence labels to compare (BUMP edits)
    if not review_pairs(participation, assignment) and not participation.pay_held:
        # Nothing compared now: an earlier flag held the pay when it was found (``pay_held``), and a release
        # clears it until a shared item brings new evidence. One query for a worker alone on the item.
        return None
    reason = follower_evidence(participation)
    if reason is not None and not participation.pay_held:
        hold_unpaid_entries(participation, reason)
    return reason


def hold_unpaid_entries(participation: Participation, reason: str, *, why: str = "answers not independent") -> None:
    """Move the worker's unpaid ledger entries of the campaign into held decisions (each once); ``why`` in short
    on each reversal entry, ``reason`` (the evidence) on each held decision."""
    entries = BonusEntry.objects.filter(
        worker_id=participation.worker_id, campaign_id=participation.campaign_id, paid_at__isnull=True, amount__gt=0,
    ).exclude(key__startswith=f"{HELD_COPY_PREFIX}:")
    for entry in entries.select_related("assignment").order_by("created_at", "id"):
        key = f"{HELD_COPY_PREFIX}:{entry.key}"
        if add_ledger_entry(key=key, participation=participation, assignment=entry.assignment, amount=-entry.amount,
                            reason=f"held for review: {why}", reversal=True):
            PayDecision.objects.get_or_create(key=key, defaults={
                "kind": PayDecisionKind.HELD, "worker_id": participation.worker_id, "campaign_id": participation.campaign_id,
                "assignment": entry.assignment, "amount": entry.amount, "reason": f"{entry.reason} held for review: {reason}"[:300],
            })


def copy_groups(campaign: Campaign) -> dict[int, int]:
    """``{worker id: group id}`` for the workers of flagged pairs: flags joined into groups (connected
    components), each named by its lowest worker id."""
    parent: dict[int, int] = {}

    def root(w: int) -> int:
        parent.setdefault(w, w)
        while parent[w] != w:
            parent[w] = parent[parent[w]]
            w = parent[w]
        return w

    for a, b in CopyFlag.objects.filter(campaign=campaign).values_list("worker_a_id", "worker_b_id"):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {w: root(w) for w in list(parent)}


def copy_flags(campaign: Campaign) -> list[dict]:
    """The campaign's flagged pairs with their group, for the control page."""
    groups = copy_groups(campaign)
    return [
        {"group": groups[f.worker_a_id], "worker_a": f.worker_a_id, "worker_b": f.worker_b_id, "kappa": f.kappa,
         "baseline": f.baseline_kappa, "shared_items": f.shared_items, "evidence": f.evidence,
         "a_name": f.worker_a.user.username if f.worker_a.user_id else "", "b_name": f.worker_b.user.username if f.worker_b.user_id else ""}
        for f in CopyFlag.objects.filter(campaign=campaign).select_related("worker_a__user", "worker_b__user").order_by("worker_a_id", "worker_b_id")
    ]

