"""Answers a page feature predicts: a script's rule is held for review, with the evidence named.

The balanced score within strata of data set and overlap band gives a page rule ("No" when a sentence shares
under 70% of its words with its closest article sentence) about one half, but that is an average over the few
gold sentences a worker has met: in some claim orders such a rule stays just above the block threshold for
many items. What gives it away at once is the shape of its answers: a rule over one page feature answers
*every* sentence by that feature, so a single threshold on it predicts the worker's answers perfectly, also
on the sentences whose known label it gets wrong. A reader's answers follow what
the sentence says: they correlate with the overlap (abstractive sentences are wrong more often) but no
threshold separates them.

At each submission (sentence-labelling protocols), over the worker's last :data:`RECENT_ITEMS` items: for
each page feature a script computes (:data:`FEATURES`, kept in each assignment's layout when its page was
laid out: :func:`~annotate.services.overlap.sentence_page_features`), the best one-threshold rule's
balanced accuracy at predicting the worker's Yes/No answers (either direction). The worker's pay is held for
review when, with at least :data:`MIN_ANSWERS_PER_CLASS` answers of each kind, one feature's rule predicts
them with at least :data:`ALMOST_PERFECT` *and* the worker followed that rule where it contradicts the known
labels (gold, traps): on FRANK a careful worker's answers can follow the summary's length almost perfectly
too (XSum's one-sentence summaries are mostly wrong, and every one of them is gold), but where that rule and
the label disagree a reader answers as the label, a script as its rule. Never a rejection: an admin reads
the evidence and releases the pay or not (``pay_rules.release_held_pay``).

``benchmarks/predictable_answers.py`` measures the rule on FRANK: the share of honest workers (answers that
follow the gold, FRANK's ratings, or lean on the overlap with noise) held, and of page rules caught.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from django.core.cache import cache
from django.db import connection, transaction

from annotate.models import (
    Assignment,
    AssignmentStatus,
    GoldLabel,
    Item,
    Participation,
    SentenceJudgement,
    Trap,
    TrapAnswer,
)
from annotate.protocols import protocol_for

from .quality import Check, scored_checks

#: The page features a rule can answer by, in the order of an answer's ``features``: word overlap with the
#: closest article sentence, the sentence's word count, its position in the summary, the summary's sentences.
#: The names are those of the gold's predictability (gold_predictability.PAGE_FEATURES).
FEATURES = ("word overlap", "sentence length", "sentence position", "summary length")
#: What the evidence calls each feature, and the unit of its threshold.
FEATURE_WORDS = {
    "word overlap": "word overlap with the closest article sentence",
    "sentence length": "sentence length in words",
    "sentence position": "sentence position in its summary (from 0)",
    "summary length": "summary length in sentences",
}
#: Items read back (the most recent): the cost of the check does not grow with the worker's history, and a
#: worker who turns to a rule after honest work shows within a few items.
RECENT_ITEMS = 30
#: How long a worker's recent answers stay in the cache (any change of gold or traps makes them unread sooner).
ANSWERS_KEPT_SECONDS = 6 * 3600
#: Answers of each kind before a rule can be judged: with fewer, a reader's few "No"s may line up by chance.
MIN_ANSWERS_PER_CLASS = 10
#: A one-threshold rule predicting the answers at least this well (balanced accuracy) is "almost perfect".
ALMOST_PERFECT = 0.97
#: ... and the worker must have followed it against the known labels: on at least this many sentences whose
#: label the rule gets wrong, at least this share answered as the rule (a reader answers as the label there).
MIN_CONTRADICTED = 3
FOLLOWS_RULE_SHARE = 0.9


class Answer(NamedTuple):
    """One Yes/No answer, the page features of its sentence (:data:`FEATURES`) and its known label (gold or a
    trap's; None when not known)."""

    factual: bool
    features: tuple[float, ...]
    known: bool | None = None


#: How an :class:`AnswerTable` writes an unknown label in its ``known`` column.
UNKNOWN = -1


class AnswerTable(NamedTuple):
    """Answers as columns, one row per answer: what the rule fits read, and what the cache keeps of a worker's
    recent answers (a submission reads some 600 of them: arrays unpickle as one copy of their memory, and the
    rule is fitted on them without an object per answer).

    Examples
    --------
    >>> table = AnswerTable.of([Answer(True, (0.9, 12.0, 0.0, 2.0), None), Answer(False, (0.4, 20.0, 1.0, 2.0), False)])
    >>> table.known.tolist()
    [-1, 0]
    >>> table.answers()[1]
    Answer(factual=False, features=(0.4, 20.0, 1.0, 2.0), known=False)
    """

    factual: np.ndarray  # bool, (n,)
    features: np.ndarray  # float, (n, len(FEATURES))
    known: np.ndarray  # int8, (n,): 1 factual, 0 not factual, UNKNOWN

    @classmethod
    def of(cls, answers: Sequence[Answer]) -> AnswerTable:
        return cls(
            np.fromiter((a.factual for a in answers), dtype=bool, count=len(answers)),
            np.array([a.features for a in answers], dtype=float).reshape(len(answers), len(FEATURES)),
            np.fromiter((UNKNOWN if a.known is None else int(a.known) for a in answers), dtype=np.int8, count=len(answers)),
        )

    def answers(self) -> list[Answer]:
        return [Answer(bool(f), tuple(x), None if k == UNKNOWN else bool(k))
                for f, x, k in zip(self.factual.tolist(), self.features.tolist(), self.known.tolist())]

    def __len__(self) -> int:
        return len(self.factual)


@dataclass(frozen=True)
class RuleFit:
    """The best one-threshold rule over one feature for a worker's answers."""

    feature: str
    score: float  # balanced accuracy of the rule at predicting the answers
    threshold: float
    factual_above: bool  # "Yes" at or above the threshold (else "Yes" below it)
    predicted: int  # answers the rule predicts
    answers: int

    def predicts(self, value: float | np.ndarray) -> bool | np.ndarray:
        """The rule's answer for a sentence whose feature is ``value`` (True: "Yes"); for an array, each one's."""
        return (value >= self.threshold) == self.factual_above

    def describe(self) -> str:
        yes, no = ("at or above", "below") if self.factual_above else ("below", "at or above")
        return (f"'Yes' {yes} {self.threshold:g}, 'No' {no} it, on the {FEATURE_WORDS[self.feature]}: "
                f"{self.predicted} of {self.answers} answers (balanced accuracy {self.score:.2f})")


def best_threshold_rule(values: Sequence[float], factual: Sequence[bool]) -> tuple[float, float, bool]:
    """``(balanced accuracy, threshold, factual at or above it)`` of the best rule "Yes iff value >= threshold"
    (or its reverse) for the answers ``factual``; 0.5 when an answer kind is missing.

    Each distinct value is a candidate threshold, scored in both directions, the lowest threshold and "Yes at or
    above" first among equal scores; a rule no better than chance is ``(0.5, lowest value, True)``. One column of
    :func:`best_threshold_rules`.

    Examples
    --------
    >>> best_threshold_rule([0.2, 0.4, 0.8, 0.9], [False, False, True, True])
    (1.0, 0.8, True)
    >>> best_threshold_rule([0.2, 0.4, 0.8, 0.9], [True, False, True, False])
    (0.75, 0.4, False)
    """
    return best_threshold_rules(np.asarray(values, dtype=float).reshape(-1, 1), factual)[0]


def best_threshold_rules(values: np.ndarray, factual: Sequence[bool]) -> list[tuple[float, float, bool]]:
    """:func:`best_threshold_rule` of each column of ``values`` (answers × features), all columns at once: one
    sort and one pass over the answers in arrays (a submission fits four features over some 600 answers).

    Examples
    --------
    >>> best_threshold_rules(np.array([[0.2, 3], [0.4, 1], [0.8, 2], [0.9, 1]]), [False, False, True, True])
    [(1.0, 0.8, True), (0.75, 3.0, False)]
    """
    factual = np.asarray(factual, dtype=bool)
    count, columns = values.shape
    yes_total = int(np.count_nonzero(factual))
    no_total = count - yes_total
    if yes_total == 0 or no_total == 0:
        return [(0.5, 0.0, True)] * columns
    order = np.argsort(values, axis=0, kind="stable")
    ordered, ordered_factual = np.take_along_axis(values, order, axis=0), factual[order]
    # The first answer at each distinct value of its column: the thresholds; the others are left out as -inf.
    starts = np.ones((count, columns), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    yes_below = np.zeros((count, columns))  # answers strictly below each position's value
    np.cumsum(ordered_factual[:-1], axis=0, out=yes_below[1:])
    no_below = np.arange(count).reshape(-1, 1) - yes_below
    score = ((yes_total - yes_below) / yes_total + no_below / no_total) / 2  # "Yes" at or above the threshold
    candidates = np.full((2 * count, columns), -np.inf)
    candidates[0::2][starts], candidates[1::2][starts] = score[starts], 1 - score[starts]
    best = np.argmax(candidates, axis=0)  # the first of the best, as a sweep keeping only a strictly better one
    rules = []
    for column, row in enumerate(best.tolist()):
        if candidates[row, column] <= 0.5:
            rules.append((0.5, float(ordered[0, column]), True))
        else:
            rules.append((float(candidates[row, column]), float(ordered[row // 2, column]), row % 2 == 0))
    return rules


def rule_fits(table: AnswerTable) -> list[RuleFit]:
    """For each feature, the best one-threshold rule at predicting the answers of ``table``."""
    factual, features = table.factual, table.features
    fits = []
    for column, (score, threshold, above) in enumerate(best_threshold_rules(features, factual)):
        predicted = int(np.count_nonzero(((features[:, column] >= threshold) == above) == factual))
        fits.append(RuleFit(FEATURES[column], score, threshold, above, predicted, len(table)))
    return fits


def predictable_evidence(answers: Sequence[Answer] | AnswerTable) -> str | None:
    """Why these answers look like a page rule's (None: they do not): a rule over one feature predicts them
    almost perfectly, *even where it contradicts the known labels*: of the answered sentences whose known label
    the rule gets wrong (at least :data:`MIN_CONTRADICTED`), the worker answered as the rule on at least
    :data:`FOLLOWS_RULE_SHARE`. A reader whose answers happen to follow a feature follows the label there."""
    table = answers if isinstance(answers, AnswerTable) else AnswerTable.of(answers)
    yes = int(np.count_nonzero(table.factual))
    if min(yes, len(table) - yes) < MIN_ANSWERS_PER_CLASS:
        return None
    labelled = table.known != UNKNOWN
    for fit in sorted(rule_fits(table), key=lambda f: -f.score):
        if fit.score < ALMOST_PERFECT:
            return None
        rule = fit.predicts(table.features[:, FEATURES.index(fit.feature)])
        contradicted = labelled & (rule != (table.known == 1))
        against = int(np.count_nonzero(contradicted))
        as_rule = int(np.count_nonzero(contradicted & (rule == table.factual)))
        if against >= MIN_CONTRADICTED and as_rule >= FOLLOWS_RULE_SHARE * against:
            return (f"predictable answers: a page feature predicts them, not the reading: {fit.describe()}; where the rule "
                    f"contradicts the known label ({against} sentences) the worker answered as the rule on {as_rule}")[:300]
    return None


def worker_answers(participation: Participation, submitted: Assignment | None = None) -> AnswerTable:
    """The worker's answers of their last :data:`RECENT_ITEMS` items in the campaign (trap answers included),
    latest item first, with their sentences' page features and known labels; sentences whose layout has no
    features (laid out before features were kept) are left out.

    What the cache keeps per participation and checks version (raised by every change of gold or traps, the
    only thing about a submitted item's answers that changes) is this window of answers with the item of each
    row: a submission reads the ids of the recent items together with the answers of its own item
    (``submitted``, whose layout it has) in one statement, then the window in one round trip, and from the
    database only the recent items the window lacks (none, unless the cache lost it or another process's
    submission had not kept its window yet), instead of every recent layout."""
    recent, first_read = _recent_items_with_answers(participation, submitted)
    key = f"factlab:answer-window:{participation.pk}:{participation.campaign.checks_version}"
    kept_items, kept_rows, kept_table = cache.get(key) or ((), np.empty(0, dtype=np.int64), AnswerTable.of([]))
    unread_ids = [assignment_id for assignment_id in recent if assignment_id not in kept_items and assignment_id not in first_read]
    known_layouts = {submitted.pk: submitted.layout} if submitted is not None else {}
    read = _answers_by_item(list(first_read), known_layouts, first_read) | _answers_by_item(unread_ids, known_layouts)
    items = [assignment_id for assignment_id in recent if assignment_id in read or assignment_id in kept_items]
    position = {assignment_id: number for number, assignment_id in enumerate(recent)}
    read_rows = [assignment_id for assignment_id, answers in read.items() for _ in answers]
    read_table = AnswerTable.of([answer for answers in read.values() for answer in answers])
    rows = np.concatenate([kept_rows, np.array(read_rows, dtype=np.int64)])
    table = AnswerTable(*(np.concatenate([kept, new]) for kept, new in zip(kept_table, read_table)))
    # Rows of the recent items only, latest item first (an item's own rows keep their order).
    rank = np.array([position.get(assignment_id, -1) for assignment_id in rows.tolist()], dtype=np.int64)
    order = np.argsort(rank, kind="stable")[np.count_nonzero(rank < 0):]
    rows, table = rows[order], AnswerTable(*(column[order] for column in table))
    if read:
        # Kept once the caller's transaction commits: a submission rolled back (its item read here as submitted)
        # leaves nothing behind that its retry with other answers would be judged by.
        window = (frozenset(items), rows, table)
        transaction.on_commit(lambda: cache.set(key, window, ANSWERS_KEPT_SECONDS))
    return table


def _answers_by_item(
    assignment_ids: list[int], known_layouts: dict[int, dict], rows: dict[int, tuple[list[tuple], list[tuple]]] | None = None,
) -> dict[int, list[Answer]]:
    """The answers of these submitted assignments with their page features and known labels, by assignment (an
    empty list for one without features): one query (none when ``rows`` has them: what
    :func:`_answers_with_known` reads, by assignment), and another for the layouts not in ``known_layouts``."""
    if not assignment_ids:
        return {}
    layouts = {assignment_id: known_layouts[assignment_id] for assignment_id in assignment_ids if assignment_id in known_layouts}
    if len(layouts) < len(assignment_ids):
        layouts.update(Assignment.objects.filter(pk__in=[a for a in assignment_ids if a not in layouts]).values_list("pk", "layout"))
    features: dict[tuple[int, int, int], tuple[float, ...]] = {}
    trap_features: dict[tuple[int, int], tuple[float, ...]] = {}
    for assignment_id, layout in layouts.items():
        for row in (layout or {}).get("summaries", []):
            shown = row.get("features") or []
            for index, (overlap, words) in enumerate(shown):
                features[(assignment_id, row["summary"], index)] = (overlap, words, index, len(shown))
            if row.get("trap") and row.get("trap_at") is not None and row["trap_at"] < len(shown):
                trap_features[(assignment_id, row["trap"])] = features[(assignment_id, row["summary"], row["trap_at"])]
    answers: dict[int, list[Answer]] = {assignment_id: [] for assignment_id in layouts}
    if rows is None:
        judgements, traps = _answers_with_known(list(layouts))
    else:
        judgements = [row for assignment_id in layouts for row in rows[assignment_id][0]]
        traps = [row for assignment_id in layouts for row in rows[assignment_id][1]]
    for a, s, i, factual, known in judgements:
        if (a, s, i) in features:
            answers[a].append(Answer(factual, features[(a, s, i)], known))
    for a, t, factual, expected in traps:
        if (a, t) in trap_features:
            answers[a].append(Answer(factual, trap_features[(a, t)], expected))
    return answers


def _answers_sql(where: str) -> str:
    """The sentence answers (0, assignment, summary, sentence, answer, the sentence's gold label or None) and the
    trap answers (1, assignment, trap, None, answer, the trap's expected answer) of the assignments whose id
    matches ``where`` (SQL after the column), in one ``UNION ALL``."""
    judgement, gold = SentenceJudgement._meta.db_table, GoldLabel._meta.db_table
    answer, trap = TrapAnswer._meta.db_table, Trap._meta.db_table
    return f"""
        SELECT 0, j.assignment_id, j.summary_id, j.sentence_index, j.factual,
               (SELECT g.factual FROM {gold} g WHERE g.summary_id = j.summary_id AND g.sentence_index = j.sentence_index LIMIT 1)
        FROM {judgement} j WHERE j.assignment_id {where}
        UNION ALL
        SELECT 1, a.assignment_id, a.trap_id, NULL, a.factual, t.expected_factual
        FROM {answer} a JOIN {trap} t ON t.id = a.trap_id WHERE a.assignment_id {where}"""


def _answer_rows(rows: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """:func:`_answers_sql`'s rows as (sentence answers, trap answers), each as :func:`_answers_by_item` reads them."""
    known = [(a, s, i, bool(f), None if k is None else bool(k)) for is_trap, a, s, i, f, k in rows if is_trap == 0]
    traps = [(a, t, bool(f), bool(k)) for is_trap, a, t, _, f, k in rows if is_trap == 1]
    return known, traps


def _answers_with_known(assignment_ids: list[int]) -> tuple[list[tuple], list[tuple]]:
    """The sentence answers (assignment, summary, sentence, answer, the sentence's gold label or None) and the trap
    answers (assignment, trap, answer, the trap's expected answer) of these submitted assignments, in one statement."""
    marks = ", ".join(["%s"] * len(assignment_ids))
    with connection.cursor() as cursor:
        cursor.execute(_answers_sql(f"IN ({marks})"), [*assignment_ids, *assignment_ids])
        return _answer_rows(cursor.fetchall())


def _recent_items_with_answers(
    participation: Participation, submitted: Assignment | None,
) -> tuple[list[int], dict[int, tuple[list[tuple], list[tuple]]]]:
    """The ids of the worker's latest :data:`RECENT_ITEMS` submitted assignments in the campaign (latest first) and,
    in the same statement, the answers with known labels (:func:`_answers_with_known`) of ``submitted`` when it
    is one of them (a submission's own item, which no cache holds yet), by assignment."""
    assignment, item = Assignment._meta.db_table, Item._meta.db_table
    submitted_id = submitted.pk if submitted is not None else None
    sql = f"""
        WITH recent AS (
            SELECT a.id, ROW_NUMBER() OVER (ORDER BY a.submitted_at DESC) AS position
            FROM {assignment} a JOIN {item} i ON i.id = a.item_id
            WHERE a.worker_id = %s AND i.campaign_id = %s AND a.status = %s
            ORDER BY a.submitted_at DESC LIMIT {RECENT_ITEMS})
        {_answers_sql("IN (SELECT id FROM recent WHERE id = %s)")}
        UNION ALL
        SELECT 2, id, position, NULL, NULL, NULL FROM recent"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [participation.worker_id, participation.campaign_id, AssignmentStatus.SUBMITTED, submitted_id, submitted_id])
        rows = cursor.fetchall()
    recent = [assignment_id for _, assignment_id in sorted((row[2], row[1]) for row in rows if row[0] == 2)]
    answered = [row for row in rows if row[0] != 2]
    first_read = {submitted_id: _answer_rows(answered)} if submitted_id in recent else {}
    return recent, first_read


def enough_contradicted(checks: Sequence[Check]) -> bool:
    """Whether the worker's wrong answers among ``checks`` are enough for the rule to find
    :data:`MIN_CONTRADICTED` answers against the known labels that follow a page feature; below that, the
    rule cannot hold pay and the worker's answers are not read for it.

    Examples
    --------
    >>> from annotate.services.quality import Check
    >>> enough_contradicted([Check(expected_factual=False, correct=False, count=2)])
    False
    >>> enough_contradicted([Check(expected_factual=False, correct=False, count=3)])
    True
    """
    return sum(check.count for check in checks if not check.correct) >= FOLLOWS_RULE_SHARE * MIN_CONTRADICTED


def predictable_answers_hold(participation: Participation, assignment: Assignment | None = None) -> str | None:
    """Called at submission of ``assignment`` (the participation locked, this item stored): the reason to hold
    the worker's pay when a page feature predicts their answers almost perfectly, even against the known labels,
    else None."""
    if not protocol_for(participation.campaign.kind).labels_sentences:
        return None  # no sentence answers (BUMP edits)
    # The rule needs answers against the known labels; the checks the block rules scored in this submission
    # count them without a query, so a worker who seldom misses one costs nothing here.
    checks = scored_checks(participation)
    if checks is not None and not enough_contradicted(checks):
        return None
    return predictable_evidence(worker_answers(participation, assignment))
