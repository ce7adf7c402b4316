"""The words of a summary as the span task shows them, and a worker's or a release's spans turned into word spans.

One rule for every path (task page, submit check, import, gold, model annotator): the words are
:func:`metrics_service.stats.spans.word_tokens` of the stored summary text; a span typed "entire sentence" is
widened to the whole sentences it touches; overlapping spans of one type are merged.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from metrics_service.stats.spans import Span, check_type, merge_spans, word_tokens
from taxonomies.unified import ENTIRE_SENTENCE

SENTENCE_END = frozenset({".", "!", "?", "...", "…"})


def words(text: str) -> list[str]:
    """The summary's words, as the task page lists them."""
    return [text[a:b] for a, b in word_tokens(text)]


def spaced_words(text: str) -> list[tuple[str, bool]]:
    """The words with whether a space precedes each (so "Leeds." shows without a gap before the full stop).

    Examples
    --------
    >>> spaced_words("It rained, a lot.")
    [('It', False), ('rained', True), (',', False), ('a', True), ('lot', True), ('.', False)]
    """
    tokens = word_tokens(text)
    return [(text[a:b], k > 0 and a > tokens[k - 1][1]) for k, (a, b) in enumerate(tokens)]


def sentence_bounds(word_list: Sequence[str]) -> list[tuple[int, int]]:
    """``(first, end)`` word ranges of the sentences (a sentence ends after ".", "!", "?").

    Examples
    --------
    >>> sentence_bounds(["It", "rained", ".", "Fans", "left", "."])
    [(0, 3), (3, 6)]
    """
    bounds, start = [], 0
    for i, word in enumerate(word_list):
        if word in SENTENCE_END:
            bounds.append((start, i + 1))
            start = i + 1
    if start < len(word_list):
        bounds.append((start, len(word_list)))
    return bounds


def clean_spans(word_list: Sequence[str], spans: Iterable[Span]) -> list[Span]:
    """Spans checked against the words (``ValueError`` naming the span), "entire sentence" spans widened to
    their sentences, overlaps of one type merged.

    Examples
    --------
    >>> clean_spans(["It", "rained", ".", "Fans", "left", "."], [(4, 5, "entire_sentence"), (0, 1, "extrinsic_np")])
    [(0, 1, 'extrinsic_np'), (3, 6, 'entire_sentence')]
    """
    n = len(word_list)
    checked = []
    for k, (start, end, error_type) in enumerate(spans):
        if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
            raise ValueError(f"span {k + 1}: word positions must be whole numbers")
        if not 0 <= start < end <= n:
            raise ValueError(f"span {k + 1}: words {start}-{end} are not within the summary's {n} words")
        check_type(error_type)
        if error_type == ENTIRE_SENTENCE:
            touched = [b for b in sentence_bounds(word_list) if b[0] < end and start < b[1]]
            start, end = touched[0][0], touched[-1][1]
        checked.append((start, end, error_type))
    return merge_spans(checked)


def as_json(spans: Iterable[Span]) -> list[list]:
    return [[s, e, t] for s, e, t in spans]


def from_json(rows: Iterable[Sequence]) -> list[Span]:
    return [(int(s), int(e), str(t)) for s, e, t in rows]
