"""Qualification material of BUMP campaigns, as data. The keys never leave the server.

* Task 1 (taxonomy): one article, its reference summary and seven edits, one per requestable error type;
  the worker names the type of each edit (pass = all seven right).
* Task 2 (free-style): four article-summary pairs; the worker answers "Is the summary accurate?"
  (pass = all four right).

Only :func:`taxonomy_public_view` / :func:`accuracy_public_view` output is rendered in the page.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotate.bump import taxonomy as bump_taxonomy


@dataclass(frozen=True)
class KeyedEdit:
    id: str
    edited: str
    error_type: str  # taxonomy code (gold)


TAXONOMY_ARTICLE = (
    "The Lindqvist Museum in Oslo reopened to visitors on Saturday after a two-year renovation that cost 40 million "
    "kroner. The work added a new wing designed by the architect Tomas Holm. Culture minister Erik Dahl opened the "
    "new wing and praised its bright galleries. The museum's director, Anna Berg, said she expects 300,000 visitors "
    "this year. Dahl said the government would fund a similar project in Bergen next spring."
)
TAXONOMY_REFERENCE = (
    "Culture minister Erik Dahl opened the new wing of the Lindqvist Museum in Oslo on Saturday . "
    "He praised its bright galleries ."
)
# Shown in this fixed, mixed order (not the taxonomy order). Each changes one thing of the reference.
TAXONOMY_EDITS: tuple[KeyedEdit, ...] = (
    KeyedEdit("q1", "Culture minister Erik Dahl opened the new wing of the Lindqvist Museum in Bergen on Saturday . "
              "He praised its bright galleries .", "intrinsic_circumstance"),
    KeyedEdit("q2", "Culture minister Erik Dahl closed the new wing of the Lindqvist Museum in Oslo on Saturday . "
              "He praised its bright galleries .", "extrinsic_predicate"),
    KeyedEdit("q3", "Culture minister Erik Dahl opened the new wing of the Lindqvist Museum in Oslo on Saturday . "
              "She praised its bright galleries .", "coreference"),
    KeyedEdit("q4", "Museum director Anna Berg opened the new wing of the Lindqvist Museum in Oslo on Saturday . "
              "He praised its bright galleries .", "intrinsic_entity"),
    KeyedEdit("q5", "Culture minister Erik Dahl opened the new wing of the Lindqvist Museum in Oslo on Tuesday . "
              "He praised its bright galleries .", "extrinsic_circumstance"),
    KeyedEdit("q6", "Culture minister Erik Dahl designed the new wing of the Lindqvist Museum in Oslo on Saturday . "
              "He praised its bright galleries .", "intrinsic_predicate"),
    KeyedEdit("q7", "Culture minister Lars Nilsen opened the new wing of the Lindqvist Museum in Oslo on Saturday . "
              "He praised its bright galleries .", "extrinsic_entity"),
)


@dataclass(frozen=True)
class KeyedPair:
    id: str
    article: str
    summary: str
    accurate: bool  # gold


ACCURACY_PAIRS: tuple[KeyedPair, ...] = (
    KeyedPair(
        "a1",
        "Heavy rain flooded the main road into Kirkby on Tuesday night. Police closed the road for six hours while "
        "firefighters pumped water from nearby homes. No one was injured.",
        "Police closed the main road into Kirkby for six hours on Tuesday night after heavy rain flooded it .",
        True,
    ),
    KeyedPair(
        "a2",
        "The Riverside bakery won this year's national bread award for its rye loaf. Owner Maria Costa, who opened "
        "the shop in 2015, said she would use the prize money to hire two apprentices.",
        "Owner Maria Costa opened the Riverside bakery in 2018 and won a national bread award for its rye loaf .",
        False,
    ),
    KeyedPair(
        "a3",
        "The city of Arnfield will plant 5,000 trees along its streets over the next three years, mayor Li Wen "
        "announced. The plan is paid for by a regional climate fund.",
        "Mayor Li Wen announced that Arnfield will plant 5,000 street trees over three years with money from a "
        "regional climate fund .",
        True,
    ),
    KeyedPair(
        "a4",
        "Striker Tom Reid scored twice as Hallam United beat Dunmore 2-1 on Sunday. Dunmore's goal came from a late "
        "penalty by Sam Okafor.",
        "Sam Okafor scored twice as Hallam United beat Dunmore 2-1 on Sunday .",
        False,
    ),
)


def taxonomy_public_view() -> dict[str, Any]:
    """What the Task 1 qualification page shows: article, reference, edits (ids and texts only) and the types."""
    return {
        "article": TAXONOMY_ARTICLE,
        "reference": TAXONOMY_REFERENCE,
        "edits": [{"id": e.id, "edited": e.edited} for e in TAXONOMY_EDITS],
        "types": [{"code": t.code, "name": t.name} for t in bump_taxonomy.REQUESTABLE],
    }


def accuracy_public_view() -> dict[str, Any]:
    """What the Task 2 qualification page shows: the pairs without their answers."""
    return {"pairs": [{"id": p.id, "article": p.article, "summary": p.summary} for p in ACCURACY_PAIRS]}


class QualificationAnswerError(ValueError):
    """An unanswered or malformed qualification answer; the message names the question."""


def score_taxonomy(answers: Mapping[str, Any]) -> tuple[float, dict[str, bool]]:
    """Score Task 1 answers ``{edit id: type code}``: ``(share correct, {edit id: correct})``.

    Every edit must be answered with a requestable type code.
    """
    marks: dict[str, bool] = {}
    for number, edit in enumerate(TAXONOMY_EDITS, start=1):
        value = answers.get(edit.id)
        if not value:
            raise QualificationAnswerError(f"Edit {number}: choose its error type.")
        if value not in {t.code for t in bump_taxonomy.REQUESTABLE}:
            raise QualificationAnswerError(f"Edit {number}: {value!r} is not one of the seven error types.")
        marks[edit.id] = value == edit.error_type
    return sum(marks.values()) / len(marks), marks


def score_accuracy(answers: Mapping[str, Any]) -> tuple[float, dict[str, bool]]:
    """Score Task 2 answers ``{pair id: "yes" | "no"}``: ``(share correct, {pair id: correct})``."""
    marks: dict[str, bool] = {}
    for number, pair in enumerate(ACCURACY_PAIRS, start=1):
        value = answers.get(pair.id)
        if value not in ("yes", "no"):
            raise QualificationAnswerError(f"Pair {number}: answer Yes or No.")
        marks[pair.id] = (value == "yes") == pair.accurate
    return sum(marks.values()) / len(marks), marks
