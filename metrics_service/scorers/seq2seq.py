"""Teacher forcing on a HuggingFace seq2seq summarizer, shared by CoCo and BARTScore.

:class:`Seq2SeqLM` loads a tokenizer (a *fast* one: character offsets are needed) and an
``AutoModelForSeq2SeqLM`` once, and computes ``log P(y_t | x, y_<t)`` for every target token of many
(source, target) pairs in padded batches sorted by length, under ``torch.inference_mode``.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .base import ScorerError
from .hf import batches, input_limit, load_pretrained, pick_device, pick_dtype

DEFAULT_SUMMARIZER = "facebook/bart-large-cnn"


@dataclass(frozen=True)
class EncodedTarget:
    """A tokenized target (the summary as decoder labels) and each token's character span in the text."""

    ids: tuple[int, ...]
    #: (start, end) per id; (0, 0) or empty spans for special tokens.
    offsets: tuple[tuple[int, int], ...]

    def first_subword(self, start: int, end: int) -> int | None:
        """Index of the first non-empty token overlapping characters ``[start, end)``; None if truncated away."""
        for j, (s, e) in enumerate(self.offsets):
            if e > s and e > start and s < end:
                return j
        return None


class Seq2SeqLM:
    """A seq2seq model and its fast tokenizer, ready for batched teacher forcing.

    Args:
        model: local directory (``save_pretrained`` output) or hub name, resolved by :func:`load_pretrained`.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; None picks CUDA when present.
        dtype: ``"auto"`` (float32 on CPU, bfloat16/float16 on CUDA), or ``"float32"``, ``"float16"``, ``"bfloat16"``.
    """

    def __init__(self, model: str, device: str | None = None, dtype: str | None = "auto"):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        self.device = pick_device(device)
        self.dtype = pick_dtype(self.device, dtype)
        self.model = load_pretrained(AutoModelForSeq2SeqLM.from_pretrained, model, "seq2seq model", dtype=self.dtype)
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, model, "tokenizer of the seq2seq model")
        if not getattr(self.tokenizer, "is_fast", False):
            raise ScorerError(f"the tokenizer of {model!r} is not a fast tokenizer; character offsets are needed")
        self.model.to(self.device).eval()
        self.max_source_tokens = input_limit(self.tokenizer, self.model.config)
        self.max_target_tokens = input_limit(self.tokenizer, self.model.config)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

    # -- tokenization -----------------------------------------------------------------------------
    def source_ids(self, text: str, truncate: bool = True) -> list[int]:
        """Encoder ids of ``text`` (special tokens included), cut to the model's input limit if ``truncate``."""
        kwargs = {"truncation": True, "max_length": self.max_source_tokens} if truncate else {"verbose": False}
        return list(self.tokenizer(text, **kwargs)["input_ids"])

    def encode_target(self, text: str) -> EncodedTarget:
        """Decoder labels of ``text`` with character offsets, cut to the model's length limit."""
        enc = self.tokenizer(
            text_target=text, truncation=True, max_length=self.max_target_tokens, return_offsets_mapping=True
        )
        return EncodedTarget(tuple(enc["input_ids"]), tuple(tuple(o) for o in enc["offset_mapping"]))

    # -- teacher forcing --------------------------------------------------------------------------
    def target_logprobs(
        self, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]], batch_size: int = 16
    ) -> list[np.ndarray]:
        """``log P(target[t] | source, target[:t])`` for every position of every (source, target) pair.

        Pairs are deduplicated, sorted by length (longest first, so padding stays small and an
        out-of-memory error shows on the first batch) and run ``batch_size`` at a time. Returns one
        float64 array per pair, aligned with ``targets[i]``.
        """
        import torch

        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        unique: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        index = [unique.setdefault((tuple(s), tuple(t)), len(unique)) for s, t in zip(sources, targets)]
        pairs = list(unique)
        order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1])), reverse=True)
        results: list[np.ndarray | None] = [None] * len(pairs)
        with torch.inference_mode():
            for chunk in batches(order, batch_size):
                src = [pairs[i][0] for i in chunk]
                tgt = [pairs[i][1] for i in chunk]
                log_probs = self._batch_logprobs(src, tgt)
                for row, i in enumerate(chunk):
                    results[i] = log_probs[row, : len(tgt[row])]
        return [results[i] for i in index]  # type: ignore[misc]

    def _batch_logprobs(self, src: list[tuple[int, ...]], tgt: list[tuple[int, ...]]) -> np.ndarray:
        import torch

        n, s_len, t_len = len(src), max(map(len, src)), max(map(len, tgt))
        input_ids = torch.full((n, s_len), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((n, s_len), dtype=torch.long)
        labels = torch.full((n, t_len), -100, dtype=torch.long)
        for row, (s, t) in enumerate(zip(src, tgt)):
            input_ids[row, : len(s)] = torch.tensor(s)
            attention_mask[row, : len(s)] = 1
            labels[row, : len(t)] = torch.tensor(t)
        decoder_input_ids = self._decoder_inputs(labels)
        logits = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=attention_mask.to(self.device),
            decoder_input_ids=decoder_input_ids.to(self.device),
        ).logits.float()  # log-softmax in float32 even when the model runs in half precision
        gold = labels.clamp(min=0).to(self.device).unsqueeze(-1)
        log_probs = logits.gather(-1, gold).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        return log_probs.double().cpu().numpy()

    def _decoder_inputs(self, labels: Any) -> Any:
        """Labels shifted right behind the decoder start token (the model's own rule when it has one)."""
        prepare = getattr(self.model, "prepare_decoder_input_ids_from_labels", None)
        if prepare is not None:
            return prepare(labels=labels)
        from transformers.models.bart.modeling_bart import shift_tokens_right

        start = self.model.config.decoder_start_token_id
        if start is None:
            raise ScorerError("the model config has no decoder_start_token_id; cannot teacher-force")
        return shift_tokens_right(labels, self.pad_id, start)


_cache_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cached(model: str, device: str | None, dtype: str | None) -> Seq2SeqLM:
    return Seq2SeqLM(model, device=device, dtype=dtype)


def load_seq2seq(model: str, device: str | None = None, dtype: str | None = "auto") -> Seq2SeqLM:
    """A :class:`Seq2SeqLM`, shared by every scorer of the process that asks for the same model/device/dtype."""
    with _cache_lock:
        return _cached(str(model), device, dtype)
