"""Which article sentences are most relevant to a summary sentence (FRANK underlines them for annotators).

Lexical TF-IDF cosine similarity (scikit-learn): fast, deterministic and needs no model weights.
"""
from __future__ import annotations

from collections.abc import Sequence


def relevant_sentences(article_sentences: Sequence[str], queries: Sequence[str], k: int) -> list[list[int]]:
    """For each query, the indexes of the ``k`` article sentences most similar to it, best first.

    Similarity is the cosine of TF-IDF vectors fitted on the article sentences and the queries
    (unigrams and bigrams, English stop words removed). One rule for every sentence shown, traps included:
    always ``min(k, len(article))`` sentences, whatever their score (ties by position), so no sentence stands
    out by having fewer underlines. ``k <= 0`` gives ``[]`` for every query.
    """
    if k <= 0 or not article_sentences or not queries:
        return [[] for _ in queries]
    # Imported here: scikit-learn costs a second of start-up to every manage.py command otherwise.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), stop_words="english", lowercase=True)
    try:
        matrix = vectorizer.fit_transform(list(article_sentences) + list(queries))
    except ValueError:
        # Only stop words everywhere: nothing to match on, the first k sentences by the same rule.
        return [list(range(min(k, len(article_sentences)))) for _ in queries]
    n = len(article_sentences)
    sims = cosine_similarity(matrix[n:], matrix[:n])
    result: list[list[int]] = []
    for row in sims:
        order = sorted(range(n), key=lambda i: (-row[i], i))[:k]
        result.append(order)
    return result
