"""The balanced quality score: how a worker's checked answers agree with gold and traps, and what it blocks.

A worker's quality is their agreement with gold scored as *balanced accuracy*: the mean of the share right
on factual and the share right on erroneous checks, so that answering "Yes" everywhere scores 0.5 however
few errors the data has. It is balanced *within strata* (for sentences: data set and word-overlap band,
:data:`annotate.services.overlap.OVERLAP_BANDS`): FRANK's factual gold is mostly copied from the article and
its erroneous gold mostly abstractive, so a rule reading only how much of a sentence the article holds would
score 0.87 on the pooled score; within a band it scores what answering one way scores, 0.5. Block and bonus
decisions also look at the worker's most recent checks (:func:`recent_quality`), so good work banked early
does not carry a worker who stopped reading. Trap answers, when a campaign uses traps, enter the same score,
each weighted by :func:`annotate.models.trap_weight` (traps built mechanically from the shipped article count
for less).

Which answers were checked against gold, and how they scored, is the protocol's to say
(``Protocol.gold_tallies``, per-class correct/total counts), so the score works for any answer shape.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.db import connection

from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    Item,
    Participation,
    Summary,
    Trap,
    TrapAnswer,
    TrapSource,
    Worker,
)
from annotate.protocols import GoldTally, all_protocols, protocol_for, written_summaries
from annotate.rows import row_by_key_sql

from .overlap import band_sql


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

    def describe(self, units: str = "sentences") -> str:
        """The score and its counts in words; ``units``: what the campaign's protocol checks (its ``unit_words``)."""
        part = (
            f"factual {units} {self.factual_correct:g} of {self.factual_weight:g}, "
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
    # Strata in a fixed order, so that the score's floating-point sums do not depend on the order the checks
    # come in (the database's, or that of the counts kept per participation: annotate.services.check_counts).
    usable = [cells[stratum] for stratum in sorted(cells) if cells[stratum][True][0] > 0 and cells[stratum][False][0] > 0]
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


def recency(check: Check) -> tuple:
    """Sort key of checks, most recent last: the submission's time, then, among the groups of one submission
    (which share it), a fixed order of what they hold. A window cut inside a submission then takes the same
    groups whatever order the database returned them in, in the submit's statement and in a recount alike."""
    return (check.at or datetime.min, check.stratum, check.source, check.public, check.from_page, check.correct, check.count, check.weight)


def recent_checks(checks: Sequence[Check], per_class: int = RECENT_CHECKS_PER_CLASS) -> list[Check]:
    """The most recent ``per_class`` checked answers of each class (a group of equal answers cut to fit, its
    weight in proportion), in :func:`recency` order.

    Examples
    --------
    >>> at = datetime(2026, 1, 1)
    >>> one_submission = [Check(True, True, 2.0, count=2, at=at), Check(True, False, 2.0, count=2, at=at)]
    >>> [(c.correct, c.count) for c in recent_checks(one_submission, per_class=3)]
    [(True, 2), (False, 1)]
    >>> [(c.correct, c.count) for c in recent_checks(one_submission[::-1], per_class=3)]
    [(True, 2), (False, 1)]
    """
    left = {True: per_class, False: per_class}
    window = []
    for check in sorted(checks, key=recency, reverse=True):
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
    return window_quality(recent_checks(checks), min_per_class)


def window_quality(window: Sequence[Check], min_per_class: int) -> Quality:
    """The pooled balanced score of a window of recent checks already cut to size (:func:`recent_checks`)."""
    return balanced_score([replace(c, stratum="") for c in window], min_per_class)


@dataclass(frozen=True)
class CheckedAnswers:
    """What the block and pay rules of one submission score: every checked answer of the worker in the campaign
    (``checks``: one check per answer group, or per counted cell where they come from the counts kept per
    participation) and the window of recent work (``window``: :func:`recent_checks` of them)."""

    checks: list[Check]
    window: list[Check]

    @classmethod
    def of(cls, checks: list[Check]) -> CheckedAnswers:
        return cls(checks, recent_checks(checks))


def describe_recent(quality: Quality, units: str = "sentences") -> str:
    return f"last {RECENT_CHECKS_PER_CLASS} checked answers of each class: {quality.describe(units)}"



def checks_from_tallies(tallies: Sequence[GoldTally]) -> list[Check]:
    """The gold checks of a protocol's per-class counts (``Protocol.gold_tallies``): one check for the answers
    right and one for those wrong, each standing for its count.

    Examples
    --------
    >>> [(c.correct, c.count) for c in checks_from_tallies([GoldTally(expected_factual=False, correct=3, total=4)])]
    [(True, 3), (False, 1)]
    """
    return [
        Check(tally.expected_factual, correct, float(n), "gold", n, public=tally.public, stratum=tally.stratum, at=tally.at)
        for tally in tallies
        for correct, n in ((True, tally.correct), (False, tally.wrong))
        if n > 0
    ]


def trap_checks(worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None) -> list[Check]:
    """The worker's submitted trap answers in the campaign (up to ``until``; of one assignment with
    ``assignment_id``), equal answers of one submission summed by the database (one row per class, outcome,
    trap weight and stratum)."""
    sql, params = _trap_statement(worker_id, campaign, until=until, assignment_id=assignment_id)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [_trap_check(*row) for row in cursor.fetchall()]


def scored_assignments_sql(
    worker_id: int, campaign: Campaign, *, until: datetime | None, assignment_id: int | None,
) -> tuple[str, list, str, list]:
    """The worker's submitted assignments in the campaign (up to ``until``; only ``assignment_id``), for the
    statements that score them: a FROM item aliased ``a`` with its parameters, and the WHERE condition (on ``a``
    and its item ``i``) with its parameters.

    One submission's assignment is read by its primary key in a subquery of its own, never looked for among all
    of the worker's assignments (:func:`annotate.rows.row_by_key_sql`)."""
    source, source_params = (Assignment._meta.db_table, []) if assignment_id is None else (row_by_key_sql(Assignment, "%s"), [assignment_id])
    where, params = "a.worker_id = %s AND a.status = %s AND i.campaign_id = %s", [worker_id, AssignmentStatus.SUBMITTED, campaign.pk]
    if until is not None:
        where, params = f"{where} AND a.submitted_at <= %s", [*params, until]
    return f"{source} a", source_params, where, params


def _trap_statement(worker_id: int, campaign: Campaign, *, until: datetime | None, assignment_id: int | None) -> tuple[str, list]:
    """The SQL of :func:`trap_checks` and its parameters; rows as :func:`_trap_check` takes them."""
    assignments, assignment_params, where, where_params = scored_assignments_sql(worker_id, campaign, until=until, assignment_id=assignment_id)
    tables = {
        "item": Item._meta.db_table, "answer": TrapAnswer._meta.db_table,
        "trap": Trap._meta.db_table, "summary": Summary._meta.db_table, "document": Document._meta.db_table,
    }
    # A trap taken from a summary of a public data set is public, unless a worker wrote that summary here.
    written_sql, written_params = _written_here_sql("t.edited_summary_id")
    params = [*written_params, *assignment_params, *where_params]
    trap_sql = f"""
        SELECT t.expected_factual, t_answer.correct, t.weight, t.source,
               COALESCE(ed.public_labels, '') <> '' AND NOT ({written_sql}), d.dataset, {band_sql('t.overlap')}, a.submitted_at, COUNT(*)
        FROM {tables['answer']} t_answer
        JOIN {assignments} ON a.id = t_answer.assignment_id
        JOIN {tables['item']} i ON i.id = a.item_id
        JOIN {tables['document']} d ON d.id = i.document_id
        JOIN {tables['trap']} t ON t.id = t_answer.trap_id
        LEFT JOIN {tables['summary']} es ON es.id = t.edited_summary_id
        LEFT JOIN {tables['document']} ed ON ed.id = es.document_id
        WHERE {where}
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8"""
    return trap_sql, params


def _trap_check(expected, correct, weight, source, public, dataset, band, at, n) -> Check:
    return Check(bool(expected), bool(correct), float(weight) * n, "trap", int(n), from_page=source == TrapSource.MECHANICAL,
                 public=bool(public), stratum=f"{dataset}/{band}", at=at)


def gold_tallies_of_rows(rows: Sequence[Sequence]) -> list[GoldTally]:
    """The tallies of the rows of a protocol's ``gold_tallies_statement``: (expected answer, answered right, public,
    data set, overlap band, submission time, count).

    Examples
    --------
    >>> [(t.correct, t.total, t.stratum) for t in gold_tallies_of_rows([(False, True, False, "cnndm", 2, None, 3)])]
    [(3, 3, 'cnndm/2')]
    """
    return [
        GoldTally(bool(expected), int(n) if correct else 0, int(n), public=bool(public), stratum=f"{dataset}/{band}", at=at)
        for expected, correct, public, dataset, band, at, n in rows
    ]


def _written_here_sql(column: str) -> tuple[str, list]:
    """SQL (and its parameters) true when ``column`` holds a summary that a protocol's answers wrote here
    (``Protocol.written_summaries``, e.g. BUMP's edited summaries); FALSE when no protocol writes summaries."""
    # Every submission's trap checks ask for it and the answer is always the same SQL: compiled once per column,
    # database vendor and set of registered protocols (the objects themselves: a test may register one).
    key = (column, connection.vendor, tuple(all_protocols()))
    found = _WRITTEN_HERE.get(key)
    if found is None:
        found = _WRITTEN_HERE[key] = _compile_written_here(column)
    return found[0], list(found[1])


_WRITTEN_HERE: dict[tuple, tuple[str, tuple]] = {}


def _compile_written_here(column: str) -> tuple[str, tuple]:
    parts: list[str] = []
    params: list = []
    for query in written_summaries():
        sql, query_params = query.query.sql_with_params()
        parts.append(f"{column} IN ({sql})")
        params.extend(query_params)
    return " OR ".join(parts) or "FALSE", tuple(params)


def worker_checks(
    worker: Worker | int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
) -> list[Check]:
    """Every checked answer of the worker in the campaign (submitted up to ``until``; of one submitted assignment
    with ``assignment_id``): their answers on gold, as the campaign's protocol scores them
    (``Protocol.gold_tallies``), and their trap answers."""
    worker_id = worker if isinstance(worker, int) else worker.pk
    protocol = protocol_for(campaign.kind)
    gold = protocol.gold_tallies_statement(worker_id, campaign, until=until, assignment_id=assignment_id)
    if gold is None:
        tallies = protocol.gold_tallies(worker_id, campaign, until=until, assignment_id=assignment_id)
        return checks_from_tallies(tallies) + trap_checks(worker_id, campaign, until=until, assignment_id=assignment_id)
    # The gold and the trap answers in one round trip: every submission reads its own, to add them to its counts.
    gold_sql, gold_params = gold
    trap_sql, trap_params = _trap_statement(worker_id, campaign, until=until, assignment_id=assignment_id)
    sql = f"""
        WITH gold(expected, correct, public, dataset, band, submitted, n) AS ({gold_sql}),
        traps(expected, correct, weight, source, public, dataset, band, submitted, n) AS ({trap_sql})
        SELECT 0, expected, correct, NULL, NULL, public, dataset, band, submitted, n FROM gold
        UNION ALL
        SELECT 1, expected, correct, weight, source, public, dataset, band, submitted, n FROM traps"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*gold_params, *trap_params])
        rows = cursor.fetchall()
    # Rows in the traps' columns; a gold row has no weight or source.
    gold_rows = [(expected, correct, *rest) for is_trap, expected, correct, _, _, *rest in rows if not is_trap]
    return checks_from_tallies(gold_tallies_of_rows(gold_rows)) + [_trap_check(*row[1:]) for row in rows if row[0]]


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
    checks = _participation_answers(participation, until=until, in_submission=in_submission).checks
    if for_bonus and not campaign.bonus_on_public_labels:
        return private_quality(checks, campaign.control_min_per_class)
    return balanced_score(checks, campaign.control_min_per_class)


def submission_answers(participation: Participation) -> CheckedAnswers | None:
    """The checked answers of the submission under way (None outside one), kept on the participation by
    :func:`keep_submission_answers`: read without a query."""
    kept = getattr(participation, "_submission_answers", None)
    return kept[1] if kept is not None and kept[0] == participation.items_submitted else None


def keep_submission_answers(participation: Participation, answers: CheckedAnswers) -> None:
    """Keep what the submission under way scores (its participation locked, its counters updated), for the block
    and pay rules of the same submission; nothing else is submitted meanwhile."""
    participation._submission_answers = (participation.items_submitted, answers)


def scored_checks(participation: Participation) -> list[Check] | None:
    """The checks the block rules scored in the submission under way (None outside one): read without a query."""
    answers = submission_answers(participation)
    return answers.checks if answers is not None else None


def _participation_answers(participation: Participation, *, until: datetime | None, in_submission: bool) -> CheckedAnswers:
    answers = submission_answers(participation) if in_submission else None
    if answers is not None:
        return answers
    return CheckedAnswers.of(worker_checks(participation.worker_id, participation.campaign, until=until))


def worker_recent_quality(participation: Participation, *, until: datetime | None = None, in_submission: bool = False) -> Quality:
    """:func:`recent_quality` of the worker in the participation's campaign (as :func:`worker_quality`)."""
    window = _participation_answers(participation, until=until, in_submission=in_submission).window
    return window_quality(window, participation.campaign.control_min_per_class)


def private_quality(checks: Sequence[Check], min_per_class: int) -> Quality:
    """The balanced score over the checks whose answer is not published: a worker holding a benchmark's released
    labels (FRANK, QAGS, BUMP, AggreFact) answers its gold right without reading, so that gold says nothing
    about the worker; it still counts towards blocking, where agreeing with it is the least to expect."""
    quality = balanced_score([c for c in checks if not c.public], min_per_class)
    return replace(quality, public_checks=sum(c.count for c in checks if c.public), public_left_out=True)



def quality_block_reason(participation: Participation) -> str | None:
    """Why the worker should be blocked for their answers on known labels, or None.

    Three balanced scores, each only once decisive: all checked answers (gold and weighted traps) below
    ``control_block_threshold`` once each class has ``control_min_per_class``; the most recent of them
    (:func:`recent_quality`) below it; and the trap answers alone below ``trap_block_threshold`` once there are
    ``trap_min_count`` of them, of both classes.
    """
    campaign = participation.campaign
    answers = submission_answers(participation)
    if answers is None:  # outside a submission: scored from the worker's history
        answers = CheckedAnswers.of(worker_checks(participation.worker_id, campaign))
        keep_submission_answers(participation, answers)
    checks = answers.checks
    quality = balanced_score(checks, campaign.control_min_per_class)
    units = protocol_for(campaign.kind).unit_words[1]
    if quality.score is not None and quality.score < campaign.control_block_threshold:
        return f"answers disagree with known labels: {quality.describe(units)}, below the required {campaign.control_block_threshold:.2f}"[:300]
    recent = window_quality(answers.window, campaign.control_min_per_class)
    if recent.score is not None and recent.score < campaign.control_block_threshold:
        return (f"recent answers disagree with known labels: {describe_recent(recent, units)}, "
                f"below the required {campaign.control_block_threshold:.2f}")[:300]
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

