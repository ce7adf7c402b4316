"""A toy protocol that exists only in tests: a worker answers one yes/no question per document.

It proves that a protocol is one module plus one registry line: nothing in the shared code knows it.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from annotate.models import Campaign, SentenceJudgement
from annotate.protocols import ExportStream, Protocol, SubmissionResult
from annotate.services.errors import InvalidSubmission


class ToyProtocol(Protocol):
    kind = "toy"
    label = "Toy yes/no question"
    family = "toy"
    task_url_name = "campaign"
    campaign_defaults: ClassVar[Mapping[str, object]] = {
        "redundancy": 2, "tutorial_required": False, "qualification_required": False, "trap_rate": 0.0,
        "entity_check_enabled": False,
    }
    export_formats: ClassVar[Mapping[str, str]] = {"toy": "one JSON line per answer"}

    def document_items(self, store, document) -> None:
        store.item(document)

    def store_submission(self, assignment, payload: dict[str, Any]) -> SubmissionResult:
        answer = payload.get("factual")
        if not isinstance(answer, bool):
            raise InvalidSubmission("factual must be true or false")
        summary = assignment.item.document.summaries.order_by("pk").first()
        SentenceJudgement.objects.create(
            summary=summary, sentence_index=0, worker_id=assignment.worker_id, assignment=assignment, factual=answer, categories=[],
        )
        return SubmissionResult(stored_rows=1)

    def export(self, campaign: Campaign, fmt: str, export_filters, *, file: str, reveal_workers: bool, include_gold: bool) -> ExportStream:
        def lines() -> Iterator[bytes]:
            rows = SentenceJudgement.objects.filter(summary__document__campaign=campaign).order_by("pk")
            for row in rows.values("summary__document__external_id", "factual"):
                yield (json.dumps({"document": row["summary__document__external_id"], "factual": row["factual"]}) + "\n").encode()

        return ExportStream(lines(), "application/x-ndjson", f"{campaign.slug}-toy.jsonl")
