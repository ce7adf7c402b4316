"""Sentence BLEU of the summary against the reference and against the article (``sacrebleu``).

``sacrebleu.sentence_bleu(summary, [reference]).score`` with sacrebleu's defaults (13a tokenization,
exponential smoothing), on sacrebleu's 0-100 scale: the same scores from one ``BLEU(effective_order=True)``
(what ``sentence_bleu`` builds anew for every pair, its tokenizer included: 60% of the time on FRANK). ``bleu`` (against the reference) is returned only
when references are given; ``bleu_article`` always. Light scorer: no torch.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from .base import Scorer


class Bleu(Scorer):
    """sacrebleu sentence BLEU (0-100) against the reference (``bleu``) and the article (``bleu_article``)."""

    name: ClassVar[str] = "bleu"
    direction: ClassVar[int] = 1
    reference_outputs: ClassVar[tuple[str, ...]] = ("bleu",)

    def __init__(self) -> None:
        super().__init__()

    @property
    def output_names(self) -> tuple[str, ...]:
        return ("bleu", "bleu_article")

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        from sacrebleu.metrics import BLEU

        self._check_lengths(documents, summaries, references)
        bleu = BLEU(effective_order=True)  # sentence_bleu's settings
        out: dict[str, list[float]] = {}
        if references is not None:
            out["bleu"] = [float(bleu.sentence_score(s, [r]).score) for s, r in zip(summaries, references)]
        out["bleu_article"] = [float(bleu.sentence_score(s, [d]).score) for s, d in zip(summaries, documents)]
        return out
