"""FRANK task pages prepared once per document, so that claiming an item and loading its page do no NLP.

What a page needs from a document depends only on its texts: the article and summary sentences as shown
(:mod:`annotate.presentation`), the article's casing (to truecase summaries and style traps), each sentence's relevance ranking (TF-IDF over the
article, one sentence at a time: see ``relevance.py``), the similarity of every trap to every sentence it
could be shown with (which traps may go where, ``page.choose_traps``), the traps themselves and the entity
question's pool (kept in ``document.metadata`` by ``entities.py``).

:func:`prepare_campaign` computes all of it after an import (Celery job ``annotate.prepare_campaign_pages``,
or ``manage.py prepare_pages``) and stores it as a :class:`~annotate.models.DocumentPage` per document. A
claim of a document that is not prepared yet (the job still running, or the rules changed: ``VERSION`` is a digest
of what their code does) prepares that document in the request, with the same result, only slower; after a change
of rules the beat queues the preparation again (``campaigns_with_unprepared_pages``).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet

from annotate import nlp, presentation
from annotate.code_versions import code_version
from annotate.frank import entities, relevance
from annotate.frank import page as page_rules
from annotate.frank.entities import campaign_common_words, entity_pool, prepare_entity_pools, usable_pool
from annotate.models import Campaign, Document, DocumentPage, Summary, Trap
from annotate.nlp import split_sentences
from annotate.rows import CompiledQuery
from annotate.services import overlap
from annotate.services.attention import count_reading_words
from annotate.services.control_items import record_overlaps

logger = logging.getLogger("factlab.frank.prepared")

#: The code whose output is stored: a change to what any of these files does makes every stored page stale
#: (``nlp``: the article's entity spans its traps' swaps read); comments and docstrings do not.
VERSION = code_version(page_rules, relevance, presentation, overlap, entities, nlp, Path(__file__), Path(__file__).with_name("traps.py"))
#: Relevance rankings are kept this long (``Campaign.relevant_sentences_k`` is at most 20).
MAX_RANKING = 20
CHUNK = 200  # documents per transaction (and per spaCy batch of entity pools)


def summary_sentences(summary: Summary) -> list[str]:
    return [s for s in (summary.sentences or []) if s.strip()] or split_sentences(summary.text)


def task_summaries(summaries: Sequence[Summary]) -> list[Summary]:
    """The summaries annotated in a document's item: system outputs (references only when there is nothing else)."""
    originals = sorted((s for s in summaries if s.edited_from_id is None), key=lambda s: s.pk)
    systems = [s for s in originals if not s.is_reference]
    return systems or originals


def compute_page(
    article: Sequence[str], summaries: Sequence[tuple[int, list[str]]], traps: Sequence[Trap], common: Collection[str] = frozenset(),
) -> dict[str, Any]:
    """The stored page of one document (no database): ``summaries`` are ``(id, raw sentences)`` in task order,
    ``common`` the campaign's common words (:func:`campaign_common_words`)."""
    shown_article = presentation.present_article(article)
    casing = presentation.casing_map(shown_article, common)
    shown_summaries = [presentation.present_summary(raw, casing) for _, raw in summaries]
    # A trap is shown styled like its summary; styling changes case and final punctuation only, which the
    # relevance rule ignores, so its ranking is that of the detokenised trap.
    queries = [s for shown in shown_summaries for s in shown] + [presentation.detokenize(t.text) for t in traps]
    rankings = iter(relevance.relevant_sentences(shown_article, queries, MAX_RANKING))
    # What a script computes from the page, per sentence (kept with each layout: services/predictable_answers),
    # computed here once rather than in every claim: a sentence's features do not depend on its neighbours.
    summary_rows = [
        {"id": sid, "raw": raw, "shown": shown, "ranking": [next(rankings) for _ in shown],
         "features": overlap.sentence_page_features(raw, shown_article)}
        for (sid, raw), shown in zip(summaries, shown_summaries)
    ]
    trap_rows = [
        {"id": t.pk, "text": t.text, "edited": t.code != "F0", "ranking": next(rankings),
         "features": overlap.sentence_page_features([t.text], shown_article)[0]}
        for t in traps
    ]
    # Every sentence a trap can be compared with on a page: the summaries' and the other traps'.
    targets = sorted({s for _, raw in summaries for s in raw} | {t.text for t in traps})
    similarity = {
        t.text: {target: round(page_rules.similarity(t.text, target), 6) for target in targets if target != t.text}
        for t in traps
    }
    return {
        "article": shown_article,
        "paragraphs": presentation.article_paragraphs(shown_article),  # the article's layout: the same on every page
        "casing": casing,
        "summaries": summary_rows,
        "traps": trap_rows,
        "similarity": similarity,
    }


def similarity_lookup(page: dict[str, Any]) -> Callable[[str, str], float]:
    """``page_rules.similarity`` answered from the stored table (computed for pairs it does not hold)."""
    table = page["similarity"]

    def lookup(a: str, b: str) -> float:
        value = table.get(a, {}).get(b)
        return page_rules.similarity(a, b) if value is None else value

    return lookup


def _ensure_traps(document: Document, summaries: list[Summary], bump_edits: Sequence[tuple[Summary, str, str]] = ()) -> None:
    from annotate.frank.traps import add_bump_edit_traps, add_copy_traps, generate_traps, make_error_traps_fluent, restate_copy_traps

    if not document.traps.exists():
        generate_traps(document)
    make_error_traps_fluent(document)
    add_copy_traps(document, [s for summary in task_summaries(summaries) for s in summary_sentences(summary)])
    restate_copy_traps(document, document.sentences or split_sentences(document.text))
    # Human minimal edits of the same article from BUMP campaigns (new accepted ones join on the next preparation).
    add_bump_edit_traps(document, bump_edits)


def prepare_documents(
    documents: Sequence[Document], *, entity_pools: bool = True, checkpoint: Callable[[], None] | None = None,
) -> int:
    """Prepare and store the pages of ``documents`` (one campaign); returns how many were stored.

    ``entity_pools``: compute the missing entity pools of the whole list in one spaCy pass first (a single
    document's pool is computed by :func:`~annotate.frank.entities.entity_pool` otherwise). ``checkpoint``
    is called between documents; when it raises, no page of ``documents`` is stored.
    """
    from annotate.frank.traps import bump_edit_trap_candidates

    if not documents:
        return 0
    if entity_pools and len(documents) > 1:
        prepare_entity_pools(documents, checkpoint=checkpoint)
    ids = [d.pk for d in documents]
    by_document: dict[int, list[Summary]] = {pk: [] for pk in ids}
    for summary in Summary.objects.filter(document_id__in=ids).order_by("id"):
        by_document[summary.document_id].append(summary)
    bump_edits = bump_edit_trap_candidates(documents)
    common = campaign_common_words(documents[0].campaign_id)
    rows = []
    with transaction.atomic():
        for document in documents:
            if checkpoint:
                checkpoint()
            pool = entity_pool(document)  # stored already after prepare_entity_pools; computed alone otherwise
            _ensure_traps(document, by_document[document.pk], bump_edits.get(document.pk, ()))
            summaries = [(s.pk, summary_sentences(s)) for s in task_summaries(by_document[document.pk])]
            article = document.sentences or split_sentences(document.text)
            # Retired traps (weight 0: taken from an edit no longer accepted) are no longer shown.
            data = compute_page(article, summaries, list(document.traps.filter(weight__gt=0).order_by("id")), common)
            data["entity_pool"] = usable_pool(document.text, pool)  # the reading check's names, filtered once
            # What the page gives to read, as attention.reading_words counts it for an item of the whole document
            # (the article and its summaries): a submission stores it without reading those texts again.
            data["reading_words"] = count_reading_words(
                [document.text, *(s.text for s in by_document[document.pk] if s.edited_from_id is None)])
            rows.append(DocumentPage(document=document, version=VERSION, data=data))
        # The traps' word overlap with the article, kept with them: the quality score is balanced within its bands.
        record_overlaps(documents[0].campaign, ids)
        DocumentPage.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["document"], update_fields=["version", "data", "updated_at"],
        )
    return len(rows)


def prepare_campaign(
    campaign: Campaign, *, only_missing: bool = True, progress: Callable[[int, int], None] | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> int:
    """Prepare the pages of a campaign's documents (those without a current page when ``only_missing``).

    ``progress(done, total)`` after each batch of ``CHUNK`` documents; ``checkpoint()`` between documents (it
    raises to stop: the batch under way is not stored, earlier batches are)."""
    documents = Document.objects.filter(campaign=campaign).order_by("id")
    if only_missing:
        documents = _unprepared(documents)
    ids = list(documents.values_list("id", flat=True))
    done = 0
    for start in range(0, len(ids), CHUNK):
        chunk = list(Document.objects.filter(pk__in=ids[start:start + CHUNK]).order_by("id"))
        done += prepare_documents(chunk, checkpoint=checkpoint)
        if progress:
            progress(done, len(ids))
    logger.info("prepared %d FRANK pages of campaign %s", done, campaign.slug)
    return done


def campaigns_with_unprepared_pages(campaigns: QuerySet[Campaign]) -> list[Campaign]:
    """Those of ``campaigns`` with a document that has no page of the current ``VERSION``. One query, which stops at
    each campaign's first such document (the page's document index), however many documents it has."""
    return list(campaigns.filter(Exists(_unprepared(Document.objects.filter(campaign=OuterRef("pk"))))).order_by("pk"))


def _unprepared(documents: QuerySet[Document]) -> QuerySet[Document]:
    """Those of ``documents`` without a page of the current ``VERSION`` (none, or one the code of another version made)."""
    return documents.exclude(prepared_page__version=VERSION)


# Read on every claim: compiled once (a document has at most one page).
_STORED_PAGE = CompiledQuery(
    lambda document_id: DocumentPage.objects.filter(document_id=document_id).values_list("version", "data")[:1], document_id=int,
)


def prepared_page(document: Document) -> dict[str, Any]:
    """The stored page of ``document``, prepared now if missing or computed by other code.

    Kept on the instance: a claim builds the layout and then the page from the same document object.
    """
    memo = getattr(document, "_prepared_page", None)
    if memo is not None:
        return memo
    if Document.prepared_page.is_cached(document):  # joined to the claim's locked item (no query); None: no page
        joined = Document.prepared_page.related.get_cached_value(document)
        stored = None if joined is None else (joined.version, joined.data)
    else:
        stored = _STORED_PAGE.row(document_id=document.pk)
    if stored is not None and stored[0] == VERSION:
        document._prepared_page = stored[1]
        return stored[1]
    prepare_documents([document], entity_pools=False)
    document._prepared_page = DocumentPage.objects.values_list("data", flat=True).get(document_id=document.pk)
    return document._prepared_page
