"""Word overlap of a summary sentence with its article: the page feature control gold is stratified by.

A script holding a task page computes how much of a sentence its article holds; FRANK's factual gold is
mostly copied from the article and its erroneous gold mostly abstractive, so the balanced quality score
(:mod:`annotate.services.quality`) is balanced within bands of this overlap, where a rule reading it alone
scores what answering one way scores, 0.5.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from annotate.models import Campaign, Document, GoldLabel, Summary, Trap, TrapAnswer
from annotate.nlp import split_sentences

from .checks_version import checks_changed

_WORD = re.compile(r"[a-z0-9]+")
#: Lower edges of the word-overlap bands the balanced score is stratified by: under half the words in one
#: article sentence, 0.5-0.8, 0.8 up to (not including) a full copy, and every word found in one article
#: sentence (1.0). On FRANK's imported gold the best one-threshold overlap rule scores 0.89 pooled and 0.53
#: within these bands (benchmarks/control_predictability.py); the band of exact copies matters most.
OVERLAP_BANDS = (0.5, 0.8, 1.0)


def sentence_overlap(sentence: str, article_sentences: Sequence[str], *, vocabularies: Sequence[set[str]] | None = None) -> float:
    """The share of ``sentence``'s words (lower-cased letters and digits) found in its closest article sentence
    (``vocabularies``: the article sentences' words, from :func:`article_vocabularies`, when many sentences of one
    page are measured).

    Examples
    --------
    >>> sentence_overlap("The mayor resigned on Monday.", ["The mayor resigned.", "It rained on Monday."])
    0.6
    >>> sentence_overlap("", ["Anything."])
    1.0
    """
    words = _WORD.findall(sentence.lower())
    if not words:
        return 1.0
    best = 0
    for vocabulary in vocabularies if vocabularies is not None else article_vocabularies(article_sentences):
        best = max(best, sum(word in vocabulary for word in words))
    return round(best / len(words), 4)



def word_count(text: str) -> int:
    """The words of ``text`` as the overlap counts them (lower-cased runs of letters and digits).

    Examples
    --------
    >>> word_count("Prices rose 5% in 2023.")
    5
    """
    return len(_WORD.findall(text.lower()))


def article_vocabularies(article_sentences: Sequence[str]) -> list[set[str]]:
    return [set(_WORD.findall(line.lower())) for line in article_sentences]


def sentence_page_features(sentences: Sequence[str], article_sentences: Sequence[str]) -> list[list[float]]:
    """Per sentence of one summary as a page shows it: ``[word overlap with the closest article sentence, word
    count]``, what a script holding the page computes (with the position and the summary's length, known from
    the layout); kept with the layout, so that answers a page feature predicts show (services/predictable_answers)."""
    vocabularies = article_vocabularies(article_sentences)
    return [[sentence_overlap(text, (), vocabularies=vocabularies), word_count(text)] for text in sentences]



def overlap_band(overlap: float | None) -> int:
    """The band of an overlap (0: below the first edge; -1: not known, e.g. a label from before overlaps were kept).

    Examples
    --------
    >>> [overlap_band(x) for x in (0.2, 0.5, 0.9, 1.0, None)]
    [0, 1, 2, 3, -1]
    """
    return -1 if overlap is None else sum(overlap >= edge for edge in OVERLAP_BANDS)



def band_sql(column: str) -> str:
    """:func:`overlap_band` in SQL, so the database groups checked answers by it."""
    steps = " ".join(f"WHEN {column} >= {edge} THEN {n}" for n, edge in reversed(list(enumerate(OVERLAP_BANDS, 1))))
    return f"CASE WHEN {column} IS NULL THEN -1 {steps} ELSE 0 END"



def summary_sentences(summary: Summary) -> list[str]:
    """A summary's sentences as its pages number them (stored sentences, else split from its text)."""
    return [s for s in (summary.sentences or []) if s.strip()] or split_sentences(summary.text)



def record_overlaps(campaign: Campaign, documents: Iterable[int] | None = None) -> int:
    """Store the word overlap of every gold sentence and trap (of ``documents``, when given) that has none yet:
    computed once, when the label or trap is set, since the article and the sentence do not change. Returns
    how many rows were updated."""
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign, overlap__isnull=True)
    traps = Trap.objects.filter(document__campaign=campaign, overlap__isnull=True)
    if documents is not None:
        documents = list(documents)
        gold, traps = gold.filter(summary__document_id__in=documents), traps.filter(document_id__in=documents)
    articles: dict[int, list[str]] = {}

    def article(document: Document) -> list[str]:
        if document.pk not in articles:
            articles[document.pk] = document.sentences or split_sentences(document.text)
        return articles[document.pk]

    labels = list(gold.select_related("summary__document"))
    sentences: dict[int, list[str]] = {}
    for label in labels:
        summary = label.summary
        if summary.pk not in sentences:
            sentences[summary.pk] = summary_sentences(summary)
        text = sentences[summary.pk][label.sentence_index] if label.sentence_index < len(sentences[summary.pk]) else ""
        label.overlap = sentence_overlap(text, article(summary.document))
    GoldLabel.objects.bulk_update(labels, ["overlap"], batch_size=1000)
    made = list(traps.select_related("document"))
    for trap in made:
        trap.overlap = sentence_overlap(trap.text, article(trap.document))
    Trap.objects.bulk_update(made, ["overlap"], batch_size=1000)
    if labels or (made and TrapAnswer.objects.filter(trap__in=made).exists()):
        # The overlap is the stratum of the answers counted per participation; a new trap has none yet (the
        # usual case: traps added with a page).
        checks_changed(campaign)
    return len(labels) + len(made)


