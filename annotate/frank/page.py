"""What a FRANK task page shows, as plain functions (no database): which trap goes where, and the text.

Rules that keep traps indistinguishable from genuine summary sentences (checked by
``benchmarks/trap_style_auc.py``):

- a trap *replaces* the summary sentence closest to it in length (:func:`place_traps`), it is never appended:
  every summary shows as many sentences as it has, so the sentence count and the summary's length do not
  tell (966 of 996 XSum summaries have one sentence: a second one was a trap), and the dataset tells nothing;
- every shown text goes through :mod:`annotate.presentation` (detokenised; a trap styled like its summary);
- every shown sentence, trap or not, gets the same number of underlined article sentences;
- a trap never repeats, up to its edit, a sentence shown on the same page (:func:`repeats_visible`).
"""
from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Collection, Sequence
from difflib import SequenceMatcher
from typing import Any

from annotate.frank.relevance import relevant_sentences
from annotate.presentation import casing_map, detokenize, present_article, present_summary, style_like

# What a trap edit changes: negation words (F1) and gendered pronouns (F6). F5 reorders words.
_NEGATION = {"not", "n't", "no", "never", "nt"}
_PRONOUNS = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
NEAR_DUPLICATE_RATIO = 0.85


# A page compares each sentence with many others (an article's sentences with every summary sentence, each
# trap with every shown sentence): its words are read once, not once per pair.
@functools.lru_cache(maxsize=4096)
def _edit_free_words(sentence: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sentence's words with negations dropped and gendered pronouns merged, in order and sorted."""
    words = _TOKEN.findall(detokenize(sentence).lower().replace("’", "'").replace("n't", " n't"))
    kept = tuple("<pron>" if w in _PRONOUNS else w for w in words if w not in _NEGATION)
    return kept, tuple(sorted(kept))


def similarity(a: str, b: str) -> float:
    """How alike two sentences are once a trap edit is neutralised (1.0 = the same up to the edit)."""
    (wa, bag_a), (wb, bag_b) = _edit_free_words(a), _edit_free_words(b)
    if not wa or not wb:
        return 0.0
    if bag_a == bag_b:  # the same words, in the same order or another
        return 1.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def similar(a: str, b: str) -> bool:
    """Same sentence up to a trap edit: equal words once negations and pronouns are neutralised, the same
    bag of words (a reordering), or a word sequence at least 85% alike."""
    return similarity(a, b) >= NEAR_DUPLICATE_RATIO


SimilarityFunction = Callable[[str, str], float]


def _shown_words(sentence: str) -> int:
    """Length as the page shows it (tokenised "kilmarnock 's , he" is 3 words there, not 5)."""
    return len(detokenize(sentence).split())


def repeats_visible(candidate: str, visible: Sequence[str], *, edited: bool = True, similarity_of: SimilarityFunction = similarity) -> bool:
    """True when ``candidate`` is, up to its edit, one of the ``visible`` sentences.

    An edited trap (negation, pronoun swap, scramble...) must not be near any shown sentence: the edit
    would be visible side by side. An unedited copy of an article sentence (F0) only must not be
    identical to one: like genuine summaries of one article, it may resemble a shown sentence.
    """
    if edited:
        return any(similarity_of(candidate, v) >= NEAR_DUPLICATE_RATIO for v in visible)
    return any(similarity_of(candidate, v) >= 1.0 for v in visible)


COPY_TRAPS_PER_DOCUMENT = 4


def summary_like_sentences(article: Sequence[str], summary_sentences: Sequence[str], n: int = COPY_TRAPS_PER_DOCUMENT) -> list[str]:
    """The ``n`` article sentences (6 to 40 words) closest in wording to the summaries' sentences.

    Copied unedited they are factual traps (F0) that resemble the summaries as genuine sentences of
    different systems resemble each other, so a trap cannot be told by being unlike everything on the page.
    """
    scored = sorted(
        ((max((similarity(line, s) for s in summary_sentences), default=0.0), i)
         for i, line in enumerate(article) if 6 <= len(line.split()) <= 40),
        key=lambda pair: (-pair[0], pair[1]),
    )
    return [article[i] for _, i in scored[:n]]


def choose_traps(
    summaries: Sequence[Sequence[str]], traps: Sequence[tuple[int, str, bool]], slots: Sequence[int], rng: random.Random,
    *, similarity_of: SimilarityFunction = similarity,
) -> dict[int, int]:
    """Trap id for each summary position in ``slots``: a trap that repeats no sentence on the page.

    ``traps`` are ``(id, text, edited)``; ``edited`` is False for an unedited copy of an article sentence.

    Traps that repeat a shown sentence up to their edit (:func:`repeats_visible`) are never taken. Among the
    others, the trap whose length is closest to the summary's sentences is taken, then the one closest in
    wording to the page (genuine summaries of one article resemble each other; a trap unlike everything
    else, or much longer or shorter, would stand out too); ties at random. Positions with no trap left get
    none (the page then has fewer traps rather than a tell). ``similarity_of`` is :func:`similarity` or a
    table of its values computed beforehand (``annotate.frank.prepared``).
    """
    visible = [s for sentences in summaries for s in sentences]
    pool = list(traps)
    rng.shuffle(pool)
    chosen: dict[int, int] = {}
    for position in slots:
        lengths = sorted(_shown_words(s) for s in summaries[position]) or [0]
        low, high = lengths[0], lengths[-1]

        def rank(entry: tuple[int, tuple[int, str, bool]], low: int = low, high: int = high) -> tuple[int, float, int]:
            index, (_, text, _) = entry
            words = _shown_words(text)
            off = max(low - words, words - high, 0)
            return (off, -max((similarity_of(text, v) for v in visible), default=0.0), index)

        eligible = [(i, t) for i, t in enumerate(pool) if not repeats_visible(t[1], visible, edited=t[2], similarity_of=similarity_of)]
        if not eligible:
            continue
        index, _ = min(eligible, key=rank)
        trap_id, text, _ = pool.pop(index)
        chosen[position] = trap_id
        visible.append(text)
    return chosen


def replaced_sentence(sentences: Sequence[str], trap: str, rng: random.Random) -> int:
    """Which of a summary's sentences a trap replaces: the one closest to it in shown length (ties at random)."""
    words = _shown_words(trap)
    offs = [abs(_shown_words(s) - words) for s in sentences]
    best = min(offs, default=0)
    return rng.choice([i for i, off in enumerate(offs) if off == best]) if offs else 0


def place_traps(
    summaries: Sequence[Sequence[str]], traps: Sequence[tuple[int, str, bool]], slots: Sequence[int], rng: random.Random,
    *, similarity_of: SimilarityFunction = similarity,
) -> dict[int, tuple[int, int]]:
    """``{summary position: (trap id, index of the sentence it replaces)}``: :func:`choose_traps`, each trap put in
    place of its summary's sentence closest to it in length (:func:`replaced_sentence`)."""
    text = {trap_id: t for trap_id, t, _ in traps}
    chosen = choose_traps(summaries, traps, slots, rng, similarity_of=similarity_of)
    return {p: (trap_id, replaced_sentence(summaries[p], text[trap_id], rng)) for p, trap_id in chosen.items()}


def present_page(
    article: Sequence[str], summaries: Sequence[Sequence[str]], trap_texts: Sequence[str | None], relevant_k: int,
    *, relevance: Callable[[Sequence[str], Sequence[str], int], list[list[int]]] = relevant_sentences,
    trap_at: Sequence[int | None] | None = None, common: Collection[str] = frozenset(),
) -> tuple[list[str], list[list[dict[str, Any]]]]:
    """The article sentences and, per summary, ``[{"text", "relevant"}]`` exactly as the page shows them.

    ``trap_texts[i]`` (or None) takes the place of sentence ``trap_at[i]`` of summary ``i`` (appended when
    ``trap_at`` or its entry is None: pages laid out before traps replaced sentences), in that summary's
    style. ``relevance`` picks the underlined article sentences (the task page passes its cached variant);
    ``common``: the campaign's common words, for truecasing (``annotate.frank.prepared.campaign_common_words``).
    """
    shown_article = present_article(article)
    casing = casing_map(shown_article, common)
    pages = []
    for i, (sentences, trap) in enumerate(zip(summaries, trap_texts)):
        shown = present_summary(sentences, casing)
        at = trap_at[i] if trap_at is not None else None
        if trap and at is not None and at < len(shown):
            shown[at] = style_like(trap, shown, casing)  # styled like the summary, the sentence it replaces included
        elif trap:
            shown.append(style_like(trap, shown, casing))
        relevant = relevance(shown_article, shown, relevant_k)
        pages.append([{"text": s, "relevant": r} for s, r in zip(shown, relevant)])
    return shown_article, pages
