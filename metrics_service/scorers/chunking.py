"""Document chunking and claim-sentence aggregation shared by the chunk-level detectors (MiniCheck, AlignScore).

Both detectors score a claim against pieces of the document that fit the model's input, keep for each
claim sentence the best-supporting piece (max over chunks), and then aggregate the sentences of the
summary. Plain Python, no torch.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

AGGREGATES = ("min", "mean")


def pack_chunks(sentences: Sequence[str], max_units: int, length: Callable[[str], int]) -> list[str]:
    """Greedily pack consecutive ``sentences`` into chunks of about ``max_units`` (measured by ``length``).

    A chunk's size is the sum of its sentences' lengths (``length`` is called once per sentence, so a
    tokenizer may be used on long documents). Sentences are never reordered. A sentence longer than
    ``max_units`` on its own is split on whitespace into windows that fit, so no text is dropped. An empty
    document gives no chunk.
    """
    if max_units < 1:
        raise ValueError(f"chunk size must be at least 1, got {max_units}")
    pieces: list[tuple[str, int]] = []
    for sentence in sentences:
        sentence = sentence.strip()
        if not sentence:
            continue
        size = length(sentence)
        if size <= max_units:
            pieces.append((sentence, size))
            continue
        window: list[str] = []
        used = 0
        for word in sentence.split():
            word_size = max(1, length(word))
            if window and used + word_size > max_units:
                pieces.append((" ".join(window), used))
                window, used = [], 0
            window.append(word)
            used += word_size
        if window:
            pieces.append((" ".join(window), used))
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for piece, size in pieces:
        if current and used + size > max_units:
            chunks.append(" ".join(current))
            current, used = [], 0
        current.append(piece)
        used += size
    if current:
        chunks.append(" ".join(current))
    return chunks


def chunk_claim_matrices(
    documents: Sequence[str],
    summaries: Sequence[str],
    split: Callable[[list[str]], list[list[str]]],
    chunker: Callable[[list[str], list[str]], list[str]],
    score_pairs: Callable[[list[str], list[str]], np.ndarray],
) -> list[np.ndarray]:
    """Per (document, summary), the scores of every (document chunk, summary sentence) pair.

    ``split`` turns texts into sentences, ``chunker(document sentences, claim sentences)`` packs the
    document into chunks, and ``score_pairs(chunks, claims)`` scores all pairs of all summaries at once (so
    the model batches across summaries). Shape (chunks, sentences); (0, 0) for an empty document or summary.
    """
    texts = list(dict.fromkeys([*documents, *summaries]))
    sentences = dict(zip(texts, split(texts)))
    premises: list[str] = []
    claims: list[str] = []
    shapes: list[tuple[int, int]] = []
    for document, summary in zip(documents, summaries):
        claim_sents = sentences[summary] if sentences[document] else []
        chunks = chunker(sentences[document], claim_sents) if claim_sents else []
        claim_sents = claim_sents if chunks else []
        shapes.append((len(chunks), len(claim_sents)))
        for chunk in chunks:
            for claim in claim_sents:
                premises.append(chunk)
                claims.append(claim)
    values = np.asarray(score_pairs(premises, claims)) if premises else np.zeros(0)
    out, k = [], 0
    for n_chunks, n_claims in shapes:
        out.append(values[k : k + n_chunks * n_claims].reshape(n_chunks, n_claims))
        k += n_chunks * n_claims
    return out


def check_aggregate(aggregate: str) -> str:
    if aggregate not in AGGREGATES:
        raise ValueError(f"unknown aggregate {aggregate!r}; use one of {', '.join(AGGREGATES)}")
    return aggregate


def aggregate_matrix(matrix: np.ndarray, aggregate: str) -> float:
    """Max over chunks (rows), then ``aggregate`` ("min" or "mean") over claim sentences (columns).

    0.0 for an empty matrix (an empty document or summary: nothing is supported).
    """
    if matrix.size == 0:
        return 0.0
    per_sentence = matrix.max(axis=0)
    return float(per_sentence.min() if aggregate == "min" else per_sentence.mean())
