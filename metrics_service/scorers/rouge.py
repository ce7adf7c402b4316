"""ROUGE-1/2/L F1 against the reference and ROUGE-2 precision against the article (as BUMP reports).

Computed by Google's ``rouge-score`` package with Porter stemming. Scale [0, 1]. The reference outputs
(``rouge1``, ``rouge2``, ``rougeL``) are returned only when references are given;
``rouge2_precision_article`` (the share of the summary's bigrams found in the article) always.
Light scorer: no torch.

Two things keep it fast without changing a score: each word's Porter stem is computed once per scorer (the
package stems every token of every text again, most of its time on a corpus whose articles and summaries
repeat their words), and the article's bigram precision is computed alone (the package's scorer built for the
reference outputs would also fill a longest-common-subsequence table of article by summary, for nothing).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar

from .base import Scorer

REFERENCE_OUTPUTS = ("rouge1", "rouge2", "rougeL")


class Rouge(Scorer):
    """ROUGE via ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)``."""

    name: ClassVar[str] = "rouge"
    direction: ClassVar[int] = 1
    reference_outputs: ClassVar[tuple[str, ...]] = REFERENCE_OUTPUTS

    def __init__(self, use_stemmer: bool = True):
        super().__init__(use_stemmer=bool(use_stemmer))
        from rouge_score.rouge_scorer import RougeScorer

        tokenizer = _StemOnceTokenizer() if use_stemmer else None
        self._scorer = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=bool(use_stemmer), tokenizer=tokenizer)
        self._article_scorer = RougeScorer(["rouge2"], use_stemmer=bool(use_stemmer), tokenizer=tokenizer)

    @property
    def output_names(self) -> tuple[str, ...]:
        return REFERENCE_OUTPUTS + ("rouge2_precision_article",)

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        out: dict[str, list[float]] = {}
        if references is not None:
            per_pair = [self._scorer.score(target=ref, prediction=summ) for ref, summ in zip(references, summaries)]
            for key in REFERENCE_OUTPUTS:
                out[key] = [float(s[key].fmeasure) for s in per_pair]
        out["rouge2_precision_article"] = [
            float(self._article_scorer.score(target=doc, prediction=summ)["rouge2"].precision)
            for doc, summ in zip(documents, summaries)
        ]
        return out


class _StemOnceTokenizer:
    """``rouge-score``'s default tokenizer with Porter stemming (the same tokens), each word stemmed once."""

    def __init__(self, max_words: int = 200_000):
        from nltk.stem import porter
        from rouge_score import tokenize

        self.stem = functools.lru_cache(maxsize=max_words)(porter.PorterStemmer().stem)
        self._tokenize = tokenize.tokenize  # calls our stem for each word longer than three letters

    def tokenize(self, text: str) -> list[str]:
        return self._tokenize(text, self)
