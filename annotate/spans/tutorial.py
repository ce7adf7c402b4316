"""The span tutorial: three worked exercises (not in the qualification pool, so their keys may be shown) whose
feedback puts the expected span beside the worker's."""
from __future__ import annotations

from typing import Any

from . import taxonomy
from .qualification import NO_ERROR, Exercise, parse, public_view, right
from .words import words

#: Written for the project (CC0).
EXERCISES: tuple[Exercise, ...] = (
    Exercise("The library lent 40,000 books last year, twice as many as in 2020.",
             "The library lent 40,000 books in 2020.", "intrinsic_np", 6, 7),
    Exercise("Two hikers were found safe after a night on the mountain.",
             "Two hikers were found injured after a night on the mountain.", "extrinsic_predicate", 4, 5),
    Exercise("The city planted 300 trees along the canal this spring.",
             "The city planted 300 trees along the canal.", NO_ERROR),
)


def _described(label: str, word_list: list[str], chosen: list[int]) -> str:
    if label == NO_ERROR:
        return "No error"
    return f"“{' '.join(word_list[i] for i in chosen)}” — {taxonomy.BY_CODE[label].name}"


def feedback(post) -> list[dict[str, Any]]:
    """Per exercise: the worker's answer and the expected one, described, and whether they match
    (``InvalidSubmission`` naming an unanswered exercise)."""
    answers = parse(list(EXERCISES), post)
    out = []
    for exercise, shown in zip(EXERCISES, public_view(list(EXERCISES), post)):
        word_list = words(exercise.summary)
        answer = answers[exercise.id]
        out.append({**shown, "right": right(exercise, answer), "yours": _described(answer["type"], word_list, answer["words"]),
                    "expected": _described(exercise.label, word_list, list(range(exercise.start, exercise.end)))})
    return out
