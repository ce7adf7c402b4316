"""The FRANK entity question: "Which of the following was NOT mentioned in the article?".

Two named entities of the article and one of the same spaCy kind that it does not mention (taken from
other articles of the campaign or the imported negative entity), options random per worker. What needs
spaCy (the article's entities, the pool of absent ones) is computed once per document and kept in its
``metadata``; :func:`prepare_entity_pools` does it for many documents in one ``nlp.pipe`` pass.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.core.cache import cache

from annotate import presentation
from annotate.code_versions import code_version
from annotate.models import Document
from annotate.nlp import Span, article_entities_many, entity_spans, named_entities
from annotate.spacy_pipeline import model_name

_OPTION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .&'-]*[A-Za-z0-9.]$")


def _clear_options(entities: list[str]) -> list[str]:
    """Entities a careful reader can judge: short names or phrases without quotes or broken punctuation.

    A wrong answer blocks the worker, so garbled noun-phrase chunks from the entity counter are left out;
    capitalised ones (names) come first.
    """
    clear = [
        e for e in entities
        if 2 < len(e) <= 40 and len(e.split()) <= 4 and _OPTION_RE.match(e) and e.count("'") <= 1 and "''" not in e
    ]
    return sorted(clear, key=lambda e: not e[:1].isupper())


# Named-entity kinds a reader can tell were or were not mentioned (not numbers, dates or quantities, nor
# nationalities and groups: "British" is an adjective a reader does not recall as a mention).
ENTITY_KINDS = ("PERSON", "ORG", "GPE", "LOC", "FAC", "EVENT", "PRODUCT", "WORK_OF_ART", "LAW")

_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
# Small words inside a name ("University of Sheffield", "Marks & Spencer").
_NAME_JOINERS = frozenset({"of", "the", "and", "&", "de", "du", "da", "del", "der", "la", "le", "van", "von", "for", "on", "upon"})
#: Letters a one-word option needs: shorter ones are abbreviations a reader cannot place ("Det", "VAT").
MIN_ONE_WORD_LETTERS = 4


def recognisable(option: str, article: str) -> str | None:
    """``option`` as a reader recognises a name, or None: without the article spaCy takes into the entity
    ("the Sunday Times" -> "Sunday Times"); every word capitalised, a number or a joiner ("of"); one word only
    when it is no abbreviation (``MIN_ONE_WORD_LETTERS``), no function word, and not a word ``article`` (its
    text) writes in lower case ("Exercise", "Family": common words, not names)."""
    from annotate.presentation import function_words

    name = _LEADING_ARTICLE.sub("", option.strip())
    words = name.split()
    if not words or not (words[0][:1].isupper() or words[0].isdigit()):
        return None
    if not all(w[:1].isupper() or w.isdigit() or w in _NAME_JOINERS for w in words):
        return None
    if not any(w[:1].isupper() and any(ch.islower() for ch in w) or len(w) >= MIN_ONE_WORD_LETTERS and w.isupper() for w in words):
        return None  # numbers and joiners only, or short capitals only ("UK US")
    if len(words) == 1:
        if sum(ch.isalpha() for ch in name) < MIN_ONE_WORD_LETTERS or name.lower() in function_words():
            return None
        if name.lower() in _lower_case_words(article):
            return None
    return name


@lru_cache(maxsize=64)
def _lower_case_words(article: str) -> frozenset[str]:
    """The words ``article`` writes in lower case (asked once per option: kept for the few articles at hand)."""
    return frozenset(re.findall(r"(?<![\w-])[a-z][a-z'-]*(?![\w-])", article))


# Kinds whose one-word names are names a reader places ("Locke", "Tokyo"); one-word organisations, works and
# events are mostly common words in capitals ("Family", "Parliament", "Frozen") that only their own article
# shows in lower case, and an absent option comes from another article.
ONE_WORD_KINDS = ("PERSON", "GPE", "LOC")


def _fits_kind(name: str, kind: str) -> bool:
    return kind in ONE_WORD_KINDS or " " in name


def _recognisable_names(names: Iterable[str], article: str) -> list[str]:
    return list(dict.fromkeys(r for r in (recognisable(n, article) for n in names) if r))
ENTITY_POOL_KEY = "entity_pool"
ENTITY_POOL_OTHERS = 40  # other documents of the campaign sampled for absent entities


def _typed_from_spans(spans: Iterable[Span]) -> dict[str, list[str]]:
    found: dict[str, dict[str, None]] = {}
    for _, _, kind, words in spans:
        if kind in ENTITY_KINDS:
            found.setdefault(kind, {})[words.strip()] = None
    return {kind: names for kind, names in ((k, _clear_options(list(v))) for k, v in found.items()) if names}


def typed_entities(text: str) -> dict[str, list[str]]:
    """Clear named entities of ``text`` by spaCy NER kind: ``{"PERSON": ["Helen Carter", ...], ...}``."""
    return next(typed_entities_many([text]))


def typed_entities_many(texts: Iterable[str], batch_size: int = 16) -> Iterable[dict[str, list[str]]]:
    """:func:`typed_entities` of many texts in ``nlp.pipe`` batches (one parse per text)."""
    from annotate.nlp import ENTITIES_DISABLED, get_nlp

    for parsed in get_nlp(disable=ENTITIES_DISABLED).pipe(texts, batch_size=batch_size):
        yield _typed_from_spans(entity_spans(parsed))


def article_typed_entities_many(texts: Iterable[str], batch_size: int = 16) -> Iterable[dict[str, list[str]]]:
    """:func:`typed_entities_many` of articles, whose parse the traps' entity swaps then read without parsing
    again (:func:`annotate.nlp.article_entities_many`)."""
    for spans in article_entities_many(texts, batch_size=batch_size):
        yield _typed_from_spans(spans)


#: The entity rules (this file): a change to them makes every cached article's entities stale.
_ENTITY_RULES = code_version(Path(__file__))


def _present_entities(document: Document) -> dict[str, list[str]]:
    """The article's own named entities by kind: stored with its pool once it has one, else from the cache.

    A pool computed alone (:func:`entity_pool`, a claim of a page not prepared yet) reads the entities of up to
    ``ENTITY_POOL_OTHERS`` other articles; kept in the cache shared by the web workers, each article is parsed
    once per campaign rather than once per claim that samples it (seconds of spaCy per article otherwise)."""
    stored = (document.metadata or {}).get(ENTITY_POOL_KEY, {}).get("present")
    if stored is not None:
        return stored
    key = f"frank:article-entities:{model_name()}:{_ENTITY_RULES}:{hashlib.sha1(document.text.encode()).hexdigest()}"
    found = cache.get(key)
    if found is None:
        found = next(article_typed_entities_many([document.text]))
        cache.set(key, found, 7 * 24 * 3600)
    return found


def _pool(
    document: Document, present: dict[str, list[str]], others_present: Iterable[dict[str, list[str]]],
    negative_kinds: dict[str, list[str]],
) -> dict[str, dict[str, list[str]]]:
    """The pool of ``document`` from its entities, those of (up to ``ENTITY_POOL_OTHERS``) other articles and
    the kinds spaCy gives its negative entity."""
    text = document.text.lower()
    # A one-word name the campaign's articles mostly write in lower case is a common word spaCy took for a
    # name ("Remain", "Media"): the reader of another article could not tell it was not mentioned.
    common = campaign_common_words(document.campaign_id)
    absent: dict[str, dict[str, None]] = {}
    for other in others_present:
        for kind, names in other.items():
            for name in names:
                if name.lower() not in text and not (" " not in name.strip() and _LEADING_ARTICLE.sub("", name).lower() in common):
                    absent.setdefault(kind, {})[name] = None
    negative = document.negative_entity.strip()
    if negative and negative.lower() not in text:
        for kind, names in negative_kinds.items():
            if negative in names:
                absent.setdefault(kind, {})[negative] = None
    return {"present": present, "absent": {k: sorted(v) for k, v in absent.items()}}


#: The casing model's rules: a change to them makes every cached model stale.
_CASING_RULES = code_version(presentation)
#: Articles of a campaign read for its casing model: enough to know which words are common.
CASING_MODEL_ARTICLES = 1000


def campaign_common_words(campaign_id: int) -> frozenset[str]:
    """The words the campaign's articles write in lower case more often than capitalised
    (:func:`annotate.presentation.common_words` of up to ``CASING_MODEL_ARTICLES`` of them, in import order):
    what truecasing knows beyond one article. Kept in the cache while the campaign's documents and the
    presentation rules stay the same."""
    documents = Document.objects.filter(campaign_id=campaign_id)
    key = f"frank:common-words:{campaign_id}:{documents.count()}:{_CASING_RULES}"
    found = cache.get(key)
    if found is None:
        texts = documents.order_by("id").values_list("text", flat=True)[:CASING_MODEL_ARTICLES]
        found = sorted(presentation.common_words(texts.iterator(chunk_size=200)))
        cache.set(key, found, 7 * 24 * 3600)
    return frozenset(found)


def entity_pool(document: Document) -> dict[str, dict[str, list[str]]]:
    """The entity question's candidates, computed once per document and kept in ``document.metadata``:
    ``{"present": {kind: [names in the article]}, "absent": {kind: [names of that kind not in it]}}``.

    Absent names come from other articles of the campaign (and the imported negative entity), by kind, so
    the absent option has the same kind as a present one. Campaigns prepared after import
    (:func:`prepare_entity_pools`) have every pool already; this computes a missing one alone.
    """
    cached = (document.metadata or {}).get(ENTITY_POOL_KEY)
    if cached and "absent" in cached:
        return cached
    # Drawn with the document's id as the seed: every process that computes this pool (a claim in any web worker,
    # a pool recomputed after its page went stale) offers the same absent names, so the reading-check options a
    # worker was shown can be computed again from the data.
    candidates = list(Document.objects.filter(campaign_id=document.campaign_id).exclude(pk=document.pk).order_by("pk").values_list("pk", flat=True))
    chosen = random.Random(document.pk).sample(candidates, min(ENTITY_POOL_OTHERS, len(candidates)))
    others = Document.objects.filter(pk__in=chosen).order_by("pk")
    negative = document.negative_entity.strip()
    pool = _pool(
        document, _present_entities(document), (_present_entities(other) for other in others),
        typed_entities(negative) if negative else {},
    )
    metadata = {**(document.metadata or {}), ENTITY_POOL_KEY: pool}
    Document.objects.filter(pk=document.pk).update(metadata=metadata)
    document.metadata = metadata
    return pool


def prepare_entity_pools(documents: Sequence[Document], *, seed: int = 0, checkpoint: Callable[[], None] | None = None) -> int:
    """Compute and store the pools of ``documents`` (all of one campaign) that have none; returns how many.

    spaCy runs once per article without stored entities, in ``nlp.pipe`` batches; the absent names of a
    document come from ``ENTITY_POOL_OTHERS`` other documents of the list chosen with ``seed``, as
    :func:`entity_pool` does for one document. ``checkpoint`` is called after each parsed article (it raises
    to stop; nothing is stored then).
    """
    missing_present = [d for d in documents if (d.metadata or {}).get(ENTITY_POOL_KEY, {}).get("present") is None]
    recomputed = {d.pk for d in missing_present}
    # Small spaCy batches: a checkpoint comes every second or so (a batch of 16 news articles parses for
    # seconds), at no loss of speed (measured: 8.4 s for 20 articles in batches of 2, 8.3 s in batches of 16).
    parsed = article_typed_entities_many((d.text for d in missing_present), batch_size=2 if checkpoint else 16)
    for document, present in zip(missing_present, parsed):
        if checkpoint:
            checkpoint()
        document.metadata = {**(document.metadata or {}), ENTITY_POOL_KEY: {"present": present}}
    negatives = sorted({d.negative_entity.strip() for d in documents if d.negative_entity.strip()})
    negative_kinds = dict(zip(negatives, typed_entities_many(negatives, batch_size=256)))
    present_of = [d.metadata[ENTITY_POOL_KEY]["present"] for d in documents]
    rng = random.Random(seed)
    changed = []
    for index, document in enumerate(documents):
        if "absent" in document.metadata[ENTITY_POOL_KEY] and document.pk not in recomputed:
            continue
        others = [i for i in range(len(documents)) if i != index]
        chosen = rng.sample(others, min(ENTITY_POOL_OTHERS, len(others)))
        pool = _pool(document, present_of[index], (present_of[i] for i in chosen), negative_kinds.get(document.negative_entity.strip(), {}))
        document.metadata = {**document.metadata, ENTITY_POOL_KEY: pool}
        changed.append(document)
    Document.objects.bulk_update(changed, ["metadata"], batch_size=200)
    return len(changed)


def usable_pool(text: str, pool: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    """The names of an entity pool (:func:`entity_pool`) a reader can be asked about, by kind: present ones as
    ``text`` (the article) writes them, case and all, absent ones nowhere in it (pools stored before these
    rules are filtered the same way). Kept in the document's prepared page, so a claim does no filtering."""
    lower_text = text.lower()
    present = {k: [n for n in _recognisable_names(names, text) if n in text and _fits_kind(n, k)]
               for k, names in pool["present"].items() if k in ENTITY_KINDS}
    absent = {k: [n for n in _recognisable_names(names, text) if n.lower() not in lower_text and _fits_kind(n, k)]
              for k, names in pool["absent"].items() if k in ENTITY_KINDS}
    return {"present": {k: names for k, names in present.items() if names}, "absent": absent}


def _typed_entity_question(document: Document, rng: random.Random, usable: dict | None = None) -> dict[str, Any] | None:
    """Two entities of the article and one absent entity of the same kind as one of them (random per
    worker among what the article allows); None when the article has no such pair. ``usable``: the
    document's :func:`usable_pool` when the caller has it."""
    if usable is None:
        usable = usable_pool(document.text, entity_pool(document))
    present, absent = usable["present"], usable["absent"]
    kinds = sorted(k for k in present if absent.get(k))
    if not kinds:
        return None
    kind = rng.choice(kinds)
    negative = rng.choice(absent[kind])
    same = present[kind]
    if len(same) >= 2:
        chosen = rng.sample(same, 2)
    else:
        others = [name for k, names in sorted(present.items()) if k != kind for name in names if name.lower() != same[0].lower()]
        if not others:
            return None
        chosen = [same[0], rng.choice(others)]
    options = chosen + [negative]
    if len({o.lower() for o in options}) < 3:
        return None
    rng.shuffle(options)
    return {"options": options, "answer": options.index(negative)}


def entity_question(document: Document, rng: random.Random, usable: dict | None = None) -> dict[str, Any] | None:
    """Three options, two entities from the article and one that is not in it; None when impossible.

    Named entities of the same kinds first (:func:`_typed_entity_question`); articles without a usable
    pair fall back to the imported entity list and negative entity.
    """
    typed = _typed_entity_question(document, rng, usable)
    if typed is not None:
        return typed
    text = document.text.lower()
    candidates = [e.strip() for e in dict.fromkeys(document.entities or []) if isinstance(e, str)]
    present = [e for e in _recognisable_names(_clear_options(candidates), document.text) if e in document.text]
    if len(present) < 2:
        present = [e for e in _recognisable_names(_clear_options(named_entities(document.text)), document.text) if e in document.text]
    negative = recognisable(document.negative_entity, document.text) or ""
    if not negative or negative.lower() in text:
        others = Document.objects.filter(campaign_id=document.campaign_id).exclude(pk=document.pk).values_list("entities", flat=True)
        pool = sorted(set(_recognisable_names(_clear_options(
            [e.strip() for ents in others for e in (ents or []) if isinstance(e, str)]), document.text)) - {""})
        pool = [e for e in pool if e.lower() not in text]
        negative = rng.choice(pool) if pool else ""
    if len(present) < 2 or not negative:
        return None
    # Prefer names (capitalised) when there are enough of them.
    names = [e for e in present if e[:1].isupper()]
    options = rng.sample(names if len(names) >= 2 else present, 2) + [negative]
    rng.shuffle(options)
    return {"options": options, "answer": options.index(negative)}


