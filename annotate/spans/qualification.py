"""The span qualification: a test drawn per worker and attempt from a pool of short keyed exercises (the shared
mechanism, ``annotate.qualification_pool``), each a summary with one error of a known type or none.

A worker ticks the wrong words of each summary and names the type (or answers "no error"). An answer is right
when the type is the key's and the ticked words overlap the key's words by at least half of their union
(token overlap per type), or when both say "no error". The pool's keys are in this file, so a campaign offers
the test only once an admin accepts that (the shared rule for shipped pools).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from annotate import qualification_pool
from annotate.protocols.base import QualificationForm
from annotate.services.errors import InvalidSubmission
from taxonomies.unified import UNIFIED_TYPES

from . import taxonomy
from .words import clean_spans, words

NO_ERROR = "no_error"
LABELS: tuple[str, ...] = (*UNIFIED_TYPES, NO_ERROR)
#: One exercise of each label per test.
PER_LABEL: tuple[tuple[str, int], ...] = tuple((label, 1) for label in LABELS)
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class Exercise:
    article: str
    summary: str
    label: str
    #: The key's words (first, end exclusive); none for "no error".
    start: int = 0
    end: int = 0

    @property
    def id(self) -> str:
        return "q" + hashlib.sha1(f"{self.article}\x00{self.summary}".encode()).hexdigest()[:10]


#: Written for the project (CC0, like the import samples): two exercises per label.
POOL: tuple[Exercise, ...] = (
    Exercise("Lena Park won the chess final in Oslo. Her rival, Tom Berg, came second.",
             "Tom Berg won the chess final in Oslo.", "intrinsic_np", 0, 2),
    Exercise("The bakery on Mill Street opened in 1998. Its owner, Ravi Shah, still bakes every morning.",
             "The bakery on Ravi Street opened in 1998.", "intrinsic_np", 3, 4),
    Exercise("The river flooded three villages after a week of rain.",
             "The river flooded three villages in Spain after a week of rain.", "extrinsic_np", 5, 7),
    Exercise("The museum bought a painting by a young local artist.",
             "The museum bought a painting for two million euros.", "extrinsic_np", 6, 9),
    Exercise("The mayor praised the firefighters who rescued the children.",
             "The firefighters praised the mayor who rescued the children.", "intrinsic_predicate", 2, 3),
    Exercise("Sales rose in May and fell in June.",
             "Sales fell in May.", "intrinsic_predicate", 1, 2),
    Exercise("The company announced a new phone on Monday.",
             "The company recalled a new phone on Monday.", "extrinsic_predicate", 2, 3),
    Exercise("The team signed a young goalkeeper from Brazil.",
             "The team sold a young goalkeeper from Brazil.", "extrinsic_predicate", 2, 3),
    Exercise("The school will open a library next year.",
             "Aliens landed near the school.", "entire_sentence", 0, 6),
    Exercise("The bridge was closed for repairs on Sunday.",
             "Everyone in the city won the lottery.", "entire_sentence", 0, 8),
    Exercise("The orchestra played two concerts in Vienna last week.",
             "The orchestra played two concerts in Vienna.", NO_ERROR),
    Exercise("A storm cut power to 5,000 homes, the utility said.",
             "A storm cut power to 5,000 homes.", NO_ERROR),
)
NAMESPACE = "spans-qualification"


def draw_test(secret: str, campaign_id: int, worker_id: int, attempt: int) -> list[Exercise]:
    rng = qualification_pool.attempt_rng(secret, NAMESPACE, campaign_id, worker_id, attempt)
    return qualification_pool.draw(rng, POOL, lambda e: e.label, PER_LABEL)


def public_view(test: list[Exercise], post=None) -> list[dict[str, Any]]:
    """What the page shows of a test: texts and words, never the key."""
    view = []
    for number, exercise in enumerate(test, start=1):
        chosen = set(post.getlist(f"{exercise.id}_words")) if post is not None else set()
        view.append({"id": exercise.id, "number": number, "article": exercise.article,
                     "words": [{"index": i, "text": w, "checked": str(i) in chosen} for i, w in enumerate(words(exercise.summary))],
                     "chosen_type": post.get(f"{exercise.id}_type", "") if post is not None else ""})
    return view


def qualification_form(test: list[Exercise], post=None) -> QualificationForm:
    return QualificationForm("spans/qualification.html", {"exercises": public_view(test, post), "types": taxonomy.TYPES})


def parse(test: list[Exercise], post) -> dict[str, Any]:
    """Per exercise: ``{"type": label, "words": [indices]}``; ``InvalidSubmission`` naming an unanswered one."""
    answers = {}
    for number, exercise in enumerate(test, start=1):
        label = post.get(f"{exercise.id}_type", "")
        if label not in LABELS:
            raise InvalidSubmission(f"Summary {number}: choose an error type or “no error”.")
        n = len(words(exercise.summary))
        try:
            chosen = sorted({int(v) for v in post.getlist(f"{exercise.id}_words")})
        except ValueError as exc:
            raise InvalidSubmission(f"Summary {number}: the ticked words are not words of the summary.") from exc
        if any(not 0 <= i < n for i in chosen):
            raise InvalidSubmission(f"Summary {number}: the ticked words are not words of the summary.")
        if label == NO_ERROR and chosen:
            raise InvalidSubmission(f"Summary {number}: you answered “no error” and ticked words: choose one.")
        if label != NO_ERROR and not chosen:
            raise InvalidSubmission(f"Summary {number}: tick the wrong words, or answer “no error”.")
        answers[exercise.id] = {"type": label, "words": chosen}
    return answers


def right(exercise: Exercise, answer: dict[str, Any]) -> bool:
    """Whether one answer is right: same type, and word overlap of at least half the union (see the module doc).

    Examples
    --------
    >>> key = Exercise("a", "The cat sat on the mat.", "extrinsic_np", 4, 6)
    >>> right(key, {"type": "extrinsic_np", "words": [5]}), right(key, {"type": "extrinsic_np", "words": [0, 1, 2, 5]})
    (True, False)
    """
    if exercise.label == NO_ERROR or answer["type"] == NO_ERROR:
        return exercise.label == answer["type"]
    if exercise.label != answer["type"]:
        return False
    word_list = words(exercise.summary)
    expected = {i for s, e, _ in clean_spans(word_list, [(exercise.start, exercise.end, exercise.label)]) for i in range(s, e)}
    given = set(answer["words"])
    if exercise.label == "entire_sentence":  # an entire-sentence answer stands for its sentence, as on the task page
        given = {i for s, e, _ in clean_spans(word_list, [(min(given), max(given) + 1, exercise.label)]) for i in range(s, e)}
    return len(expected & given) >= MIN_OVERLAP * len(expected | given)


def score(test: list[Exercise], answers: dict[str, Any]) -> float:
    return sum(right(e, answers[e.id]) for e in test) / len(test)
