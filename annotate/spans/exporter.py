"""The span export: one JSON line per answer in the ``span_offsets`` layout (so it imports again as it was),
with the summary's unified types under AggreFact's rule beside it."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from annotate.models import Campaign
from metrics_service.stats.spans import summary_types, word_tokens

from .models import SpanAnswer
from .words import from_json


def answers(campaign: Campaign):
    return (SpanAnswer.objects.filter(summary__document__campaign=campaign)
            .select_related("summary__document").order_by("summary_id", "pk"))


def records(campaign: Campaign, annotator_name: Callable[[SpanAnswer], str]) -> Iterator[dict]:
    """The export's records, each answer of a summary after another; ``unified_types`` is the summary's."""
    rows = list(answers(campaign))
    by_summary: dict[int, list] = {}
    for answer in rows:
        by_summary.setdefault(answer.summary_id, []).append(from_json(answer.spans))
    for answer in rows:
        summary = answer.summary
        tokens = word_tokens(summary.text)
        group = by_summary[summary.pk]
        yield {
            "article_id": summary.document.external_id, "dataset": summary.document.dataset, "system": summary.system,
            "article": summary.document.text, "summary": summary.text, "annotator": annotator_name(answer), "source": answer.source,
            "spans": [{"start": tokens[s][0], "end": tokens[e - 1][1], "text": summary.text[tokens[s][0]:tokens[e - 1][1]], "type": t}
                      for s, e, t in from_json(answer.spans)],
            "unified_types": list(summary_types(group, min_annotators=min(2, len(group)))),
        }


def rows(campaign: Campaign, name: Callable[[int | None], str | None]) -> Iterator[dict]:
    """The shared export's rows (jsonl/csv/parquet): the shared columns, then the answer's own."""
    def annotator(answer: SpanAnswer) -> str:
        return answer.annotator if answer.source == "imported" else name(answer.worker_id) or ""

    for answer, record in zip(answers(campaign), records(campaign, annotator)):
        summary = answer.summary
        yield {
            "record_type": "span_answer", "campaign": campaign.slug, "document_id": summary.document.external_id,
            "dataset": summary.document.dataset, "split": summary.document.split, "summary_id": summary.pk, "system": summary.system,
            "worker": record["annotator"], "source": answer.source, "no_error": not answer.spans, "n_spans": len(answer.spans),
            "spans": json.dumps(record["spans"], ensure_ascii=False), "unified_types": ",".join(record["unified_types"]),
            "created_at": answer.created_at.isoformat(),
        }


def jsonl(campaign: Campaign, annotator_name: Callable[[SpanAnswer], str]) -> Iterator[bytes]:
    for record in records(campaign, annotator_name):
        yield (json.dumps(record, ensure_ascii=False) + "\n").encode()
