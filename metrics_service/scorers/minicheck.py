"""MiniCheck (Tang, Laban and Durrett, EMNLP 2024): grounding checks with a small fine-tuned model.

For every (document chunk, claim sentence) pair the model gives ``P(supported)``; each claim sentence
keeps the maximum over the document's chunks (a sentence is supported if some part of the document
supports it), and the summary score aggregates its sentences:

* ``aggregate="min"`` (default): the least-supported sentence, since a summary is consistent only when
  every one of its sentences is (LLM-AggreFact's claims are single sentences, for which min = the
  sentence's own score);
* ``aggregate="mean"``: the mean over sentences, a softer graded score.

Two model families are supported, told apart from the model's config:

* sequence classifiers (MiniCheck-RoBERTa-Large, MiniCheck-DeBERTa-v3-Large): input ``(chunk, claim)``
  as a sentence pair, ``P(supported)`` = softmax probability of class ``supported_label`` (1);
* seq2seq models (MiniCheck-Flan-T5-Large): input ``"premise: <chunk> hypothesis: <claim>"``, one decoder
  step from the start token, ``P(supported)`` = softmax over the logits of the tokens "1" and "0" only.

The document is split into spaCy sentences and packed into chunks of about ``chunk_size`` tokens
(MiniCheck's defaults: 400 for the classifiers, 500 for Flan-T5), never more than the model's input limit
leaves after the claim. Range [0, 1]; 0.0 for an empty document or summary. No weights ship with FactLab.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np

from .base import Scorer, ScorerError
from .chunking import (
    aggregate_matrix,
    check_aggregate,
    chunk_claim_matrices,
    pack_chunks,
)
from .entailment import load_nli
from .hf import batches, input_limit, load_pretrained, pick_device, pick_dtype

DEFAULT_MINICHECK_MODEL = "lytang/MiniCheck-Flan-T5-Large"
CLASSIFIER_CHUNK_TOKENS = 400
SEQ2SEQ_CHUNK_TOKENS = 500
#: Room kept for special tokens and the T5 prompt words around the chunk and the claim.
_OVERHEAD_TOKENS = 8


class Seq2SeqJudge:
    """A Flan-T5-style model answering "1" (supported) or "0" in its first decoder step."""

    def __init__(self, model: str, device: str | None = None, dtype: str | None = "auto",
                 label_tokens: tuple[str, str] = ("0", "1")):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        self.device = pick_device(device)
        self.model = load_pretrained(AutoModelForSeq2SeqLM.from_pretrained, model, "MiniCheck model",
                                     dtype=pick_dtype(self.device, dtype))
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, model, "tokenizer of the MiniCheck model")
        self.model.to(self.device).eval()
        self.max_tokens = input_limit(self.tokenizer, self.model.config)
        self.label_ids = [self._single_token(t) for t in label_tokens]
        start = self.model.config.decoder_start_token_id
        self.start_id = start if start is not None else (self.tokenizer.pad_token_id or 0)

    def _single_token(self, text: str) -> int:
        ids = [i for i in self.tokenizer(text, add_special_tokens=False)["input_ids"]
               if self.tokenizer.convert_ids_to_tokens(i) not in ("▁", "Ġ", " ")]
        if len(ids) != 1:
            raise ScorerError(f"the label {text!r} is not one token for this tokenizer ({ids}); pass label_tokens=")
        return ids[0]

    def count(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def probabilities(self, chunks: Sequence[str], claims: Sequence[str], batch_size: int = 16) -> np.ndarray:
        """``P(supported)`` per (chunk, claim) pair."""
        import torch

        if not chunks:
            return np.zeros(0)
        texts = [f"premise: {c} hypothesis: {h}" for c, h in zip(chunks, claims)]
        enc = self.tokenizer(texts, truncation=True, max_length=self.max_tokens)
        features = [{key: enc[key][i] for key in enc} for i in range(len(texts))]
        order = sorted(range(len(texts)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
        out = np.zeros(len(texts))
        with torch.inference_mode():
            for chunk in batches(order, batch_size):
                batch = {k: v.to(self.device) for k, v in self.tokenizer.pad([features[i] for i in chunk], return_tensors="pt").items()}
                start = torch.full((len(chunk), 1), self.start_id, dtype=torch.long, device=self.device)
                logits = self.model(**batch, decoder_input_ids=start).logits[:, 0, self.label_ids].float()
                out[chunk] = torch.softmax(logits, dim=-1)[:, 1].double().cpu().numpy()
        return out


class _ClassifierJudge:
    """A MiniCheck sequence classifier: ``P(class supported_label | chunk, claim)``."""

    def __init__(self, model: str, device: str | None, dtype: str | None, supported_label: int):
        self.nli = load_nli(model, device, dtype)
        if supported_label not in {int(i) for i in self.nli.id2label}:
            raise ScorerError(f"supported_label {supported_label} out of range; the model has labels {self.nli.id2label}")
        self.supported_label = supported_label
        self.max_tokens = self.nli.max_tokens
        self.tokenizer = self.nli.tokenizer

    def count(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def probabilities(self, chunks: Sequence[str], claims: Sequence[str], batch_size: int = 16) -> np.ndarray:
        if not chunks:
            return np.zeros(0)
        return self.nli.probabilities(chunks, claims, batch_size)[:, self.supported_label]


_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cached_judge(model: str, device: str | None, dtype: str | None, supported_label: int,
                  label_tokens: tuple[str, str]) -> Seq2SeqJudge | _ClassifierJudge:
    from transformers import AutoConfig

    config = load_pretrained(AutoConfig.from_pretrained, model, "MiniCheck model configuration")
    if getattr(config, "is_encoder_decoder", False):
        return Seq2SeqJudge(model, device, dtype, label_tokens)
    return _ClassifierJudge(model, device, dtype, supported_label)


class MiniCheck(Scorer):
    """MiniCheck: max over document chunks of ``P(supported)`` per claim sentence, then min (or mean).

    Args:
        model: local directory or cached hub name of a MiniCheck model (RoBERTa, DeBERTa or Flan-T5 variant);
            default ``lytang/MiniCheck-Flan-T5-Large``.
        chunk_size: document chunk size in tokens (default 400 for classifiers, 500 for seq2seq models).
        aggregate: ``"min"`` (default) or ``"mean"`` over the summary's sentences.
        supported_label: class index of "supported" for classifiers (1 in MiniCheck's models).
        label_tokens: the (unsupported, supported) answer tokens of the seq2seq variant, ("0", "1").
        device, batch_size, dtype: execution settings (bf16/fp16 on a GPU by default).
    """

    name: ClassVar[str] = "minicheck"
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True

    def __init__(self, model: str | None = None, chunk_size: int | None = None, aggregate: str = "min",
                 supported_label: int = 1, label_tokens: Sequence[str] = ("0", "1"), device: str | None = None,
                 batch_size: int = 16, dtype: str | None = "auto"):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if chunk_size is not None and int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        if len(label_tokens) != 2:
            raise ValueError(f"label_tokens must be (unsupported, supported), got {label_tokens!r}")
        model = str(model or DEFAULT_MINICHECK_MODEL)
        super().__init__(model=model, chunk_size=chunk_size, aggregate=check_aggregate(aggregate),
                         supported_label=int(supported_label), label_tokens=list(label_tokens), dtype=dtype)
        self.model_name, self.chunk_size, self.aggregate = model, chunk_size, aggregate
        self.supported_label, self.label_tokens = int(supported_label), (str(label_tokens[0]), str(label_tokens[1]))
        self.device, self.batch_size, self.dtype = device, int(batch_size), dtype

    @property
    def output_names(self) -> tuple[str, ...]:
        return (self.name,)

    def load(self) -> Seq2SeqJudge | _ClassifierJudge:
        with _lock:
            return _cached_judge(self.model_name, self.device, self.dtype, self.supported_label, self.label_tokens)

    def chunks(self, document: str, claims: Sequence[str]) -> list[str]:
        """The document's chunks for these claim sentences (what each claim is checked against)."""
        from metrics_service.text import split_sentences

        return self._chunks(self.load(), split_sentences(document) if document.strip() else [], claims)

    def _chunks(self, judge: Seq2SeqJudge | _ClassifierJudge, doc_sentences: Sequence[str], claims: Sequence[str]) -> list[str]:
        default = SEQ2SEQ_CHUNK_TOKENS if isinstance(judge, Seq2SeqJudge) else CLASSIFIER_CHUNK_TOKENS
        longest_claim = max((judge.count(c) for c in claims), default=0)
        room = judge.max_tokens - longest_claim - _OVERHEAD_TOKENS
        size = max(1, min(int(self.chunk_size or default), room))
        return pack_chunks(doc_sentences, size, judge.count)

    def matrices(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        """``P(supported)`` per summary, shape (document chunks, summary sentences)."""
        from metrics_service.text import split_sentences_many

        judge = self.load()
        return chunk_claim_matrices(
            documents, summaries, split_sentences_many,
            lambda doc_sentences, claims: self._chunks(judge, doc_sentences, claims),
            lambda chunks, claims: judge.probabilities(chunks, claims, self.batch_size),
        )

    def score(self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
              ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        return {self.name: [aggregate_matrix(m, self.aggregate) for m in self.matrices(documents, summaries)]}


__all__ = ["DEFAULT_MINICHECK_MODEL", "MiniCheck", "Seq2SeqJudge"]
