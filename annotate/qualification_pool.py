"""Qualification tests drawn from a pool: the one mechanism behind every protocol's qualification.

A pool holds keyed questions, each with a label (FRANK: an error category or "correct"; BUMP Task 1: an
error type; BUMP Task 2: an error type or "accurate"). A test asks, per attempt, a fixed number of
questions of each label, drawn at random and shuffled. The draw is seeded with a keyed hash of (protocol,
campaign, worker, attempt) and the server's secret: the same on every page load and on scoring, different
between workers and attempts, unpredictable without the secret. The worker is told pass or fail only.

Why identities do not pay: one pass/fail answer carries at most one bit, and a test is a fresh random
subset, so neither one test's key nor the pool's can be collected by farming a few identities
(:func:`pool_key_bits`; ``benchmarks/qualification_farming.py`` counts it for each protocol).

Pure Python (no Django): protocols call it from their content modules.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")
Label = Hashable


class MaterialError(ValueError):
    """Imported tutorial/qualification material is invalid; the message names the place."""


def text_field(value: object, where: str) -> str:
    """A non-empty string of imported material, stripped (``MaterialError`` naming ``where`` otherwise)."""
    if not isinstance(value, str) or not value.strip():
        raise MaterialError(f"{where}: expected a non-empty string")
    return value.strip()


def positive_int(value: object, where: str) -> int:
    """A positive integer of imported material (``MaterialError`` naming ``where`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MaterialError(f"{where}: expected a positive integer")
    return value


def attempt_rng(secret: str, namespace: str, campaign_id: int, worker_id: int, attempt: int) -> random.Random:
    """The random generator of one worker's attempt (``namespace`` keeps protocols' draws apart)."""
    digest = hmac.new(secret.encode(), f"{namespace}:{campaign_id}:{worker_id}:{attempt}".encode(), hashlib.sha256).digest()
    return random.Random(digest)


def draw(rng: random.Random, pool: Sequence[T], label_of: Callable[[T], Label], per_label: Sequence[tuple[Label, int]]) -> list[T]:
    """``count`` random questions of each ``(label, count)`` in ``per_label``, shuffled together.

    A single question is drawn with ``rng.choice`` and more with ``rng.sample``, so that tests drawn before
    this function was shared stay the same for the same seed.
    """
    chosen: list[T] = []
    for label, count in per_label:
        group = [q for q in pool if label_of(q) == label]
        chosen += [rng.choice(group)] if count == 1 else rng.sample(group, count)
    rng.shuffle(chosen)
    return chosen


def pool_problems(
    pool: Sequence[T], label_of: Callable[[T], Label], per_label: Sequence[tuple[Label, int]], describe: Callable[[Label], str],
) -> list[str]:
    """What keeps ``pool`` from giving every test ``per_label`` questions (empty: fine); ``describe(label)``
    names a label's questions in the messages ("sentence of category EntE")."""
    have = Counter(label_of(q) for q in pool)
    problems = []
    for label, need in per_label:
        if have[label] == 0:
            problems.append(f"no {describe(label)}")
        elif have[label] < need:
            problems.append(f"{have[label]} × {describe(label)}; a test needs {need}")
    return problems


def pool_key_bits(label_counts: Sequence[int]) -> float:
    """log2 of the number of ways to label a pool of this composition (``label_counts``: questions per label),
    i.e. the bits of the pool's key for an attacker who knows everything except which question has which label.

    A pass/fail answer carries at most one bit, so learning the key takes at least this many attempts.
    """
    n = sum(label_counts)
    return (math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in label_counts)) / math.log(2)
