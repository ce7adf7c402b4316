"""Trap (control) sentences: generated with spaCy for documents that come without FRANK's, and taken from
accepted human BUMP edits of the same article.

Mechanical traps have a known label (``taxonomies.frank.TRAP_LABELS``): a copy of an article sentence
(F0, factual), its negation (F1, RelE), a sentence of another article (F4, OutE), a word-scrambled sentence
(F5, GramE) and a pronoun swap (F6, CorefE). Generation is deterministic per document.

BUMP-edit traps (code ``B``) are the changed sentence of a reviewed minimal edit of the article's reference,
made by a person in a BUMP campaign on the same article (matched by :func:`article_fingerprint`). They count
more in the trap score (``annotate.models.TRAP_SOURCE_WEIGHTS``): a script cannot find them by comparing them
with the page, which is how mechanical traps fall.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Q, QuerySet

from annotate.models import (
    BUMP_EDIT_TRAP_CODE,
    TRAP_SOURCE_WEIGHTS,
    Document,
    ReviewStatus,
    Summary,
    Trap,
    TrapSource,
)
from annotate.nlp import TRAPS_DISABLED, get_nlp, split_sentences
from taxonomies.frank import CATEGORY_OF_BUMP_TYPE, TRAP_LABELS

MIN_WORDS, MAX_WORDS = 6, 40
PRONOUN_SWAPS = {"he": "she", "she": "he", "him": "her", "his": "her", "her": "his", "himself": "herself", "herself": "himself"}
_DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def _candidates(sentences: list[str]) -> list[str]:
    """Article sentences of a reasonable length (short headlines and very long sentences make poor traps)."""
    good = [s for s in sentences if MIN_WORDS <= len(s.split()) <= MAX_WORDS]
    return good or [s for s in sentences if len(s.split()) >= 3]


def negate(sentence: str) -> str | None:
    """The sentence with its main verb negated ("was" -> "was not", "scored" -> "did not score"), or None."""
    doc = get_nlp(disable=TRAPS_DISABLED)(sentence)
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


# Parts of a sentence that can go without making it say anything the full sentence does not: what hangs on
# the main verb before the subject ("On Monday, ...") or after a closing comma ("..., which reduced services").
_DROPPABLE_OPENING = {"prep", "advmod", "npadvmod"}
_DROPPABLE_CLOSING = {"advcl", "prep", "npadvmod", "acl", "relcl", "advmod"}


def restate(sentence: str) -> str | None:
    """A shorter sentence that the given one entails, so a factual trap copied from the article is not one of
    its sentences (a reader spots a verbatim copy): appositives and relative clauses between commas ("Gary
    Locke, 39, will ..."; "..., who ..., said"), an opening adverbial ("On Monday, ...") or a closing clause
    after a comma left out. None when the sentence has none of them or fewer than ``MIN_WORDS`` words would
    be left."""
    from annotate.presentation import present

    doc = get_nlp(disable=TRAPS_DISABLED)(present(sentence))
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None

    def after_comma(token) -> bool:
        return token.left_edge.i > 0 and doc[token.left_edge.i - 1].text == ","

    drop: set[int] = set()
    for token in doc:
        if token.dep_ in ("appos", "relcl") and after_comma(token):
            end = token.right_edge.i
            closing_comma = end + 1 < len(doc) and doc[end + 1].text == ","
            drop.update(range(token.left_edge.i - 1, end + 1 + closing_comma))
    for child in root.children:
        end = child.right_edge.i
        if child.dep_ in _DROPPABLE_OPENING and child.left_edge.i == 0 and end + 1 < root.i and doc[end + 1].text == ",":
            drop.update(range(end + 2))
    if not drop:
        closing = next((c for c in root.children if c.i > root.i and c.dep_ in _DROPPABLE_CLOSING and after_comma(c)
                        and c.right_edge.i >= len(doc) - 2), None)
        if closing is not None:
            drop.update(range(closing.left_edge.i - 1, closing.right_edge.i + 1))
    if not drop or root.i in drop:
        return None
    # A word glued to a dropped comma ("Locke, 39, will") gets the space the comma had.
    kept = "".join(t.text + (t.whitespace_ or (" " if t.i + 1 in drop else "")) for t in doc if t.i not in drop)
    kept = re.sub(r"\s+([,.;:!?])", r"\1", kept)
    kept = re.sub(r",\s*(?=[,.;:!?]|$)", "", kept.strip()).strip(" ,")
    final = doc.text.rstrip()[-1:]
    if final in ".!?" and not kept.endswith((".", "!", "?")):
        kept += final
    if len(kept.split()) < MIN_WORDS:
        return None
    return kept[:1].upper() + kept[1:]


def restate_copy_traps(document: Document, article_sentences: Sequence[str]) -> None:
    """No trap is shown as a sentence of its article: each F0 trap that is one (up to case, spacing and
    punctuation: FRANK ships them so, :func:`add_copy_traps` and :func:`generate_traps` copy them) is
    restated (:func:`restate`); one that cannot be, and an error trap that is one, is retired, like a trap
    from a withdrawn edit: deleted
    when nobody answered it, else kept with weight 0 (its answers stay as history, off the pages and scores).
    An answered trap keeps its text (its answers judged that text): its restatement is a new trap."""
    sentences = {_norm(s) for s in article_sentences}
    label = TRAP_LABELS["F0"]
    for trap in document.traps.filter(weight__gt=0).order_by("id"):
        if _norm(trap.text) not in sentences:
            continue
        # An error trap the article states word for word (a pronoun swap that gives another of its sentences)
        # has a wrong label: retired, never restated.
        shorter = restate(trap.text) if trap.code == "F0" else None
        if shorter is not None and _norm(shorter) in sentences:
            shorter = None
        answered = trap.answers.exists()
        if shorter is not None and not answered:
            Trap.objects.filter(pk=trap.pk).update(text=shorter)
            continue
        if answered:
            Trap.objects.filter(pk=trap.pk).update(weight=0.0)
        else:
            trap.delete()
        if shorter is not None:
            Trap.objects.create(document=document, code="F0", text=shorter, expected_factual=label[0], expected_category=label[1] or "")


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


# ---------------------------------------------------------------- traps from accepted BUMP edits

def article_fingerprint(text: str) -> str:
    """A key of an article's wording that ignores case, spacing, punctuation and tokenisation ("Locke's",
    "Locke 's"), so the same article imported from two datasets (FRANK, BUMP) matches."""
    return hashlib.sha1(re.sub(r"[^0-9a-z]", "", (text or "").lower()).encode()).hexdigest()


def _norm(sentence: str) -> str:
    return re.sub(r"[^0-9a-z]", "", sentence.lower())


def changed_sentence(reference: Sequence[str], edited: Sequence[str]) -> str | None:
    """The one sentence of ``edited`` that is not a sentence of ``reference`` (None unless exactly one is)."""
    kept = {_norm(s) for s in reference}
    changed = [s for s in edited if s.strip() and _norm(s) not in kept]
    return changed[0] if len(changed) == 1 else None


def accepted_edits() -> QuerySet[Summary]:
    """Edited summaries with a reviewed error type: platform edits whose review accepted (or corrected) them,
    and imported minimal pairs (a dataset such as BUMP ships only accepted edits, without an edit record)."""
    return (
        Summary.objects.filter(edited_from__isnull=False)
        .filter(Q(edit_record__isnull=True) | Q(edit_record__review_status__in=[ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED]))
        .exclude(corrected_error_type="", requested_error_type="")
    )


def bump_edit_trap_candidates(documents: Sequence[Document]) -> dict[int, list[tuple[Summary, str, str]]]:
    """For each of ``documents``: ``(edited summary, trap sentence, FRANK category)`` of every accepted edit of
    the same article in another campaign (category "" when the edit's type has no single FRANK category).

    Reads each other article with accepted edits once (to match wordings), then only the matching edits.
    """
    by_print: dict[str, list[Document]] = defaultdict(list)
    for document in documents:
        by_print[article_fingerprint(document.text)].append(document)
    campaigns = {d.campaign_id for d in documents}
    edits = accepted_edits().exclude(document__campaign_id__in=campaigns)
    sources = (
        Document.objects.filter(pk__in=edits.values("document_id")).values_list("pk", "text").iterator(chunk_size=500)
    )
    matching = {pk: by_print[fp] for pk, text in sources if (fp := article_fingerprint(text)) in by_print}
    out: dict[int, list[tuple[Summary, str, str]]] = defaultdict(list)
    if not matching:
        return out
    for summary in edits.filter(document_id__in=list(matching)).select_related("edited_from").order_by("id"):
        reference = summary.edited_from.sentences or split_sentences(summary.edited_from.text)
        sentence = changed_sentence(reference, summary.sentences or split_sentences(summary.text))
        if sentence is None:
            continue
        category = CATEGORY_OF_BUMP_TYPE.get(summary.corrected_error_type or summary.requested_error_type, "")
        for document in matching[summary.document_id]:
            out[document.pk].append((summary, sentence, category))
    return out


def add_bump_edit_traps(document: Document, candidates: Sequence[tuple[Summary, str, str]]) -> list[Trap]:
    """Store the error traps of ``candidates`` (from :func:`bump_edit_trap_candidates`) not stored yet.

    A trap whose edit is no longer accepted (its review was undone or changed to rejected) is retired: deleted
    when nobody answered it, else kept with weight 0 (its answers stay as history, off the pages and scores).
    """
    retired = document.traps.filter(source=TrapSource.BUMP_EDIT).exclude(edited_summary_id__in=[c[0].pk for c in candidates])
    retired.filter(answers__isnull=True).delete()
    retired.update(weight=0.0)
    if not candidates:
        return []
    done = set(document.traps.filter(edited_summary__isnull=False).values_list("edited_summary_id", flat=True))
    texts = set(document.traps.values_list("text", flat=True))
    made = []
    for summary, sentence, category in candidates:
        if summary.pk in done or sentence in texts:
            continue
        made.append(Trap.objects.create(
            document=document, code=BUMP_EDIT_TRAP_CODE, text=sentence, expected_factual=False, expected_category=category,
            source=TrapSource.BUMP_EDIT, weight=TRAP_SOURCE_WEIGHTS[TrapSource.BUMP_EDIT], edited_summary=summary,
        ))
        done.add(summary.pk)
        texts.add(sentence)
    return made
