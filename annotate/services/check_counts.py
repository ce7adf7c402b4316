"""Counts of each worker's checked answers, kept per participation so that a submission's block and pay rules
read one row instead of scoring the worker's whole history (which grows with every item).

A submission adds its own checked answers (its gold answers as the protocol scores them, its trap answers) to
the participation's :class:`~annotate.models.CheckedAnswerCounts` in its transaction, under the participation's
row lock that every submission takes: ``cells`` sum the answers per class, outcome, source, publicity and
stratum (what :func:`~annotate.services.quality.balanced_score` adds up), and ``recent`` keeps, whole, the
answer groups the window of recent work takes (:func:`~annotate.services.quality.recent_checks`).

What the counts stand for changes when gold or traps change (an import, an admin's or reviewer's label,
labels marked public, crowd gold, traps added with pages, overlaps recorded): every such change raises the
campaign's ``checks_version`` (:func:`~annotate.services.checks_version.checks_changed`), and counts kept under an older version are counted
again from the worker's history by the next submission that reads them (:func:`count_submission`), or all at
once by :func:`recount_checked_answers` (``manage.py recount_checks``). Counts that do not match the
participation's submitted items (kept before this code, or by a submission that lost a race with a change of
gold) are counted again the same way, so the counts always equal a recount from the history.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction

from annotate.models import Assignment, Campaign, CheckedAnswerCounts, Participation
from annotate.rows import update_row

from .quality import (
    RECENT_CHECKS_PER_CLASS,
    Check,
    CheckedAnswers,
    keep_submission_answers,
    recency,
    recent_checks,
    worker_checks,
)


def _cell_key(check: Check) -> list:
    return [check.expected_factual, check.correct, check.source, check.public, check.from_page, check.stratum, check.weight > 0]


def add_checks(cells: list[list], recent: list[Check], new: list[Check]) -> tuple[list[list], list[Check]]:
    """The counts after ``new`` answer groups (later than every group counted before): ``cells`` with theirs
    added, and the groups the window of recent work takes from ``recent`` and ``new`` (whole, in that order).

    Examples
    --------
    >>> cells, recent = add_checks([], [], [Check(False, True, 2.0, "gold", 2), Check(False, True, 1.0, "gold", 1)])
    >>> cells
    [[False, True, 'gold', False, False, '', True, 3, 3.0]]
    >>> [c.count for c in recent]
    [2, 1]
    """
    cells = [list(cell) for cell in cells]
    index = {tuple(cell[:7]): cell for cell in cells}
    for check in new:
        key = tuple(_cell_key(check))
        cell = index.get(key)
        if cell is None:
            cell = index[key] = [*key, 0, 0.0]
            cells.append(cell)
        cell[7] += check.count
        cell[8] += check.weight
    return cells, window_groups([*recent, *new])


def window_groups(groups: list[Check], per_class: int = RECENT_CHECKS_PER_CLASS) -> list[Check]:
    """The groups of ``groups`` that :func:`~annotate.services.quality.recent_checks` takes a part of, whole and
    in their order: what the window of any later history is still cut from."""
    left = {True: per_class, False: per_class}
    taken: set[int] = set()
    for position in sorted(range(len(groups)), key=lambda i: recency(groups[i]), reverse=True):
        group = groups[position]
        take = min(group.count, left[group.expected_factual])
        if take > 0:
            left[group.expected_factual] -= take
            taken.add(position)
    return [group for position, group in enumerate(groups) if position in taken]


def cell_checks(cells: list[list]) -> list[Check]:
    """The checks the balanced score sums, one per counted cell."""
    return [
        Check(expected, correct, weight, source, count, from_page=from_page, public=public, stratum=stratum)
        for expected, correct, source, public, from_page, stratum, _weighted, count, weight in cells
    ]


def _group_json(check: Check) -> list:
    return [check.expected_factual, check.correct, check.weight, check.source, check.count, check.from_page, check.public,
            check.stratum, check.at.isoformat() if check.at is not None else None]


def _group(row: list) -> Check:
    expected, correct, weight, source, count, from_page, public, stratum, at = row
    return Check(expected, correct, weight, source, count, from_page=from_page, public=public, stratum=stratum,
                 at=datetime.fromisoformat(at) if at is not None else None)


def _answers(cells: list[list], recent: list[Check]) -> CheckedAnswers:
    return CheckedAnswers(cell_checks(cells), recent_checks(recent))


def _store(participation: Participation, version: int, cells: list[list], recent: list[Check], *, kept: CheckedAnswerCounts | None) -> None:
    values = {"checks_version": version, "items_counted": participation.items_submitted, "cells": cells,
              "recent": [_group_json(group) for group in recent]}
    # ``kept``: the row as the submission read it, updated in place; without one (or gone), written by an upsert.
    if kept is not None:
        for name, value in values.items():
            setattr(kept, name, value)
        if update_row(kept, [*values, "updated_at"]):  # every submission: SQL built once
            return
    CheckedAnswerCounts.objects.bulk_create(
        [CheckedAnswerCounts(participation_id=participation.pk, **values)],
        update_conflicts=True, unique_fields=["participation"], update_fields=[*values, "updated_at"],
    )


def _counted_from_history(participation: Participation, campaign: Campaign) -> tuple[list[list], list[Check]]:
    """The counts of every checked answer of the worker's history in ``campaign``, from scratch."""
    return add_checks([], [], worker_checks(participation.worker_id, campaign))


def _kept_counts(participation: Participation) -> CheckedAnswerCounts | None:
    try:  # loaded with the participation's row lock where the caller asked for it (no query then)
        return participation.checked_counts
    except CheckedAnswerCounts.DoesNotExist:
        return None


def count_submission(participation: Participation, assignment: Assignment) -> CheckedAnswers:
    """Add the answers of ``assignment``, just stored, to the participation's counts, and keep the result for the
    submission's block and pay rules (:func:`~annotate.services.quality.submission_answers`).

    Called inside the submission with the participation locked and its ``items_submitted`` already counting
    this item. One query (this submission's gold and trap answers; two for a protocol whose gold is not counted by
    the database) and one write; counts kept under an older
    checks version, or not matching the items submitted before this one, are counted again from the history."""
    campaign = participation.campaign
    kept = _kept_counts(participation)
    current = kept is not None and (kept.checks_version, kept.items_counted) == (campaign.checks_version, participation.items_submitted - 1)
    if current:
        new = worker_checks(participation.worker_id, campaign, assignment_id=assignment.pk)
        cells, recent = add_checks(kept.cells, [_group(row) for row in kept.recent], new)
    else:
        cells, recent = _counted_from_history(participation, campaign)
    _store(participation, campaign.checks_version, cells, recent, kept=kept)
    answers = _answers(cells, recent)
    keep_submission_answers(participation, answers)
    return answers


def recounted_answers(participation: Participation) -> CheckedAnswers:
    """What the participation's counts hold when counted from scratch from the worker's history (no write)."""
    return _answers(*_counted_from_history(participation, participation.campaign))


def kept_answers(participation: Participation) -> CheckedAnswers | None:
    """The participation's counts as kept (a query), or None when there are none."""
    kept = CheckedAnswerCounts.objects.filter(pk=participation.pk).first()
    return None if kept is None else _answers(kept.cells, [_group(row) for row in kept.recent])


def recount_checked_answers(campaign: Campaign | None = None) -> int:
    """Count every participation's checked answers again from the history (of ``campaign``, else of every
    campaign), each under its participation's row lock; returns how many were counted."""
    participations = Participation.objects.order_by("pk")
    if campaign is not None:
        participations = participations.filter(campaign=campaign)
    counted = 0
    for pk in participations.values_list("pk", flat=True).iterator():
        with transaction.atomic():
            locked = Participation.objects.select_for_update(of=("self",)).select_related("campaign").filter(pk=pk).first()
            if locked is None:
                continue
            cells, recent = _counted_from_history(locked, locked.campaign)
            _store(locked, locked.campaign.checks_version, cells, recent, kept=None)  # written whether or not kept
            counted += 1
    return counted
