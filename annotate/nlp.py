"""spaCy access for the annotation domain: sentence splits, entities and the pipelines traps use.

Pipelines come from the one loader of both apps (:mod:`annotate.spacy_pipeline`, setting
``FACTLAB_SPACY_MODEL``), loaded once per process.
"""
from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence

from django.core.cache import cache

from annotate.spacy_pipeline import SPLIT_DISABLED, import_spacy, load_pipeline, model_name, split_sentences_many

__all__ = ["SPLIT_DISABLED", "article_entities_many", "count_sentences_by_punctuation", "entity_spans", "get_nlp", "load_pipelines",
           "named_entities", "sentence_entities", "split_sentences", "split_sentences_many"]


def get_nlp(disable: tuple[str, ...] = ("ner", "lemmatizer")):
    """The annotation domain's pipeline with ``disable`` switched off (:func:`annotate.spacy_pipeline.load_pipeline`)."""
    return load_pipeline(disable)


def split_sentences(text: str) -> list[str]:
    """Sentence split with spaCy's dependency parser; whitespace-only sentences are dropped."""
    return next(split_sentences_many([text]))


# Entities (entity questions and pools) need the NER, and the parser: an entity never crosses the sentence
# boundaries it sets (without them 26 of FRANK's 501 articles get entities such as "Washington D.C. Pictured").
# The tagger and attribute ruler change no entity (checked on every FRANK article and summary) and cost a fifth
# of the parse. Negated traps need the tagger and parser.
ENTITIES_DISABLED = ("lemmatizer", "tagger", "attribute_ruler")
TRAPS_DISABLED = ("ner",)


#: An entity as ``(start, end, kind, text)``: character offsets in the text parsed, spaCy's label, its words.
Span = tuple[int, int, str, str]
# The latest articles' entities in this process: preparing a batch of pages parses each article once for its
# entity pool, and its traps' entity swaps read the same parse (``ARTICLES_KEPT`` covers a batch of pages).
ARTICLES_KEPT = 256


def entity_spans(parsed) -> list[Span]:
    """The entities of a spaCy ``Doc`` as :data:`Span` tuples (plain data: kept, cached and compared as such)."""
    return [(e.start_char, e.end_char, e.label_, e.text) for e in parsed.ents]


_article_entities: OrderedDict[str, list[Span]] = OrderedDict()
_article_entities_lock = threading.Lock()  # a web process's threads share it


def _kept_article_entities(text: str) -> list[Span] | None:
    with _article_entities_lock:
        found = _article_entities.get(text)
        if found is not None:
            _article_entities.move_to_end(text)
        return found


def _keep_article_entities(text: str, spans: list[Span]) -> None:
    with _article_entities_lock:
        _article_entities[text] = spans
        while len(_article_entities) > ARTICLES_KEPT:
            _article_entities.popitem(last=False)


def article_entities_many(texts: Iterable[str], batch_size: int = 16) -> Iterator[list[Span]]:
    """The named entities of each article text (one NER parse of the whole text, in ``nlp.pipe`` batches, each
    yielded as soon as its batch is parsed), kept for the latest ``ARTICLES_KEPT`` articles so that a second use
    of the same text parses nothing."""
    texts = list(texts)
    nlp = get_nlp(disable=ENTITIES_DISABLED)
    missing = [t for t in dict.fromkeys(texts) if t not in _article_entities]
    # Parsed lazily, in the order the loop first meets them; a parse another thread kept meanwhile is skipped.
    pending = iter(zip(missing, nlp.pipe(missing, batch_size=batch_size)))
    unparsed, pulled = set(missing), {}
    for text in texts:
        found = _kept_article_entities(text)
        if found is not None:
            yield found
            continue
        if text in unparsed:
            unparsed.discard(text)
            while text not in pulled:
                parsed_text, parsed = next(pending)
                pulled[parsed_text] = parsed
            doc = pulled.pop(text)
        else:  # kept when the call began, and let go since by a longer list than ARTICLES_KEPT
            doc = nlp(text)
        found = entity_spans(doc)
        _keep_article_entities(text, found)
        yield found


def sentence_entities(sentences: Sequence[str], text: str) -> list[list[Span]] | None:
    """Each sentence's entities, offsets within the sentence, from the parse of the whole article ``text``
    (:func:`article_entities_many`: the context of the whole article, and no second parse); None when the
    sentences are not the text's, in order (then each sentence is parsed alone)."""
    starts, position = [], 0
    for sentence in sentences:
        found = text.find(sentence, position)
        if found < 0:
            return None
        starts.append(found)
        position = found + len(sentence)
    spans = next(article_entities_many([text]))
    return [
        [(begin - start, end - start, kind, words) for begin, end, kind, words in spans if start <= begin and end <= start + len(sentence)]
        for start, sentence in zip(starts, sentences)
    ]


def load_pipelines() -> None:
    """Load every pipeline this module hands out, before the process serves anything.

    Loading spaCy takes seconds and a request that pays it can pass the server's
    timeout: gunicorn's master (gunicorn.conf.py) and each Celery worker (factlab/celery.py) call this at
    start, so claims, submits and jobs find the pipelines cached. Keyword arguments as every caller passes
    them: the cache keys on how ``get_nlp`` is called.
    """
    for disabled in (SPLIT_DISABLED, ENTITIES_DISABLED, TRAPS_DISABLED):
        get_nlp(disable=disabled)
    _sentencizer()


@functools.cache
def _sentencizer():
    spacy = import_spacy()

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
