"""AlignScore (Zha et al., ACL 2023): factual consistency from a unified alignment function.

As in the paper's inference: the context (document) is split into chunks of about ``chunk_size`` words
(350) at sentence boundaries, the claim (summary) into sentences; each (chunk, sentence) pair goes
through the RoBERTa backbone and the 3-way classification head (aligned / contradict / neutral), and the
pair's alignment is the softmax probability of "aligned" (class 0, the paper's ``nli_sp`` mode). Each claim
sentence keeps the maximum over chunks and the score is the mean over the claim's sentences. Range
[0, 1]; 0.0 for an empty document or summary.

Weights (none ship with FactLab), either:

* the released PyTorch Lightning checkpoint (``AlignScore-large.ckpt``) with ``backbone=`` naming the
  backbone's configuration and tokenizer (a local copy of ``roberta-large``, or of ``roberta-base`` for
  AlignScore-base): its ``base_model.*`` weights load into the backbone and ``tri_layer.*`` into the head;
* a directory holding the backbone saved with ``save_pretrained`` (tokenizer included) and the head as
  ``alignscore_head.safetensors`` (``tri_layer.weight``, ``tri_layer.bias``); :func:`save_converted`
  writes that directory from a checkpoint.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .base import Scorer, ScorerError
from .chunking import aggregate_matrix, chunk_claim_matrices, pack_chunks
from .hf import (
    batches,
    input_limit,
    load_pretrained,
    pick_device,
    pick_dtype,
    resolve_local_dir,
)

DEFAULT_ALIGNSCORE_MODEL = "AlignScore-large.ckpt"
HEAD_FILE = "alignscore_head.safetensors"
CHUNK_WORDS = 350
#: AlignScore's encoder input length.
MAX_TOKENS = 512
_ALIGNED = 0


def _words(text: str) -> int:
    return len(text.split())


def _checkpoint_weights(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(backbone weights, head weights) from an AlignScore Lightning checkpoint."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ScorerError(f"cannot read the AlignScore checkpoint {path}: {exc}") from exc
    weights = state.get("state_dict", state) if isinstance(state, dict) else None
    if not isinstance(weights, dict):
        raise ScorerError(f"{path} holds no state_dict; expected an AlignScore checkpoint")
    backbone = {k[len("base_model."):]: v for k, v in weights.items() if k.startswith("base_model.")}
    head = {k[len("tri_layer."):]: v for k, v in weights.items() if k.startswith("tri_layer.")}
    if not backbone or set(head) != {"weight", "bias"}:
        raise ScorerError(f"{path} has no base_model.* / tri_layer.* weights; expected an AlignScore checkpoint")
    return backbone, head


class AlignModel:
    """The AlignScore backbone and its 3-way head, scoring (chunk, claim sentence) pairs in batches."""

    def __init__(self, model: str, backbone: str | None = None, device: str | None = None, dtype: str | None = "auto"):
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        self.device = pick_device(device)
        torch_dtype = pick_dtype(self.device, dtype)
        path = Path(str(model)).expanduser()
        if path.is_file():
            if not backbone:
                raise ScorerError("an AlignScore checkpoint needs backbone= (a local roberta-large or roberta-base directory)")
            backbone_weights, head_weights = _checkpoint_weights(path)
            config = load_pretrained(AutoConfig.from_pretrained, backbone, "AlignScore backbone configuration")
            self.encoder = AutoModel.from_config(config, add_pooling_layer=True)
            missing, _unexpected = self.encoder.load_state_dict(backbone_weights, strict=False)
            missing = [k for k in missing if not k.endswith("position_ids")]
            if missing:
                raise ScorerError(f"the checkpoint {path} does not fit the backbone {backbone!r}: missing {missing[:5]}")
            self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, backbone, "AlignScore tokenizer")
        else:
            directory = resolve_local_dir(model, "AlignScore model")
            head_path = Path(directory) / HEAD_FILE
            if not head_path.is_file():
                raise ScorerError(f"{directory} has no {HEAD_FILE}; convert the checkpoint with alignscore.save_converted")
            from safetensors.torch import load_file

            head_weights = {k.removeprefix("tri_layer."): v for k, v in load_file(str(head_path)).items()}
            self.encoder = load_pretrained(AutoModel.from_pretrained, directory, "AlignScore backbone", add_pooling_layer=True)
            self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, directory, "AlignScore tokenizer")
        hidden = self.encoder.config.hidden_size
        self.head = torch.nn.Linear(hidden, 3)
        try:
            self.head.load_state_dict(head_weights)
        except RuntimeError as exc:
            raise ScorerError(f"the AlignScore head does not fit a backbone of hidden size {hidden}: {exc}") from exc
        self.encoder.to(self.device, dtype=torch_dtype).eval()
        self.head.to(self.device, dtype=torch_dtype).eval()
        self.max_tokens = min(MAX_TOKENS, input_limit(self.tokenizer, self.encoder.config, MAX_TOKENS))

    def aligned(self, chunks: Sequence[str], claims: Sequence[str], batch_size: int = 16) -> np.ndarray:
        """``P(aligned)`` per (chunk, claim sentence) pair."""
        import torch

        if not chunks:
            return np.zeros(0)
        # The chunk is cut first (the paper truncates only the context); longest_first also copes with a
        # claim sentence that alone exceeds the limit.
        enc = self.tokenizer(list(chunks), list(claims), truncation="longest_first", max_length=self.max_tokens, verbose=False)
        features = [{key: enc[key][i] for key in enc} for i in range(len(chunks))]
        order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
        out = np.zeros(len(features))
        with torch.inference_mode():
            for part in batches(order, batch_size):
                batch = self.tokenizer.pad([features[i] for i in part], return_tensors="pt")
                pooled = self.encoder(**{k: v.to(self.device) for k, v in batch.items()}).pooler_output
                out[part] = torch.softmax(self.head(pooled).float(), dim=-1)[:, _ALIGNED].double().cpu().numpy()
        return out


def save_converted(checkpoint: str | Path, backbone: str, directory: str | Path) -> Path:
    """Write an AlignScore checkpoint as a FactLab model directory (backbone + tokenizer + head file)."""
    from safetensors.torch import save_file

    model = AlignModel(str(checkpoint), backbone=backbone, device="cpu", dtype="float32")
    directory = Path(directory)
    model.encoder.save_pretrained(directory)
    model.tokenizer.save_pretrained(directory)
    save_file({f"tri_layer.{k}": v.contiguous() for k, v in model.head.state_dict().items()}, str(directory / HEAD_FILE))
    return directory


_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cached(model: str, backbone: str | None, device: str | None, dtype: str | None) -> AlignModel:
    return AlignModel(model, backbone, device, dtype)


class AlignScore(Scorer):
    """AlignScore: mean over summary sentences of the max over ~350-word document chunks of ``P(aligned)``.

    Args:
        model: a converted AlignScore directory, or the released ``.ckpt`` file with ``backbone=``.
        backbone: local directory (or cached hub name) of the checkpoint's backbone (roberta-large/base).
        chunk_size: context chunk size in words (350 as in the paper).
        device, batch_size, dtype: execution settings (bf16/fp16 on a GPU by default).
    """

    name: ClassVar[str] = "alignscore"
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True

    def __init__(self, model: str | None = None, backbone: str | None = None, chunk_size: int = CHUNK_WORDS,
                 device: str | None = None, batch_size: int = 16, dtype: str | None = "auto"):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        model = str(model or DEFAULT_ALIGNSCORE_MODEL)
        super().__init__(model=model, backbone=backbone, chunk_size=int(chunk_size), dtype=dtype)
        self.model_name, self.backbone, self.chunk_size = model, backbone, int(chunk_size)
        self.device, self.batch_size, self.dtype = device, int(batch_size), dtype

    @property
    def output_names(self) -> tuple[str, ...]:
        return (self.name,)

    def load(self) -> AlignModel:
        with _lock:
            return _cached(self.model_name, self.backbone, self.device, self.dtype)

    def matrices(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        """``P(aligned)`` per summary, shape (document chunks, summary sentences)."""
        from metrics_service.text import split_sentences_many

        model = self.load()
        return chunk_claim_matrices(
            documents, summaries, split_sentences_many,
            lambda doc_sentences, _claims: pack_chunks(doc_sentences, self.chunk_size, _words),
            lambda chunks, claims: model.aligned(chunks, claims, self.batch_size),
        )

    def score(self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
              ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        return {self.name: [aggregate_matrix(m, "mean") for m in self.matrices(documents, summaries)]}
