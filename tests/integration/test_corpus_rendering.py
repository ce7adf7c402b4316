"""Every text a worker reads, from every corpus the platform imports, reads as written.

The QAGS sample, the whole FRANK benchmark and the BUMP samples go through the real importers; FRANK-kind
campaigns are prepared as after an import (:func:`annotate.frank.prepared.prepare_campaign`) and read back
exactly as the task page shows them (:func:`annotate.frank.protocol.task_page_data`, every trap in the style of
every summary it can replace); BUMP items as the editing page shows them (``annotate.bump.protocol``). Then:

- no mojibake (ftfy's badness test, which knows the UTF-8-as-Windows-1252 patterns such as "Ã©" and "â€™");
- no capitalised common word right after a capitalised word ("Smith Said", "A Police officer") that neither
  the source's own text nor the article writes so ("Royal Bank of Scotland" in the article is a name);
  a common word is one the corpus writes lower-case mid-sentence more often than capitalised;
- no trap that is, up to case, spacing and punctuation, a sentence of its article (a person spots those);
- every reading-check option is an entity a reader recognises: capitalised as a name, cased as the article
  writes it when the article has it, and on its own neither a common word ("Exercise") nor an abbreviation
  ("Det", "VAT").
"""
from __future__ import annotations

import random
import re
from collections import Counter

import ftfy.badness
import pytest

from annotate.bump import protocol as bump_protocol
from annotate.frank.entities import entity_question
from annotate.frank.prepared import CHUNK, prepare_campaign, prepare_documents, prepared_page
from annotate.frank.protocol import build_layout, task_page_data
from annotate.models import Assignment, Campaign, Document, Item, Summary
from annotate.presentation import present, style_like
from annotate.services.imports import import_dataset
from tests.conftest import SAMPLES_DIR

_SENTENCE_BREAK = re.compile(r"(?<=[^\W_]{2}[.!?])[\"'’”)]*\s+")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Two capitalised words with only a space between them; the second all letters ("Smith Said", not "BBC Two").
_CAPITALISED_PAIR = re.compile(r"(?=(?<![\w'’.\-])([A-Z][\w'’\-]*(?:\.[\w'’\-]+)*) ([A-Z][a-z]+)\b(?![\-'’]\w)(?: ([A-Z][\w'’\-]*|of|de|the|for)\b)?)")


_NAME_PAIR = re.compile(r"(?=(?<![\w'’.\-])([A-Z][\w'’\-]*) ([A-Z][\w'’\-]*|of|de|the|for)(?=[\s,.;:!?]|$))")


def normalised(sentence: str) -> str:
    return re.sub(r"[^0-9a-z]", "", present(sentence).lower())


class CorpusWords:
    """How the imported (cased) corpus writes each word in mid-sentence: lower-case or capitalised."""

    def __init__(self, texts):
        self.lower: Counter = Counter()
        self.capitalised: Counter = Counter()
        # Two words of a name as some article writes them ("House of", "Olympic Games"): a name, wherever it is shown.
        self.name_pairs: set[str] = set()
        for text in texts:
            if not any(ch.isupper() for ch in text):
                continue  # a lower-cased text says nothing about casing
            for sentence in _SENTENCE_BREAK.split(text):
                words = _WORD.findall(sentence)
                for word in words[1:]:
                    if word.islower():
                        self.lower[word] += 1
                    elif word[0].isupper() and not word.isupper():
                        self.capitalised[word.lower()] += 1
                for match in _NAME_PAIR.finditer(sentence):
                    self.name_pairs.add(f"{match.group(1)} {match.group(2)}")

    def common(self, word: str) -> bool:
        lower, capitalised = self.lower[word.lower()], self.capitalised[word.lower()]
        return lower >= 3 and lower > capitalised


def capitalised_common_words(shown: str, source: str, article: list[str], words: CorpusWords) -> list[str]:
    """"Name Word" pairs of ``shown`` whose second word is common and capitalised by the platform: neither the
    stored ``source`` text nor the shown ``article`` writes the pair, or the word and the name it starts
    ("The East Midlands": the article's "East Midlands"), so, and no article of the corpus has either in a name."""
    found = []
    for match in _CAPITALISED_PAIR.finditer(shown):
        pair = f"{match.group(1)} {match.group(2)}"
        evidence = [pair] + ([f"{match.group(2)} {match.group(3)}"] if match.group(3) else [])
        if not words.common(match.group(2)) or any(e in words.name_pairs for e in evidence):
            continue
        if any(e in text for e in evidence for text in [source, *article]):
            continue
        if any(re.search(rf"(?<![A-Z][\w'’\-]) {re.escape(match.group(2))}(?! [A-Z])", line) for line in article):
            continue  # the article uses the word alone as a name ("won the Derby"): the platform writes it so
        found.append(pair)
    return found


def recognisable_option(option: str, article: str, words: CorpusWords) -> bool:
    """A reading-check option a reader can place: a name (capitalised, or a year: "2014 World Cup"), cased as
    the article writes it when the article has it, and on its own neither a common word nor an abbreviation."""
    if not (option[:1].isupper() or option[:1].isdigit()):
        return False  # "royal bank of scotland", "the Sunday Times", "veterans"
    if option.lower() in article.lower() and option not in article:
        return False
    # on its own, neither a common word ("Exercise") nor an abbreviation ("Det", "VAT")
    return not (len(option.split()) == 1 and (words.common(option) or sum(ch.isalpha() for ch in option) < 4))


class Findings:
    def __init__(self):
        self.texts = 0
        # Sets: a text shown on several pages (a trap beside each summary) counts once.
        self.mojibake: set[str] = set()
        self.capitalisation: set[str] = set()
        self.trap_copies: set[str] = set()
        self.options = 0
        self.page_copies = 0  # sentences of served pages (with traps) equal to an article sentence
        self.unclear_options: set[str] = set()

    def text(self, where: str, shown: str, source: str, article: list[str], words: CorpusWords) -> None:
        self.texts += 1
        if ftfy.badness.is_bad(shown):
            self.mojibake.add(f"{where}: {shown[:120]}")
        for pair in capitalised_common_words(shown, source, article, words):
            self.capitalisation.add(f"{where}: {pair!r} in {shown[:140].rstrip('.')}")

    def summary(self) -> str:
        return (f"{self.texts} texts: {len(self.mojibake)} with mojibake, {len(self.capitalisation)} capitalised common words, "
                f"{len(self.trap_copies)} traps equal to an article sentence ({self.page_copies} on the served pages); {len(self.unclear_options)} of {self.options} "
                "reading-check options not a recognisable entity")


def frank_kind_findings(campaign: Campaign, words: CorpusWords, findings: Findings, batch: int | None = None) -> int:
    """Every text of the campaign's task pages as the page shows it: of all its documents, or of one of the
    batches :func:`prepare_campaign` prepares (``batch``: its index). Returns how many documents were read."""
    documents = Document.objects.filter(campaign=campaign).order_by("id")
    if batch is None:
        prepare_campaign(campaign)
    else:
        # prepare_campaign prepares CHUNK documents at a time, in id order, each batch on its own (its entity
        # pools are drawn within it): this is that batch, prepared as prepare_campaign prepares it.
        ids = list(documents.values_list("id", flat=True)[batch * CHUNK:(batch + 1) * CHUNK])
        prepare_documents(list(Document.objects.filter(pk__in=ids).order_by("id")))
        documents = documents.filter(pk__in=ids)
    read = 0
    for document in documents.prefetch_related("traps"):
        read += 1
        page = prepared_page(document)
        article = page["article"]
        raw_article = document.sentences or []
        for index, line in enumerate(article):
            findings.text(f"{document.external_id} article", line, raw_article[index] if index < len(raw_article) else "", [], words)
        article_keys = {normalised(line) for line in article}
        traps = [t for t in document.traps.all() if t.weight > 0]
        for summary in page["summaries"]:
            for raw, shown in zip(summary["raw"], summary["shown"]):
                findings.text(f"{document.external_id} summary", shown, raw, article, words)
            for trap in traps:  # as the page styles it in place of one of this summary's sentences
                shown = style_like(trap.text, summary["shown"], page["casing"])
                findings.text(f"{document.external_id} trap {trap.code}", shown, trap.text, article, words)
                if normalised(shown) in article_keys:
                    findings.trap_copies.add(f"{document.external_id} trap {trap.pk} {trap.code}: {trap.text[:120]}")
        # One page with traps on every summary and its reading check, exactly as served.
        item = Item.objects.filter(document=document).first()
        if item is not None:
            layout = build_layout(document, 1.0, random.Random(document.pk))
            data = task_page_data(Assignment(item=item, layout=layout), campaign.relevant_sentences_k)
            for row, summary in zip(layout["summaries"], data["summaries"]):
                if row["trap"] and normalised(summary["sentences"][row["trap_at"]]["text"]) in article_keys:
                    findings.page_copies += 1
        for seed in range(3):  # as a claim draws it, from the names the prepared page keeps
            question = entity_question(document, random.Random(seed), page["entity_pool"])
            for option in (question or {}).get("options", []):
                findings.options += 1
                if not recognisable_option(option, document.text, words):
                    findings.unclear_options.add(f"{document.external_id}: {option!r}")
    return read


def bump_findings(campaign: Campaign, words: CorpusWords, findings: Findings) -> None:
    """The editing page (article and reference) and every edit as a reviewer reads it."""
    for item in Item.objects.filter(campaign=campaign).select_related("document", "summary").order_by("id"):
        data = bump_protocol.task_page_data(Assignment(item=item, layout={}))
        raw_article = item.document.sentences or []
        for index, line in enumerate(data["article"]):
            findings.text(f"bump {item.document.external_id} article", line, raw_article[index] if index < len(raw_article) else "", [], words)
        findings.text(f"bump {item.document.external_id} reference", data["reference"], item.summary.text, data["article"], words)
    for edited in Summary.objects.filter(document__campaign=campaign, edited_from__isnull=False):
        findings.text(f"bump {edited.document.external_id} edit", present(edited.text), edited.text, [], words)


# FRANK's 499 documents in the batches prepare_campaign prepares (CHUNK, 200, at a time): 200, 200 and 99.
FRANK_BATCHES = 3


# The whole FRANK benchmark (imported once per run, frank_benchmark) and its 499 pages prepared (spaCy over
# every article): minutes, in three tests, one per batch of pages, which parallel workers share. The QAGS and
# BUMP samples are read with the smallest batch.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("batch", [  # CNN/DM's long articles come first
    pytest.param(0, marks=pytest.mark.long(seconds=90)), pytest.param(1, marks=pytest.mark.long(seconds=80)), 2,
])
def test_every_imported_qags_frank_and_bump_text_reads_as_written(frank_benchmark, batch):
    frank_benchmark.slug = "frank-read"
    frank_benchmark.save(update_fields=["slug"])
    import_dataset("qags", [SAMPLES_DIR / "qags_mturk_sample.jsonl"], campaign_slug="qags-read")
    import_dataset("bump", [SAMPLES_DIR / "bump_task1_sample.json"], campaign_slug="bump1-read", campaign_kind="bump_taxonomy")
    import_dataset("bump", [SAMPLES_DIR / "bump_task2_sample.json"], campaign_slug="bump2-read", campaign_kind="bump_free")
    words = CorpusWords(Document.objects.values_list("text", flat=True))
    assert words.common("said") and words.common("police") and not words.common("Kilmarnock")

    findings = Findings()
    read = frank_kind_findings(frank_benchmark, words, findings, batch)
    if batch == FRANK_BATCHES - 1:
        frank_kind_findings(Campaign.objects.get(slug="qags-read"), words, findings)
        for slug in ("bump1-read", "bump2-read"):
            bump_findings(Campaign.objects.get(slug=slug), words, findings)
    print(findings.summary())
    assert Document.objects.filter(campaign__slug="frank-read").count() == 499
    assert read == (CHUNK if batch < FRANK_BATCHES - 1 else 499 - CHUNK * (FRANK_BATCHES - 1))  # the batches cover FRANK
    # More than 20000 texts and 1000 reading-check options for FRANK's 499 articles: 40 and 2 an article.
    assert findings.texts > 40 * read and findings.options > 2 * read
    assert not findings.mojibake, findings.summary() + "\n" + "\n".join(sorted(findings.mojibake)[:20])
    assert not findings.capitalisation, findings.summary() + "\n" + "\n".join(sorted(findings.capitalisation)[:40])
    assert not findings.trap_copies and not findings.page_copies, findings.summary() + "\n" + "\n".join(sorted(findings.trap_copies)[:20])
    # What is left (19 of 4491 when written, over the whole corpus): one-word names spaCy labels a person or place
    # that are common words ("Media", "Jump"), which neither their own article nor the campaign's casing model
    # shows in lower case. At most 1%, in each batch.
    assert len(findings.unclear_options) * 100 <= findings.options, findings.summary() + "\n" + "\n".join(sorted(findings.unclear_options)[:40])


@pytest.mark.parametrize("shown, source, article, expected", [
    ("Smith Said he would go.", "smith said he would go .", ["Smith said he would go."], ["Smith Said"]),
    ("Smith Said he would go.", "smith said he would go .", ["Smith said he would go.", "They sang Said by him."], []),
    ("The Royal Bank of Scotland lost.", "the royal bank of scotland lost .", ["The Royal Bank of Scotland lost money."], []),
    ("A Police officer came.", "a police officer came .", ["A police officer came."], ["A Police"]),
    ("Scroll Down for video", "Scroll Down for video", [], []),  # the source's own casing
])
def test_the_capitalisation_check_tells_names_from_capitalised_common_words(shown, source, article, expected):
    words = CorpusWords(["The man said that the police came down to him.", "He said the police were there."] * 3)
    assert capitalised_common_words(shown, source, article, words) == expected


def test_the_mojibake_check_finds_what_a_reader_would_see():
    assert ftfy.badness.is_bad("he paid Â£50,000") and ftfy.badness.is_bad("itâ€™s") and ftfy.badness.is_bad("cafÃ©")
    assert not ftfy.badness.is_bad("Déjà vu à la carte, naïve café £5 – ok")


@pytest.mark.parametrize("option, expected", [
    ("Helen Carter", True), ("2014 World Cup", True), ("Royal Bank of Scotland", True),
    ("royal bank of scotland", False), ("the Sunday Times", False), ("Exercise", False), ("Det", False), ("VAT", False),
    ("Greenvale Council", False),  # the article writes "Greenvale council"
])
def test_the_option_check_tells_recognisable_names(option, expected):
    words = CorpusWords(["They said the exercise was over.", "An exercise in the park was done, they said."] * 2)
    article = "Helen Carter of the Royal Bank of Scotland spoke to the Greenvale council about the 2014 World Cup."
    assert recognisable_option(option, article, words) is expected
