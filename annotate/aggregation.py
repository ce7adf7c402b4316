"""Aggregation of sentence judgements into FRANK's summary scores, in plain Python (no Django).

One definition used by the campaign pages, the FRANK export and (through the same rules, on pandas
frames) ``metrics_service.stats.factuality``: a sentence is factual when at least half of its annotators
say so (:func:`metrics_service.stats.majority.majority_label`, ties factual); its error categories are the
modal codes of its annotators (``modal_categories``); ``Factuality`` is the mean over
judged sentences of the majority label; a category's (or group's) score is 1 - the share of sentences
whose modal codes include it; ``Flip_<c>`` is the Factuality after dropping ``c`` from every judgement.
Trap answers never enter (they are stored apart, as ``TrapAnswer``).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from metrics_service.stats.majority import majority_label, modal_categories
from taxonomies.frank import CODES, GROUPS, data_file_key, normalize_code


def codes_of(categories: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize_code(c) for c in categories)


def majority_units(votes: list[tuple[int, bool, frozenset[str]]]) -> list[tuple[bool, frozenset[str]]]:
    """Per judged sentence: the majority label (factual when at least half say so) and the modal error codes."""
    by_sentence: dict[int, list[tuple[bool, frozenset[str]]]] = defaultdict(list)
    for index, factual, codes in votes:
        by_sentence[index].append((factual, codes))
    units = []
    for index in sorted(by_sentence):
        group = by_sentence[index]
        factual = bool(majority_label(sum(f for f, _ in group), len(group)))
        units.append((factual, frozenset() if factual else modal_categories(codes for _, codes in group)))
    return units


def frank_scores(votes: Iterable[tuple[int, bool, Iterable[str]]]) -> dict[str, float]:
    """FRANK's summary scores from ``(sentence_index, factual, categories)`` judgements, keyed as FRANK's files.

    The definitions of :mod:`metrics_service.stats.factuality` (``summary_human_scores``), in plain Python
    so that the export streams: ``Factuality`` = mean over judged sentences of the majority label; per
    category/group = 1 - share of sentences whose modal codes include it; ``Flip_<c>`` = Factuality after
    dropping ``c`` (or the group's codes) from every judgement (a non-factual judgement whose codes were all
    dropped becomes factual).
    """
    parsed = [(index, bool(factual), codes_of(categories)) for index, factual, categories in votes]
    units = majority_units(parsed)
    n = len(units)
    scores: dict[str, float] = {"Factuality": sum(f for f, _ in units) / n}
    for code in CODES:
        scores[data_file_key(code)] = sum(code not in modal for _, modal in units) / n
    for group, members in GROUPS.items():
        scores[group] = sum(not (modal & set(members)) for _, modal in units) / n

    def flipped(removed: frozenset[str]) -> float:
        # A non-factual judgement without any code stays non-factual (as in the statistics module).
        changed = [(i, f if (f or not codes) else not (codes - removed), frozenset()) for i, f, codes in parsed]
        return sum(f for f, _ in majority_units(changed)) / n

    for code in CODES:
        scores[f"Flip_{data_file_key(code)}"] = flipped(frozenset([code]))
    for group, members in GROUPS.items():
        scores[f"Flip_{group}"] = flipped(frozenset(members))
    return scores
