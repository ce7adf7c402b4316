"""ROUGE-1/2/L F1 against the reference and ROUGE-2 precision against the article (as BUMP reports).

Computed by Google's ``rouge-score`` package with Porter stemming. Scale [0, 1]. The reference outputs
(``rouge1``, ``rouge2``, ``rougeL``) are returned only when references are given;
``rouge2_precision_article`` (the share of the summary's bigrams found in the article) always.
Light scorer: no torch.
"""
from __future__ import annotations

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

        self._scorer = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=bool(use_stemmer))

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
            float(self._scorer.score(target=doc, prediction=summ)["rouge2"].precision)
            for doc, summ in zip(documents, summaries)
        ]
        return out
