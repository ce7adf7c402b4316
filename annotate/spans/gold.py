"""Gold spans and how an answer scores against them, word by word and per class.

A control summary's words are of two classes: *erroneous* (gold gives them a type) and *correct*. A word of
the first class is answered right when the worker gave it one of the gold types, a word of the second when the
worker left it unmarked. The shared balanced score averages the two shares, so marking every word or none
scores 0.5 whatever the summary.
"""
from __future__ import annotations

from collections.abc import Iterable

from metrics_service.stats.spans import Span, token_types


def word_tally(n_words: int, gold: Iterable[Span], answer: Iterable[Span]) -> tuple[tuple[int, int], tuple[int, int]]:
    """``((erroneous right, erroneous total), (correct right, correct total))`` of one answer on one gold summary.

    Examples
    --------
    >>> gold = [(1, 3, "extrinsic_np")]
    >>> word_tally(5, gold, [(1, 2, "extrinsic_np")])
    ((1, 2), (3, 3))
    >>> word_tally(5, gold, [(0, 5, "extrinsic_np")])  # everything marked
    ((2, 2), (0, 3))
    >>> word_tally(5, gold, [])  # "no error"
    ((0, 2), (3, 3))
    """
    expected = token_types(n_words, gold)
    given = token_types(n_words, answer)
    erroneous = [bool(e & g) for e, g in zip(expected, given) if e]
    correct = [not g for e, g in zip(expected, given) if not e]
    return (sum(erroneous), len(erroneous)), (sum(correct), len(correct))
