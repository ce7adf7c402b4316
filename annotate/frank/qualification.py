"""FRANK's qualification form: the page's rows and the parse of its fields (the scoring is ``protocol.score_qualification``)."""
from __future__ import annotations

from typing import Any

from annotate.frank import content as frank_content
from annotate.models import Campaign, Document, GoldLabel, Summary
from annotate.nlp import split_sentences
from annotate.services.control_items import summary_sentences
from annotate.services.errors import InvalidSubmission


def campaign_gold_documents(campaign: Campaign) -> tuple[list[frank_content.GoldDocument], list[frank_content.GoldDocument]]:
    """The campaign's documents as qualification material (original summaries whose every sentence has gold):
    with their private gold only (an admin's, or labels marked private), and with all of it (public labels,
    a benchmark's release, included). A test is drawn from the first that makes one."""
    labels: dict[int, dict[int, tuple[bool, str, bool]]] = {}
    for summary_id, index, factual, category, public in GoldLabel.objects.filter(
        summary__document__campaign=campaign, summary__edited_from__isnull=True, summary__is_reference=False,
    ).values_list("summary_id", "sentence_index", "factual", "category", "public"):
        labels.setdefault(summary_id, {})[index] = (factual, category, public)
    by_document: dict[int, list[tuple]] = {}
    # Only the sentences (a text is read where none were stored), each article once: on a benchmark-sized
    # campaign, every summary with gold, the other columns and an article per summary cost seconds.
    for summary in Summary.objects.filter(pk__in=list(labels)).order_by("pk").only("sentences", "document_id"):
        sentences = summary_sentences(summary)
        known = labels[summary.pk]
        if len(sentences) == len(known) and all(i in known for i in range(len(sentences))):
            keys = [frank_content.KeySentence(text, None if known[i][0] else known[i][1], "") for i, text in enumerate(sentences)]
            by_document.setdefault(summary.document_id, []).append((summary, keys, any(known[i][2] for i in known)))
    articles = Document.objects.only("sentences").in_bulk(list(by_document))
    documents: dict[bool, list[frank_content.GoldDocument]] = {True: [], False: []}
    for document_id, rows in by_document.items():
        document = articles[document_id]
        article = tuple(document.sentences or split_sentences(document.text))
        private = [tuple(keys) for _, keys, public in rows if not public]
        everything = [tuple(keys) for _, keys, _ in rows]
        if private:
            documents[False].append(frank_content.GoldDocument(article, tuple(private)))
        documents[True].append(frank_content.GoldDocument(article, tuple(everything)))
    return documents[False], documents[True]


def qualification_rows(exercise: frank_content.Exercise, post=None) -> list[dict[str, Any]]:
    """The test's sentences with the worker's current form values (for re-display after an error)."""
    rows = []
    for s, summary in enumerate(frank_content.public_view(exercise)["summaries"]):
        sentences = []
        for i, text in enumerate(summary):
            name = f"s{s}_{i}"
            sentences.append({
                "name": name, "text": text, "number": i + 1,
                "factual": post.get(f"{name}_factual", "") if post else "",
                "categories": post.getlist(f"{name}_cat") if post else [],
            })
        rows.append({"number": s + 1, "sentences": sentences})
    return rows


def parse_qualification_form(exercise: frank_content.Exercise, post) -> dict[str, Any]:
    """Form fields ``s<S>_<I>_factual`` (yes/no) and ``s<S>_<I>_cat`` (codes) -> the scoring structure."""
    summaries = []
    for s, summary in enumerate(exercise.summaries):
        answers = []
        for i in range(len(summary)):
            value = post.get(f"s{s}_{i}_factual")
            if value not in ("yes", "no"):
                raise InvalidSubmission(f"Summary {s + 1}, sentence {i + 1}: answer Yes or No.")
            factual = value == "yes"
            answers.append({"factual": factual, "categories": [] if factual else post.getlist(f"s{s}_{i}_cat")})
        summaries.append(answers)
    return {"summaries": summaries}
