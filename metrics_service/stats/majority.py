"""The one sentence-majority rule: which label a sentence gets from its annotators' yes/no answers.

Every place that turns several judgements of one summary sentence into one label uses :func:`majority_label`
(FRANK's summary scores in ``annotate.aggregation``, the human factuality and agreement statistics, gold from
imported judgements), and :func:`modal_categories` for the error categories of a non-factual sentence.

Tie rule (an even number of annotators split in half), stated once and chosen by name:

* ``"factual"`` (the default): a tie counts as factual, the benefit of the doubt. FRANK's definition: a
  sentence is factual when at least half of its annotators say so; the summary scores, the exports, the
  report's factuality and agreement statistics all use it.
* ``"none"``: a tie gives no label. Gold must be known, so a tied sentence never becomes a control
  sentence's gold (a worker answering either way would be scored against a coin).

Plain Python, no Django: both apps import it.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

#: What a tie gives: factual (the benefit of the doubt) or no label.
Tie = Literal["factual", "none"]
TIE_RULES: tuple[Tie, ...] = ("factual", "none")


def majority_label(factual_votes: int, total: int, *, tie: Tie = "factual") -> bool | None:
    """The majority label of a sentence that ``factual_votes`` of its ``total`` annotators judged factual:
    True (factual) when more than half say so, False when fewer than half do, and on a tie what ``tie`` says
    (True for ``"factual"``, None for ``"none"``). None for a sentence nobody judged.

    Examples
    --------
    >>> majority_label(2, 3), majority_label(1, 3)
    (True, False)
    >>> majority_label(2, 4), majority_label(2, 4, tie="none")
    (True, None)
    >>> majority_label(0, 0) is None
    True
    """
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {', '.join(TIE_RULES)}, not {tie!r}")
    if not 0 <= factual_votes <= total:
        raise ValueError(f"factual_votes must be between 0 and total ({total}), not {factual_votes}")
    if total == 0:
        return None
    if 2 * factual_votes == total:
        return True if tie == "factual" else None
    return 2 * factual_votes > total


def modal_categories(category_sets: Iterable[Iterable[str]]) -> frozenset[str]:
    """The error categories chosen by the most annotators of a non-factual sentence (every tied category
    kept; empty when nobody chose one). Codes are counted as given: pass each annotator's codes as a set to
    count a category once per annotator.

    Examples
    --------
    >>> sorted(modal_categories([["EntE"], ["EntE", "OutE"], ["OutE"]]))
    ['EntE', 'OutE']
    >>> modal_categories([["EntE"], ["EntE", "OutE"]])
    frozenset({'EntE'})
    >>> modal_categories([[], []])
    frozenset()
    """
    counts = Counter(code for codes in category_sets for code in codes)
    if not counts:
        return frozenset()
    top = max(counts.values())
    return frozenset(code for code, n in counts.items() if n == top)
