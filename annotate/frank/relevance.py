"""Which article sentences are most relevant to a summary sentence (FRANK underlines them for annotators).

Lexical TF-IDF cosine similarity (scikit-learn): fast, deterministic and needs no model weights.
"""
from __future__ import annotations

from collections.abc import Sequence


def relevant_sentences(article_sentences: Sequence[str], queries: Sequence[str], k: int) -> list[list[int]]:
    """For each query, the indexes of the ``k`` article sentences most similar to it, best first.

    Similarity is the cosine of TF-IDF vectors (unigrams and bigrams, English stop words removed, lower-cased)
    whose vocabulary and weights are fitted on the article sentences alone. So a sentence's underlines depend
    on the article and that sentence only, never on the other sentences of the page: they can be computed
    once per sentence, and a trap is ranked by exactly the rule of the sentences around it. Always
    ``min(k, len(article))`` sentences, whatever their score (ties by position), so no sentence stands out by
    having fewer underlines. ``k <= 0`` gives ``[]`` for every query.
    """
    if k <= 0 or not article_sentences or not queries:
        return [[] for _ in queries]
    # Imported here: scikit-learn costs a second of start-up to every manage.py command otherwise.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), stop_words="english", lowercase=True)
    n = len(article_sentences)
    try:
        article_matrix = vectorizer.fit_transform(list(article_sentences))
    except ValueError:
        # Only stop words in the article: nothing to match on, the first k sentences by the same rule.
        return [list(range(min(k, n))) for _ in queries]
    sims = cosine_similarity(vectorizer.transform(list(queries)), article_matrix)
    return [sorted(range(n), key=lambda i, row=row: (-row[i], i))[:k] for row in sims]
