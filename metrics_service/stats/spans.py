"""Typed error spans: words of a summary that annotators marked wrong, each span with a unified error type.

Spans live on *word tokens* of the summary (:func:`word_tokens`): a span given in characters is snapped to
the words it touches (:func:`snap`), and overlapping spans of one type merge (:func:`merge_spans`). A span
is ``(first_token, end_token, type)`` with ``end_token`` exclusive; types are AggreFact's unified ones
(:data:`~taxonomies.unified.UNIFIED_TYPES`).

An *answer* is one annotator's spans on one summary; "no error" is an answer with no span. Statistics take
a table of answers, one row per (summary, annotator)::

    summary_id  worker_id  n_tokens  spans
    1           7          9         [(3, 5, "extrinsic_np")]
    1           8          9         []

* :func:`summary_types`: AggreFact's rule, a summary has a type when more than one annotator marked it
  (``min_annotators``, configurable; an already aggregated release is one "annotator" with ``min_annotators=1``).
* :func:`token_alpha`: Krippendorff's alpha (nominal) over tokens, a token's value being the set of types
  covering it ("none" when unmarked).
* :func:`pairwise_span_f1`: span F1 between every two annotators of a summary, exact (same words, same type)
  and overlap (same type, at least one shared word), pooled over pairs.
* :func:`token_truth`: the human token labels a detector is measured against (same rule as the summary types).

Pure Python, numpy and pandas; no Django. The functions that build frames import pandas (and the agreement
module) themselves: the span protocol reads the token functions here at every web and worker process's start,
and every manage.py command's, which must not pay for pandas.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from taxonomies.unified import MIN_ANNOTATORS, UNIFIED_TYPES

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

Span = tuple[int, int, str]
NO_ERROR = "none"
#: A number with its separators ("40,000", "2.5"), a word (letters and digits, with inner hyphens or
#: apostrophes), or a run of other visible characters.
WORD = re.compile(r"\d+(?:[.,]\d+)+|\w+(?:[-'\u2019]\w+)*|[^\w\s]+")


def word_tokens(text: str) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of each word token of ``text``; punctuation is its own token.

    Examples
    --------
    >>> word_tokens("Bob's car-maker won 2,500.")
    [(0, 5), (6, 15), (16, 19), (20, 25), (25, 26)]
    """
    return [m.span() for m in WORD.finditer(text)]


def snap(tokens: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The token range ``(first, end)`` (end exclusive) of the words that characters ``[start, end)`` touch.

    ``ValueError`` when the characters cover no word (an empty range, only spaces, or past the text).

    Examples
    --------
    >>> tokens = word_tokens("The cat sat on the mat.")
    >>> snap(tokens, 5, 9)  # "at s" touches "cat" and "sat"
    (1, 3)
    >>> snap(tokens, 3, 4)
    Traceback (most recent call last):
    ...
    ValueError: characters 3-4 cover no word
    """
    touched = [i for i, (a, b) in enumerate(tokens) if a < end and start < b]
    if start >= end or not touched:
        raise ValueError(f"characters {start}-{end} cover no word")
    return touched[0], touched[-1] + 1


def check_type(error_type: str) -> str:
    """``error_type`` when it is a unified type, else ``ValueError`` naming the accepted ones."""
    if error_type not in UNIFIED_TYPES:
        raise ValueError(f"unknown error type {error_type!r}; expected one of {', '.join(UNIFIED_TYPES)}")
    return error_type


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Spans sorted by type order then position, overlapping spans of the same type merged into one.

    Spans of different types may overlap (a word can be part of two errors); touching spans stay apart.

    Examples
    --------
    >>> merge_spans([(4, 6, "extrinsic_np"), (0, 2, "extrinsic_np"), (1, 3, "extrinsic_np"), (1, 2, "intrinsic_np")])
    [(1, 2, 'intrinsic_np'), (0, 3, 'extrinsic_np'), (4, 6, 'extrinsic_np')]
    """
    merged: list[Span] = []
    for start, end, error_type in sorted(spans, key=lambda s: (UNIFIED_TYPES.index(check_type(s[2])), s[0], s[1])):
        if merged and merged[-1][2] == error_type and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), error_type)
        else:
            merged.append((start, end, error_type))
    return merged


def token_types(n_tokens: int, spans: Iterable[Span]) -> list[frozenset[str]]:
    """The set of types covering each of ``n_tokens`` tokens.

    Examples
    --------
    >>> [sorted(t) for t in token_types(3, [(1, 3, "extrinsic_np"), (2, 3, "intrinsic_predicate")])]
    [[], ['extrinsic_np'], ['extrinsic_np', 'intrinsic_predicate']]
    """
    out: list[set[str]] = [set() for _ in range(n_tokens)]
    for start, end, error_type in spans:
        for i in range(max(start, 0), min(end, n_tokens)):
            out[i].add(error_type)
    return [frozenset(t) for t in out]


def _type_label(types: frozenset[str]) -> str:
    return "+".join(t for t in UNIFIED_TYPES if t in types) or NO_ERROR


def summary_types(answers: Iterable[Iterable[Span]], *, min_annotators: int = MIN_ANNOTATORS) -> tuple[str, ...]:
    """AggreFact's unified types of one summary: those marked by at least ``min_annotators`` of its annotators.

    ``answers``: one span list per annotator. Types come in :data:`UNIFIED_TYPES` order.

    Examples
    --------
    >>> summary_types([[(0, 1, "extrinsic_np")], [(3, 4, "extrinsic_np"), (5, 6, "intrinsic_predicate")], []])
    ('extrinsic_np',)
    >>> summary_types([[(0, 1, "extrinsic_np")]], min_annotators=1)
    ('extrinsic_np',)
    """
    counts: dict[str, int] = {}
    for spans in answers:
        for error_type in {s[2] for s in spans}:
            counts[error_type] = counts.get(error_type, 0) + 1
    return tuple(t for t in UNIFIED_TYPES if counts.get(t, 0) >= min_annotators)


def token_truth(n_tokens: int, answers: Sequence[Iterable[Span]], *, min_annotators: int = MIN_ANNOTATORS) -> list[frozenset[str]]:
    """Per token, the types that at least ``min_annotators`` annotators gave it (at most all of them, so a
    summary with fewer annotators than the rule asks for is read through those it has).

    Examples
    --------
    >>> [sorted(t) for t in token_truth(3, [[(0, 2, "extrinsic_np")], [(1, 3, "extrinsic_np")]])]
    [[], ['extrinsic_np'], []]
    >>> [sorted(t) for t in token_truth(2, [[(0, 1, "extrinsic_np")]])]
    [['extrinsic_np'], []]
    """
    need = max(1, min(min_annotators, len(answers)))
    counts: list[dict[str, int]] = [{} for _ in range(n_tokens)]
    for spans in answers:
        for i, types in enumerate(token_types(n_tokens, spans)):
            for t in types:
                counts[i][t] = counts[i].get(t, 0) + 1
    return [frozenset(t for t, c in by_type.items() if c >= need) for by_type in counts]


def token_labels(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per (summary, token, annotator): ``summary_id``, ``sentence_index`` (the token's index, so the
    shared unit-based statistics take it), ``worker_id`` and ``label``, the set of types covering the token
    joined by "+" in type order ("none" when unmarked).

    Examples
    --------
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"summary_id": [1], "worker_id": [7], "n_tokens": [2], "spans": [[(1, 2, "extrinsic_np")]]})
    >>> token_labels(answers)["label"].tolist()
    ['none', 'extrinsic_np']
    """
    import pandas as pd

    from .agreement import UNIT

    rows = []
    for summary_id, worker_id, n_tokens, spans in answers[["summary_id", "worker_id", "n_tokens", "spans"]].itertuples(index=False):
        for i, types in enumerate(token_types(int(n_tokens), spans)):
            rows.append((summary_id, i, worker_id, _type_label(types)))
    return pd.DataFrame(rows, columns=[*UNIT, "worker_id", "label"])


def token_alpha(answers: pd.DataFrame) -> float | None:
    """Krippendorff's alpha (nominal) over the tokens of summaries with two annotators or more, on
    :func:`token_labels`; ``None`` when undefined (fewer than two annotators anywhere, or a single value).

    Examples
    --------
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"summary_id": [1, 1], "worker_id": [7, 8], "n_tokens": [4, 4],
    ...                         "spans": [[(1, 3, "extrinsic_np")], [(1, 3, "extrinsic_np")]]})
    >>> token_alpha(answers)
    1.0
    """
    from .agreement import UNIT, krippendorff_nominal

    table = token_labels(answers)
    if table.empty or table.groupby(UNIT)["worker_id"].nunique().max() < 2:
        return None
    return krippendorff_nominal(table, "label")


def token_label_models(answers: pd.DataFrame, methods: Sequence[str] = ("dawid_skene", "glad")) -> dict[str, dict]:
    """Word labels aggregated by the platform's label models (:func:`.label_aggregation.fit_labels`), each
    with its posterior: per method, how many words get each label, the mean posterior of the chosen labels,
    the share of words where it agrees with the majority label (ties: the first label in sorted order, as
    the models break them), and each annotator's reliability.

    Examples
    --------
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"summary_id": [1, 1, 1], "worker_id": [7, 8, 9], "n_tokens": [3, 3, 3],
    ...     "spans": [[(0, 1, "extrinsic_np")], [(0, 1, "extrinsic_np")], []]})
    >>> token_label_models(answers)["dawid_skene"]["labels"]
    {'extrinsic_np': 1, 'none': 2}
    """
    import pandas as pd

    from .label_aggregation import fit_labels

    table = token_labels(answers)
    tasks = pd.DataFrame({"task": table["summary_id"].astype(str) + ":" + table["sentence_index"].astype(str),
                          "worker": table["worker_id"].astype(str), "label": table["label"]})
    counts = tasks.groupby(["task", "label"]).size().unstack(fill_value=0)
    majority = counts.idxmax(axis=1)
    out = {}
    for method in methods:
        fit = fit_labels(tasks, method)
        labels = fit.labels.reindex(majority.index)
        out[method] = {
            "labels": {str(k): int(v) for k, v in labels.value_counts().sort_index().items()},
            "mean_posterior": float(fit.posterior.mean()),
            "agrees_with_majority": float((labels == majority).mean()),
            "reliability": {str(k): float(v) for k, v in fit.reliability.items()},
        }
    return out


def _matches(spans: Sequence[Span], others: Sequence[Span], mode: str) -> int:
    if mode == "exact":
        return sum(s in others for s in spans)
    return sum(any(o[2] == s[2] and o[0] < s[1] and s[0] < o[1] for o in others) for s in spans)


def span_f1(a: Sequence[Span], b: Sequence[Span], mode: str = "exact") -> float | None:
    """Span F1 of two answers: precision = share of ``a``'s spans matched in ``b``, recall = share of ``b``'s
    matched in ``a``. ``mode``: "exact" (same words and type) or "overlap" (same type, a shared word).
    ``None`` when neither answer has a span (two "no error" answers agree, but F1 has nothing to count).

    Examples
    --------
    >>> span_f1([(0, 2, "extrinsic_np")], [(1, 2, "extrinsic_np"), (4, 5, "intrinsic_np")], "overlap")
    0.6666666666666666
    >>> span_f1([(0, 2, "extrinsic_np")], [(1, 2, "extrinsic_np")], "exact")
    0.0
    """
    counts = _f1_counts(a, b, mode)
    return _f1(*counts)


def _f1_counts(a: Sequence[Span], b: Sequence[Span], mode: str) -> tuple[int, int, int, int]:
    if mode not in ("exact", "overlap"):
        raise ValueError(f"unknown span match mode {mode!r}; expected 'exact' or 'overlap'")
    return _matches(a, b, mode), len(a), _matches(b, a, mode), len(b)


def _f1(matched_a: int, total_a: int, matched_b: int, total_b: int) -> float | None:
    if not total_a and not total_b:
        return None
    precision = matched_a / total_a if total_a else 0.0
    recall = matched_b / total_b if total_b else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def pairwise_span_f1(answers: pd.DataFrame, *, against: pd.DataFrame | None = None) -> dict[str, float | int | None]:
    """Span F1 pooled over pairs of answers on the same summary, exact and overlap.

    Without ``against``: every two annotators of a summary (human-human). With ``against`` (one answer per
    summary, e.g. a model annotator's, or the human majority): each answer of ``answers`` paired with it.
    Matched and total spans are summed over the pairs before precision and recall (micro average), so a pair
    of "no error" answers counts nothing. Returns ``{"exact", "overlap", "pairs"}``.

    Examples
    --------
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"summary_id": [1, 1, 1], "worker_id": [7, 8, 9],
    ...     "spans": [[(0, 2, "extrinsic_np")], [(0, 2, "extrinsic_np")], [(1, 3, "extrinsic_np")]]})
    >>> pairwise_span_f1(answers)
    {'exact': 0.3333333333333333, 'overlap': 1.0, 'pairs': 3}
    """
    by_summary: dict[object, list[Sequence[Span]]] = {}
    # Overlap matches are not symmetric (two short spans inside one long one), so which answer of a pair counts
    # as the prediction changes the pooled F1: the answers are taken by annotator, not in the order rows came in.
    if "worker_id" in answers.columns:
        answers = answers.assign(_annotator=answers["worker_id"].astype(str)).sort_values(["_annotator"], kind="stable")
    for summary_id, spans in answers[["summary_id", "spans"]].itertuples(index=False):
        by_summary.setdefault(summary_id, []).append(list(spans))
    if against is None:
        pairs = [(a, b) for group in by_summary.values() for a, b in combinations(group, 2)]
    else:
        reference: Mapping[object, Sequence[Span]] = {s: list(sp) for s, sp in against[["summary_id", "spans"]].itertuples(index=False)}
        pairs = [(a, reference[s]) for s, group in by_summary.items() if s in reference for a in group]
    out: dict[str, float | int | None] = {}
    for mode in ("exact", "overlap"):
        sums = [0, 0, 0, 0]
        for a, b in pairs:
            for k, value in enumerate(_f1_counts(a, b, mode)):
                sums[k] += value
        out[mode] = _f1(*sums)
    out["pairs"] = len(pairs)
    return out


def majority_answers(answers: pd.DataFrame, *, min_annotators: int = MIN_ANNOTATORS) -> pd.DataFrame:
    """One answer per summary: the spans of the tokens :func:`token_truth` gives a type (runs of tokens with
    that type become one span). Columns ``summary_id``, ``n_tokens``, ``spans``.

    Examples
    --------
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"summary_id": [1, 1], "worker_id": [7, 8], "n_tokens": [4, 4],
    ...                         "spans": [[(0, 2, "extrinsic_np")], [(1, 3, "extrinsic_np")]]})
    >>> majority_answers(answers)["spans"].tolist()
    [[(1, 2, 'extrinsic_np')]]
    """
    import pandas as pd

    rows = []
    for summary_id, group in answers.groupby("summary_id", sort=True):
        n_tokens = int(group["n_tokens"].iloc[0])
        truth = token_truth(n_tokens, list(group["spans"]), min_annotators=min_annotators)
        spans = [(i, i + 1, t) for i, types in enumerate(truth) for t in types]
        rows.append((summary_id, n_tokens, _join_runs(spans)))
    return pd.DataFrame(rows, columns=["summary_id", "n_tokens", "spans"])


def _join_runs(spans: Iterable[Span]) -> list[Span]:
    """Touching one-token spans of a type become one span (unlike :func:`merge_spans`, which keeps touching
    spans apart because two annotated errors may sit side by side)."""
    out: list[Span] = []
    for start, end, error_type in merge_spans(spans):
        if out and out[-1][2] == error_type and out[-1][1] == start:
            out[-1] = (out[-1][0], end, error_type)
        else:
            out.append((start, end, error_type))
    return out
