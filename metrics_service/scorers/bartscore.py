"""BARTScore-style faithfulness: the mean log-probability of the summary given the document.

``BARTScore(X -> Y) = 1/|Y| * sum_t log P(y_t | X, y_<t)`` over every decoder label token of the summary
as the tokenizer produces it (BOS/EOS included, as in Yuan et al.'s reference implementation), with the
document cut to the model's input limit. Higher (closer to 0) means more faithful.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .base import Scorer
from .seq2seq import DEFAULT_SUMMARIZER, Seq2SeqLM, load_seq2seq


class BARTScore(Scorer):
    """Average token log-probability of the summary under a seq2seq model fed the document.

    Args:
        model: local directory of a seq2seq model with a fast tokenizer, or a hub name in the local cache.
        device: None picks CUDA when present. batch_size: pairs per forward pass (neither enters
            :meth:`config_key`). dtype: ``auto`` (float32 on CPU, half precision on CUDA) or a dtype name.
    """

    name: ClassVar[str] = "bartscore"
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True

    def __init__(self, model: str = DEFAULT_SUMMARIZER, device: str | None = None, batch_size: int = 16,
                 dtype: str | None = "auto"):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        config: dict[str, Any] = {"model": str(model), "dtype": dtype}
        super().__init__(**config)
        self.model_name, self.device, self.batch_size, self.dtype = str(model), device, int(batch_size), dtype
        self._lm: Seq2SeqLM | None = None

    @property
    def output_names(self) -> tuple[str, ...]:
        return ("bartscore",)

    def load(self) -> Seq2SeqLM:
        """Load (once) and return the model."""
        if self._lm is None:
            self._lm = load_seq2seq(self.model_name, self.device, self.dtype)
        return self._lm

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        lm = self.load()
        sources = [lm.source_ids(d) for d in documents]
        targets = [lm.encode_target(s).ids for s in summaries]
        log_probs = lm.target_logprobs(sources, targets, batch_size=self.batch_size)
        return {"bartscore": [float(np.mean(lp)) if len(lp) else 0.0 for lp in log_probs]}
