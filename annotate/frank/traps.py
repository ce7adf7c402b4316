"""Trap (control) sentences for documents that come without FRANK's: generated with spaCy.

Each trap has a known label (``annotate.frank.typology.TRAP_LABELS``): a copy of an article sentence (F0,
factual), its negation (F1, RelE), a sentence of another article (F4, OutE), a word-scrambled
sentence (F5, GramE) and a pronoun swap (F6, CorefE). Generation is deterministic per document.
"""
from __future__ import annotations

import random
import re

from django.db import transaction

from annotate.frank.typology import TRAP_LABELS
from annotate.models import Document, Trap
from annotate.nlp import get_nlp, split_sentences

MIN_WORDS, MAX_WORDS = 6, 40
PRONOUN_SWAPS = {"he": "she", "she": "he", "him": "her", "his": "her", "her": "his", "himself": "herself", "herself": "himself"}
_DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def _candidates(sentences: list[str]) -> list[str]:
    """Article sentences of a reasonable length (short headlines and very long sentences make poor traps)."""
    good = [s for s in sentences if MIN_WORDS <= len(s.split()) <= MAX_WORDS]
    return good or [s for s in sentences if len(s.split()) >= 3]


def negate(sentence: str) -> str | None:
    """The sentence with its main verb negated ("was" -> "was not", "scored" -> "did not score"), or None."""
    doc = get_nlp(disable=("ner",))(sentence)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX") or any(c.dep_ == "neg" for c in root.children):
        return None
    aux = next((c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i), None)
    if aux is not None:
        pivot = aux
    elif root.lemma_ == "be" or root.pos_ == "AUX":
        pivot = root
    else:
        pivot = None
    if pivot is not None:
        return doc[: pivot.i + 1].text_with_ws.rstrip() + " not " + doc[pivot.i + 1 :].text_with_ws.lstrip()
    if root.tag_ not in _DO_FORMS:
        return None
    return doc[: root.i].text_with_ws + f"{_DO_FORMS[root.tag_]} not {root.lemma_}" + root.whitespace_ + doc[root.i + 1 :].text_with_ws


def swap_pronouns(sentence: str) -> str | None:
    """The sentence with its gendered pronouns swapped (he <-> she, his <-> her...), or None when it has none."""
    changed = False

    def repl(match: re.Match) -> str:
        nonlocal changed
        word = match.group(0)
        swapped = PRONOUN_SWAPS[word.lower()]
        changed = True
        return swapped.capitalize() if word[0].isupper() else swapped

    result = re.sub(r"\b(" + "|".join(PRONOUN_SWAPS) + r")\b", repl, sentence, flags=re.IGNORECASE)
    return result if changed else None


def scramble(sentence: str, rng: random.Random) -> str:
    """The sentence's words in a random order that differs from the original (ungrammatical)."""
    words = sentence.rstrip(".!?").split()
    for _ in range(10):
        shuffled = words[:]
        rng.shuffle(shuffled)
        if shuffled != words:
            break
    text = " ".join(shuffled)
    return text[:1].upper() + text[1:].lower() + "."


COPY_TRAPS_FLAG = "copy_traps_added"


def add_copy_traps(document: Document, summary_sentences: list[str]) -> list[Trap]:
    """Add, once per document, factual copy traps (F0) of the article sentences closest to its summaries
    (:func:`annotate.frank.page.summary_like_sentences`); returns the traps created now."""
    from annotate.frank.page import summary_like_sentences

    if (document.metadata or {}).get(COPY_TRAPS_FLAG):
        return []
    existing = set(document.traps.values_list("text", flat=True))
    sentences = document.sentences or split_sentences(document.text)
    label = TRAP_LABELS["F0"]
    with transaction.atomic():
        made = [
            Trap.objects.create(document=document, code="F0", text=text, expected_factual=label[0], expected_category=label[1] or "")
            for text in summary_like_sentences(sentences, summary_sentences) if text not in existing
        ]
        metadata = {**(document.metadata or {}), COPY_TRAPS_FLAG: True}
        Document.objects.filter(pk=document.pk).update(metadata=metadata)
        document.metadata = metadata
    return made


def generate_traps(document: Document, *, seed: int | None = None) -> list[Trap]:
    """Create and return one trap of each kind that can be made from ``document`` (none if it has traps).

    F4 needs another document in the same campaign; F1/F6 need a sentence that can be negated/has a
    gendered pronoun. Nothing is created for a kind that cannot be made.
    """
    existing = list(document.traps.all())
    if existing:
        return existing
    rng = random.Random(seed if seed is not None else document.pk)
    sentences = document.sentences or split_sentences(document.text)
    pool = _candidates(sentences)
    if not pool:
        return []
    shuffled = pool[:]
    rng.shuffle(shuffled)
    made: dict[str, str] = {"F0": shuffled[0], "F5": scramble(shuffled[-1], rng)}
    negated = next((n for n in (negate(s) for s in shuffled[:8]) if n), None)
    if negated:
        made["F1"] = negated
    swapped = next((s2 for s2 in (swap_pronouns(s) for s in shuffled) if s2), None)
    if swapped:
        made["F6"] = swapped
    other = Document.objects.filter(campaign_id=document.campaign_id).exclude(pk=document.pk).order_by("?").first()
    if other is not None:
        other_pool = [s for s in _candidates(other.sentences or split_sentences(other.text)) if s not in document.text]
        if other_pool:
            made["F4"] = rng.choice(other_pool)
    with transaction.atomic():
        return [
            Trap.objects.create(
                document=document, code=code, text=text,
                expected_factual=TRAP_LABELS[code][0], expected_category=TRAP_LABELS[code][1] or "",
            )
            for code, text in sorted(made.items())
        ]
