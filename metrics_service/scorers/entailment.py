"""Entailment-based faithfulness with any HuggingFace sequence-classification NLI model.

* :class:`SummaCZS` (``summac_zs``, after Laban et al. 2022, zero-shot, sentence granularity): split the
  document and the summary into spaCy sentences, score every (document sentence -> summary sentence)
  pair with the NLI model, take for each summary sentence the **maximum over document sentences** of
  ``P(entailment)`` (default) or of ``P(entailment) - P(contradiction)`` (``use_contradiction=True``,
  SummaC-ZS's own choice), then **average over summary sentences**. Range [0, 1] (resp. [-1, 1]).
* :class:`FactCC` (``factcc``): a FactCC-style classifier applied to (document, summary sentence)
  pairs; the score is ``P(consistent)`` averaged over summary sentences. Range [0, 1].

Both give 0.0 to an empty summary or document (nothing can be supported). The label that means
"entailed / consistent" (and "contradiction") is read from ``config.id2label`` by name, or given with
``entailment_label=`` / ``contradiction_label=`` (index or label name). Premises longer than the model's
input limit are truncated (longest side first). No weights ship with FactLab: pass a local path.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from .base import Scorer, ScorerError
from .hf import batches, input_limit, load_pretrained, pick_device, pick_dtype

DEFAULT_SUMMAC_MODEL = "tals/albert-xlarge-vitaminc-mnli"
DEFAULT_FACTCC_MODEL = "manueldeprada/FactCC"

ENTAILMENT_NAMES = ("entailment", "entailed", "entails", "entail", "consistent", "correct", "supports", "support")
CONTRADICTION_NAMES = ("contradiction", "contradicts", "contradict", "inconsistent", "incorrect", "refutes", "refute")


def find_label(id2label: dict[int, str], names: Sequence[str], override: int | str | None, what: str) -> int:
    """The class index of ``what``: ``override`` (index or name) or the first label named like ``names``."""
    labels = {int(i): str(lbl) for i, lbl in id2label.items()}
    if override is not None:
        if isinstance(override, int) or str(override).isdigit():
            index = int(override)
            if index not in labels:
                raise ScorerError(f"{what} label index {index} out of range; the model has labels {labels}")
            return index
        matches = [i for i, lbl in labels.items() if lbl.lower() == str(override).lower()]
        if not matches:
            raise ScorerError(f"no label named {override!r}; the model has labels {labels}")
        return matches[0]
    for name in names:  # exact names, so "incorrect" never counts as "correct"
        for i, lbl in labels.items():
            if lbl.strip().lower() == name:
                return i
    raise ScorerError(
        f"cannot tell which label means {what} from the model's labels {labels}; "
        f"pass {what}_label=<index or name>"
    )


class NLIClassifier:
    """An NLI sequence classifier and its tokenizer, scoring (premise, hypothesis) pairs in batches."""

    def __init__(self, model: str, device: str | None = None, dtype: str | None = "auto"):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = pick_device(device)
        self.model = load_pretrained(
            AutoModelForSequenceClassification.from_pretrained, model, "NLI model", dtype=pick_dtype(self.device, dtype)
        )
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, model, "tokenizer of the NLI model")
        self.model.to(self.device).eval()
        self.max_tokens = input_limit(self.tokenizer, self.model.config)
        self.id2label = dict(self.model.config.id2label)

    def probabilities(self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Softmax class probabilities, shape (n_pairs, n_labels), for length-sorted padded batches."""
        import torch

        n_labels = len(self.id2label)
        if not premises:
            return np.zeros((0, n_labels))
        enc = self.tokenizer(
            list(premises), list(hypotheses), truncation="longest_first", max_length=self.max_tokens, verbose=False
        )
        features = [{key: enc[key][i] for key in enc} for i in range(len(premises))]
        order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
        out = np.zeros((len(features), n_labels))
        with torch.inference_mode():
            for chunk in batches(order, batch_size):
                batch = self.tokenizer.pad([features[i] for i in chunk], return_tensors="pt")
                logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits.float()
                out[chunk] = torch.softmax(logits, dim=-1).double().cpu().numpy()
        return out


_cache_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cached(model: str, device: str | None, dtype: str | None) -> NLIClassifier:
    return NLIClassifier(model, device=device, dtype=dtype)


def load_nli(model: str, device: str | None = None, dtype: str | None = "auto") -> NLIClassifier:
    """An :class:`NLIClassifier` shared by the scorers of the process that ask for the same model."""
    with _cache_lock:
        return _cached(str(model), device, dtype)


class _EntailmentScorer(Scorer):
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True
    default_model: ClassVar[str]

    def __init__(
        self,
        model: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        dtype: str | None = "auto",
        entailment_label: int | str | None = None,
        contradiction_label: int | str | None = None,
        **extra: Any,
    ):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        model = str(model or self.default_model)
        config: dict[str, Any] = {"model": model, "dtype": dtype, **extra}
        if entailment_label is not None:
            config["entailment_label"] = entailment_label
        if contradiction_label is not None:
            config["contradiction_label"] = contradiction_label
        super().__init__(**config)
        self.model_name, self.device, self.batch_size, self.dtype = model, device, int(batch_size), dtype
        self.entailment_label, self.contradiction_label = entailment_label, contradiction_label
        self._nli: NLIClassifier | None = None

    @property
    def output_names(self) -> tuple[str, ...]:
        return (self.name,)

    def load(self) -> NLIClassifier:
        """Load (once) the classifier; checks that the needed labels can be found."""
        if self._nli is None:
            nli = load_nli(self.model_name, self.device, self.dtype)
            self._label_indices(nli)
            self._nli = nli
        return self._nli

    def _label_indices(self, nli: NLIClassifier) -> tuple[int, int | None]:
        ent = find_label(nli.id2label, ENTAILMENT_NAMES, self.entailment_label, "entailment")
        return ent, None

    def _sentences(self, texts: Sequence[str]) -> list[list[str]]:
        from metrics_service.text import split_sentences_many

        unique = list(dict.fromkeys(texts))
        split = dict(zip(unique, split_sentences_many(unique)))
        return [split[t] for t in texts]


class SummaCZS(_EntailmentScorer):
    """SummaC zero-shot: mean over summary sentences of the max over document sentences of the NLI score.

    Args:
        model: local NLI model directory (or a cached hub name); default ``tals/albert-xlarge-vitaminc-mnli``.
        use_contradiction: score ``P(entailment) - P(contradiction)`` (SummaC-ZS) instead of ``P(entailment)``
            (the default here, so scores stay in [0, 1]).
        entailment_label / contradiction_label: class index or name when ``config.id2label`` is not telling.
        device, batch_size, dtype: execution settings (device and batch_size not in :meth:`config_key`).
    """

    name: ClassVar[str] = "summac_zs"
    default_model: ClassVar[str] = DEFAULT_SUMMAC_MODEL

    def __init__(self, model: str | None = None, use_contradiction: bool = False, **kwargs: Any):
        super().__init__(model=model, use_contradiction=bool(use_contradiction), **kwargs)
        self.use_contradiction = bool(use_contradiction)

    def _label_indices(self, nli: NLIClassifier) -> tuple[int, int | None]:
        ent = find_label(nli.id2label, ENTAILMENT_NAMES, self.entailment_label, "entailment")
        con = None
        if self.use_contradiction:
            con = find_label(nli.id2label, CONTRADICTION_NAMES, self.contradiction_label, "contradiction")
        return ent, con

    def sentence_matrix(self, document: str, summary: str) -> np.ndarray:
        """NLI scores, shape (document sentences, summary sentences), before the max and the mean."""
        return self._matrices([document], [summary])[0]

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        scores = [float(m.max(axis=0).mean()) if m.size else 0.0 for m in self._matrices(documents, summaries)]
        return {self.name: scores}

    def _matrices(self, documents: Sequence[str], summaries: Sequence[str]) -> list[np.ndarray]:
        nli = self.load()
        ent, con = self._label_indices(nli)
        doc_sents, sum_sents = self._sentences(documents), self._sentences(summaries)
        premises, hypotheses, shapes = [], [], []
        for ds, ss in zip(doc_sents, sum_sents):
            shapes.append((len(ds), len(ss)))
            for d in ds:
                for s in ss:
                    premises.append(d)
                    hypotheses.append(s)
        probs = nli.probabilities(premises, hypotheses, self.batch_size)
        values = probs[:, ent] - (probs[:, con] if con is not None else 0.0)
        out, k = [], 0
        for n_doc, n_sum in shapes:
            out.append(values[k : k + n_doc * n_sum].reshape(n_doc, n_sum))
            k += n_doc * n_sum
        return out


class FactCC(_EntailmentScorer):
    """FactCC-style consistency: ``P(consistent | document, summary sentence)`` averaged over summary sentences.

    Args:
        model: local directory of a FactCC-like classifier (or any NLI model); default ``manueldeprada/FactCC``.
        entailment_label: index or name of the "consistent" class when ``config.id2label`` does not say
            (names recognised: CORRECT, consistent, entailment, supports...).
        device, batch_size, dtype: execution settings.
    """

    name: ClassVar[str] = "factcc"
    default_model: ClassVar[str] = DEFAULT_FACTCC_MODEL

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        nli = self.load()
        ent, _ = self._label_indices(nli)
        sum_sents = self._sentences(summaries)
        premises, hypotheses = [], []
        for doc, sents in zip(documents, sum_sents):
            for s in sents:
                premises.append(doc)
                hypotheses.append(s)
        probs = nli.probabilities(premises, hypotheses, self.batch_size)[:, ent] if premises else np.zeros(0)
        scores, k = [], 0
        for doc, sents in zip(documents, sum_sents):
            n = len(sents)
            scores.append(float(probs[k : k + n].mean()) if n and doc.strip() else 0.0)
            k += n
        return {self.name: scores}
