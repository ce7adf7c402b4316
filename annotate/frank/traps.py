"""Trap (control) sentences: generated with spaCy for documents that come without FRANK's, and taken from
accepted human BUMP edits of the same article.

Mechanical traps have a known label (``taxonomies.frank.TRAP_LABELS``): a copy of an article sentence
(F0, factual), and error traps that read as fluent text, each an article sentence with one fact made false:
its negation (F1, RelE), a named entity exchanged for another of the same kind from the article (F2, EntE), a
number exchanged for another of the article's or shifted (F3, the Yes/No only: a number is an entity or a
circumstance) and a pronoun swap (F6, CorefE). Generation is deterministic per document.

FRANK's files also ship a sentence of another article (F4) and word salad (F5): a script spots both without
reading (no word of the page; word order no English sentence has, see ``benchmarks/trap_fluency.py``), so
:func:`make_error_traps_fluent` retires them, with shipped negations that doubled a negation ("has not
n't"), and gives the document fluent error traps instead.

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
from collections.abc import Collection, Sequence

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
from annotate.nlp import ENTITIES_DISABLED, SPLIT_DISABLED, TRAPS_DISABLED, entity_spans, get_nlp, sentence_entities, split_sentences
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


#: Named-entity kinds an entity swap exchanges: names a reader checks against the article.
SWAP_ENTITY_KINDS = ("PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "PRODUCT", "WORK_OF_ART")
#: Kinds whose digits a number swap changes.
SWAP_NUMBER_KINDS = ("CARDINAL", "MONEY", "PERCENT", "QUANTITY", "DATE", "TIME")
_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s$")
_DIGITS = re.compile(r"\d+")
_DOUBLED_NEGATION = re.compile(r"\bnot\s+(?:n['’]t|nt|no|not|never)\b|n['’]t\s+not\b", re.IGNORECASE)


def _name_words(name: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", name.lower()) if len(w) > 2 and w != "the"}


def article_entities(sentences: Sequence[str], text: str | None = None) -> list[list[tuple[int, int, str, str]]]:
    """Each sentence's named entities as ``(start, end, kind, text)`` character spans. ``text``: the article the
    sentences were split from, parsed whole (its parse is the one the entity pool made, when preparing pages:
    :func:`annotate.nlp.sentence_entities`); else, or when they are not its sentences, one pass over the sentences."""
    if text is not None:
        spans = sentence_entities(sentences, text)
        if spans is not None:
            return spans
    nlp = get_nlp(disable=ENTITIES_DISABLED)
    return [entity_spans(doc) for doc in nlp.pipe(sentences, batch_size=64)]


def swap_entity(sentence: str, spans: Sequence[tuple[int, int, str, str]], pool: dict[str, list[str]], rng: random.Random) -> str | None:
    """``sentence`` with one named entity replaced by another of the same kind from ``pool`` (the article's,
    by kind) that shares no word with it ("Locke" is not swapped for "Gary Locke") and is not in the
    sentence already: fluent, and false of the article. None when no entity can be swapped."""
    order = [span for span in spans if span[2] in SWAP_ENTITY_KINDS]
    rng.shuffle(order)
    lowered = sentence.lower()
    for start, end, kind, text in order:
        words = _name_words(text)
        others = sorted({
            _POSSESSIVE.sub("", _LEADING_THE.sub("", o)) for o in pool.get(kind, ())
            if words and not (_name_words(o) & words) and _name_words(o) and o.lower() not in lowered
        })
        if others:
            # The swap keeps the sentence's own "the" and possessive ("Kilmarnock’s" -> "Arsenal’s").
            without_the = _LEADING_THE.sub("", text)
            start += len(text) - len(without_the)
            end -= len(without_the) - len(_POSSESSIVE.sub("", without_the))
            return sentence[:start] + rng.choice(others) + sentence[end:]
    return None


def _shifted(number: int, rng: random.Random) -> int:
    """Another plausible value: a year moves by 1 to 3, other numbers by about a quarter (never to 0)."""
    if 1900 <= number <= 2100:
        return number + rng.choice((-3, -2, -1, 1, 2, 3))
    step = max(1, round(number * 0.25))
    return number + step if number - step < 1 or rng.random() < 0.5 else number - step


def swap_number(sentence: str, spans: Sequence[tuple[int, int, str, str]], pool: dict[str, list[str]], rng: random.Random) -> str | None:
    """``sentence`` with one number made false: the article's other value of the same kind written alike
    ("3-1" for "2-0"), else the number shifted ("39-year-old" -> "49-year-old"). None when the sentence has no number."""
    order = [span for span in spans if span[2] in SWAP_NUMBER_KINDS and _DIGITS.search(span[3])]
    if not order:
        return None
    start, end, kind, text = rng.choice(order)
    # Only a value written the same way ("3-1" for "2-0", never "1993" for "54-year-old").
    shape = _DIGITS.sub("#", text)
    others = sorted({o for o in pool.get(kind, ()) if _DIGITS.sub("#", o) == shape and o != text and o.lower() not in sentence.lower()})
    if others:
        return sentence[:start] + rng.choice(others) + sentence[end:]
    match = _DIGITS.search(text)
    value = int(match.group(0)[:9])
    replaced = text[:match.start()] + str(_shifted(value, rng)) + text[match.end():]
    return sentence[:start] + replaced + sentence[end:]


def doubled_negation(sentence: str) -> bool:
    """A negation written twice ("has not n't been"), as some of FRANK's shipped negations are: not English.

    Examples
    --------
    >>> doubled_negation("there has not n't really been a hold-up.")
    True
    >>> doubled_negation("There has not really been a hold-up.")
    False
    """
    return bool(_DOUBLED_NEGATION.search(sentence))


def fluent_error_traps(sentences: Sequence[str], rng: random.Random, text: str | None = None) -> dict[str, str]:
    """Error traps made from an article's ``sentences``, each fluent with one fact made false, by code:
    negation (F1), entity swap (F2), number swap (F3) and pronoun swap (F6); a kind no sentence allows is
    left out. ``text``: the article's whole text, whose parse gives the entities (:func:`article_entities`).
    Pure apart from spaCy: the benchmark measures these on FRANK without a database."""
    pool = _candidates(sentences)
    if not pool:
        return {}
    shuffled = pool[:]
    rng.shuffle(shuffled)
    made: dict[str, str] = {}
    negated = next((n for n in (negate(s) for s in shuffled[:8]) if n), None)
    if negated:
        made["F1"] = negated
    swapped = next((s2 for s2 in (swap_pronouns(s) for s in shuffled) if s2), None)
    if swapped:
        made["F6"] = swapped
    spans = article_entities(sentences, text)
    by_kind: dict[str, list[str]] = defaultdict(list)
    for sentence_spans in spans:
        for _, _, kind, text in sentence_spans:
            by_kind[kind].append(text)
    spans_of = dict(zip(sentences, spans))
    for code, swap in (("F2", swap_entity), ("F3", swap_number)):
        made_one = next((t for t in (swap(s, spans_of[s], by_kind, rng) for s in shuffled) if t), None)
        if made_one:
            made[code] = made_one
    return made


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
    return restate_many([sentence])[0]


def restate_many(sentences: Sequence[str]) -> list[str | None]:
    """:func:`restate` of each sentence, parsed together (one ``nlp.pipe``: a document's copies at once)."""
    from annotate.presentation import present

    # The parse alone (the sentence split's pipeline): a restatement reads dependencies, which the tagger, attribute
    # ruler and lemmatizer after the parser leave as they are.
    nlp = get_nlp(disable=SPLIT_DISABLED)
    return [_restated(doc) for doc in nlp.pipe([present(s) for s in sentences])]


def _restated(doc) -> str | None:
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


def _create(document: Document, code: str, text: str) -> Trap:
    factual, category = TRAP_LABELS[code]
    return Trap.objects.create(document=document, code=code, text=text, expected_factual=factual, expected_category=category or "")


def _retire(trap: Trap) -> None:
    """Off the pages and scores: deleted when nobody answered it, else kept with weight 0 (its answers stay
    as history)."""
    if trap.answers.exists():
        Trap.objects.filter(pk=trap.pk).update(weight=0.0)
    else:
        trap.delete()


def restate_copy_traps(document: Document, article_sentences: Sequence[str]) -> None:
    """No trap is shown as a sentence of its article: each F0 trap that is one (up to case, spacing and
    punctuation: FRANK ships them so, :func:`add_copy_traps` and :func:`generate_traps` copy them) is
    restated (:func:`restate`); one that cannot be, and an error trap that is one, is retired
    (:func:`_retire`), like a trap from a withdrawn edit. An answered trap keeps its text (its answers judged that text): its restatement is a new trap."""
    sentences = {_norm(s) for s in article_sentences}
    copies = [trap for trap in document.traps.filter(weight__gt=0).order_by("id") if _norm(trap.text) in sentences]
    # An error trap the article states word for word (a pronoun swap that gives another of its sentences)
    # has a wrong label: retired, never restated.
    factual = [trap for trap in copies if trap.code == "F0"]
    restated = dict(zip((trap.pk for trap in factual), restate_many([trap.text for trap in factual])))
    for trap in copies:
        shorter = restated.get(trap.pk)
        if shorter is not None and _norm(shorter) in sentences:
            shorter = None
        if shorter is not None and not trap.answers.exists():
            Trap.objects.filter(pk=trap.pk).update(text=shorter)
            continue
        _retire(trap)
        if shorter is not None:
            _create(document, "F0", shorter)


COPY_TRAPS_FLAG = "copy_traps_added"


def add_copy_traps(document: Document, summary_sentences: list[str]) -> list[Trap]:
    """Add, once per document, factual copy traps (F0) of the article sentences closest to its summaries
    (:func:`annotate.frank.page.summary_like_sentences`); returns the traps created now."""
    from annotate.frank.page import summary_like_sentences

    if (document.metadata or {}).get(COPY_TRAPS_FLAG):
        return []
    existing = set(document.traps.values_list("text", flat=True))
    sentences = document.sentences or split_sentences(document.text)
    with transaction.atomic():
        made = [
            _create(document, "F0", text)
            for text in summary_like_sentences(sentences, summary_sentences) if text not in existing
        ]
        metadata = {**(document.metadata or {}), COPY_TRAPS_FLAG: True}
        Document.objects.filter(pk=document.pk).update(metadata=metadata)
        document.metadata = metadata
    return made


def generate_traps(document: Document, *, seed: int | None = None) -> list[Trap]:
    """Create and return a copy trap (F0) and the fluent error traps (:func:`fluent_error_traps`) that can be
    made from ``document`` (none if it has traps)."""
    existing = list(document.traps.all())
    if existing:
        return existing
    rng = random.Random(seed if seed is not None else document.pk)
    sentences = document.sentences or split_sentences(document.text)
    pool = _candidates(sentences)
    if not pool:
        return []
    made = {"F0": rng.choice(pool), **fluent_error_traps(sentences, rng, document.text)}
    with transaction.atomic():
        return [_create(document, code, text) for code, text in sorted(made.items())]


FLUENT_TRAPS_FLAG = "fluent_error_traps"
#: Shipped error traps a script spots without reading the article: a sentence of another article, word salad.
SPOTTED_CODES = ("F4", "F5")


def spotted(code: str, text: str) -> bool:
    """Whether a mechanical trap is one a script spots without reading: ``SPOTTED_CODES`` or a doubled
    negation (:func:`doubled_negation`)."""
    return code in SPOTTED_CODES or (code == "F1" and doubled_negation(text))


def replacement_traps(
    kept_codes: Collection[str], sentences: Sequence[str], rng: random.Random, text: str | None = None,
) -> dict[str, str]:
    """The fluent error traps (:func:`fluent_error_traps`) of the kinds not in ``kept_codes``."""
    return {code: trap for code, trap in sorted(fluent_error_traps(sentences, rng, text).items()) if code not in kept_codes}


def make_error_traps_fluent(document: Document, *, seed: int | None = None) -> list[Trap]:
    """Once per document: retire its mechanical error traps a script spots (:func:`spotted`) and, when it
    had any, give it instead the fluent error traps of the kinds it no longer shows
    (:func:`replacement_traps`); returns the traps created now."""
    if (document.metadata or {}).get(FLUENT_TRAPS_FLAG):
        return []
    mechanical = document.traps.filter(weight__gt=0, source=TrapSource.MECHANICAL).order_by("id")
    with transaction.atomic():
        found = [t for t in mechanical if spotted(t.code, t.text)]
        for trap in found:
            _retire(trap)
        made = []
        if found:
            rng = random.Random(seed if seed is not None else document.pk)
            sentences = document.sentences or split_sentences(document.text)
            kept = set(mechanical.all().values_list("code", flat=True))
            made = [_create(document, code, text) for code, text in replacement_traps(kept, sentences, rng, document.text).items()]
        metadata = {**(document.metadata or {}), FLUENT_TRAPS_FLAG: True}
        Document.objects.filter(pk=document.pk).update(metadata=metadata)
        document.metadata = metadata
    return made


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
