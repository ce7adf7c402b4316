"""Shared spaCy helpers of the scorers: the full pipeline of the one loader of both apps
(:mod:`annotate.spacy_pipeline`, setting ``FACTLAB_SPACY_MODEL``), loaded on first use.

spaCy (through thinc) imports torch, so it is imported only when a pipeline is loaded; the light scorers
(ROUGE, BLEU, METEOR) never call it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from annotate import spacy_pipeline
from annotate.spacy_pipeline import PipelineMissing, load_pipeline
from metrics_service.errors import ScorerError

if TYPE_CHECKING:  # pragma: no cover
    from spacy.language import Language
    from spacy.tokens import Doc


def scoring_pipeline() -> Language:
    """The full pipeline (every component on), as the scorers parse; a missing model is a :class:`ScorerError`."""
    try:
        return load_pipeline()
    except PipelineMissing as exc:
        raise ScorerError(str(exc)) from exc


def parse(text: str) -> Doc:
    """Tokenize, tag and parse ``text`` with the shared pipeline."""
    return scoring_pipeline()(text)


def parse_many(texts: list[str], batch_size: int = 32) -> list[Doc]:
    """:func:`parse` for many texts through ``nlp.pipe`` (faster than one call per text)."""
    return list(scoring_pipeline().pipe(texts, batch_size=batch_size))


def split_sentences(text: str) -> list[str]:
    """The non-empty sentences of ``text`` (spaCy's dependency-parse sentence boundaries)."""
    return split_sentences_many([text])[0]


def split_sentences_many(texts: list[str], batch_size: int = 64) -> list[list[str]]:
    """The sentences of many texts by the one split of both apps (:func:`annotate.spacy_pipeline.split_sentences_many`:
    the parser without the components a split does not need); a missing model is a :class:`ScorerError`."""
    try:
        return list(spacy_pipeline.split_sentences_many(texts, batch_size))
    except PipelineMissing as exc:
        raise ScorerError(str(exc)) from exc
