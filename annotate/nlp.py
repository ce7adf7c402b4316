"""spaCy access for the annotation domain: sentence splits, entities and the pipelines traps use.

Pipelines come from the one loader of both apps (:mod:`annotate.spacy_pipeline`, setting
``FACTLAB_SPACY_MODEL``), loaded once per process.
"""
from __future__ import annotations

import functools
import hashlib

from django.core.cache import cache

from annotate.spacy_pipeline import SPLIT_DISABLED, load_pipeline, model_name, split_sentences_many

__all__ = ["SPLIT_DISABLED", "count_sentences_by_punctuation", "get_nlp", "load_pipelines", "named_entities",
           "split_sentences", "split_sentences_many"]


def get_nlp(disable: tuple[str, ...] = ("ner", "lemmatizer")):
    """The annotation domain's pipeline with ``disable`` switched off (:func:`annotate.spacy_pipeline.load_pipeline`)."""
    return load_pipeline(disable)


def split_sentences(text: str) -> list[str]:
    """Sentence split with spaCy's dependency parser; whitespace-only sentences are dropped."""
    return next(split_sentences_many([text]))


# Entities (entity questions and pools) need the NER; negated traps need the tagger and parser.
ENTITIES_DISABLED = ("lemmatizer",)
TRAPS_DISABLED = ("ner",)


def load_pipelines() -> None:
    """Load every pipeline this module hands out, before the process serves anything.

    Loading spaCy takes seconds (torch's import included) and a request that pays it can pass the server's
    timeout: gunicorn's master (gunicorn.conf.py) and each Celery worker (factlab/celery.py) call this at
    start, so claims, submits and jobs find the pipelines cached. Keyword arguments as every caller passes
    them: the cache keys on how ``get_nlp`` is called.
    """
    for disabled in (SPLIT_DISABLED, ENTITIES_DISABLED, TRAPS_DISABLED):
        get_nlp(disable=disabled)
    _sentencizer()


@functools.cache
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def count_sentences_by_punctuation(text: str) -> int:
    """Number of sentences by spaCy's rule-based sentencizer (sentence-final punctuation).

    Used to check that an edit adds or removes no sentence: the parser-based split can move a boundary
    when one word changes, while this count changes only when sentence punctuation does.
    """
    return sum(1 for sent in _sentencizer()(text).sents if sent.text.strip())


def named_entities(text: str) -> list[str]:
    """Distinct named-entity strings of ``text`` in order of appearance (for entity questions).

    Cached by a hash of the text (Django's cache, shared by the web workers): the entity question of a
    document is built at every claim of its item, the NER parse only once.
    """
    key = f"nlp:entities:{model_name()}:{hashlib.sha1(text.encode()).hexdigest()}"
    found = cache.get(key)
    if found is None:
        found = _named_entities(text)
        cache.set(key, found, 7 * 24 * 3600)
    return found


def _named_entities(text: str) -> list[str]:
    nlp = get_nlp(disable=ENTITIES_DISABLED)
    seen: dict[str, None] = {}
    for ent in nlp(text).ents:
        if ent.label_ not in {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY"}:
            seen.setdefault(ent.text.strip(), None)
    return list(seen)
