"""Idempotent writes shared by every importer: each helper finds a row by its natural key or creates it."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from annotate.bump import taxonomy as bump_taxonomy
from annotate.models import (
    Campaign,
    CampaignKind,
    Document,
    Item,
    JudgementSource,
    MetricScore,
    MetricSource,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)

from .base import ImportFailed, ImportReport, RecordReader

IMPORTED_CONFIG = "imported"


class Store:
    """Writes of one import run into one campaign, counting what was created and what existed."""

    def __init__(self, campaign: Campaign, report: ImportReport):
        self.campaign = campaign
        self.report = report
        self._workers: dict[tuple[str, str], Worker] = {}
        self._seen: dict[tuple[str, tuple], tuple[bytes, str]] = {}  # (kind, natural key) -> (text, where first read)

    def _same_content(self, kind: str, key: tuple, text: str, existing_text: str | None, origin: RecordReader | None, field: str) -> None:
        """Refuse a second record with the same id and a different text, naming both records.

        A re-import of the same content is fine (idempotent); a different text under an existing id would
        silently attach summaries to the wrong article.
        """
        label = f"{Path(origin.path).name}, record {origin.index}" if origin is not None else "this import"
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        first = self._seen.setdefault((kind, key), (digest, label))
        if first[0] != digest:
            error = f"{kind} {key[-1]!r} was already read with a different text at {first[1]}"
        elif existing_text is not None and existing_text != text and first[1] == label:
            error = f"{kind} {key[-1]!r} is already in campaign '{self.campaign.slug}' with a different text"
        else:
            return
        raise ImportFailed(error, path=origin.path if origin else None, record=origin.index if origin else None, field=field)

    def document(self, external_id: str, *, origin: RecordReader | None = None, id_field: str = "id", **fields: Any) -> Document:
        doc, created = Document.objects.get_or_create(campaign=self.campaign, external_id=external_id, defaults=fields)
        if "text" in fields:
            self._same_content("document", (external_id,), fields["text"], None if created else doc.text, origin, id_field)
        self.report.count("documents", created)
        return doc

    def summary(self, document: Document, system: str, *, origin: RecordReader | None = None, **fields: Any) -> Summary:
        summary, created = Summary.objects.get_or_create(
            document=document, system=system, edited_from=None, defaults=fields
        )
        if "text" in fields:
            self._same_content(
                "summary", (document.external_id, system), fields["text"], None if created else summary.text, origin, "system"
            )
        if not created and fields.get("human_scores") and summary.human_scores != fields["human_scores"]:
            summary.human_scores = fields["human_scores"]
            summary.save(update_fields=["human_scores"])
        self.report.count("summaries", created)
        return summary

    def edited_summary(self, source: Summary, external_id: str, **fields: Any) -> Summary:
        summary, created = Summary.objects.get_or_create(
            document=source.document, edited_from=source, external_id=external_id, defaults=fields
        )
        self.report.count("summaries", created)
        return summary

    def trap(self, document: Document, code: str, text: str, expected_factual: bool, expected_category: str) -> Trap:
        trap, created = Trap.objects.get_or_create(
            document=document, code=code, text=text,
            defaults={"expected_factual": expected_factual, "expected_category": expected_category},
        )
        self.report.count("traps", created)
        return trap

    def item(self, document: Document, summary: Summary | None = None, requested_error_type: str = "") -> Item:
        item, created = Item.objects.get_or_create(
            campaign=self.campaign, document=document, summary=summary,
            requested_error_type=requested_error_type, for_experts=False,
            defaults={"position": Item.objects.filter(campaign=self.campaign).count()},
        )
        self.report.count("items", created)
        return item

    def items_for_reference(self, document: Document, reference: Summary) -> None:
        """BUMP campaigns edit references: one item per requestable type (Task 1) or one item (Task 2)."""
        if self.campaign.kind == CampaignKind.BUMP_TAXONOMY:
            for error_type in bump_taxonomy.REQUESTABLE:
                self.item(document, reference, error_type.code)
        elif self.campaign.kind == CampaignKind.BUMP_FREE:
            self.item(document, reference, "")

    def worker(self, provider: str, external_id: str) -> Worker:
        key = (provider, external_id)
        if key not in self._workers:
            worker = Worker.objects.filter(provider=provider, external_id=external_id).first()
            created = worker is None
            if created:
                user = get_user_model().objects.create_user(username=f"{provider}-{external_id}"[:150])
                user.set_unusable_password()
                user.save(update_fields=["password"])
                worker = Worker.objects.create(user=user, provider=provider, external_id=external_id)
            self.report.count("workers", created)
            self._workers[key] = worker
        return self._workers[key]

    def judgement(self, summary: Summary, sentence_index: int, worker: Worker, factual: bool, categories: list[str]) -> None:
        _, created = SentenceJudgement.objects.get_or_create(
            summary=summary, sentence_index=sentence_index, worker=worker,
            defaults={"factual": factual, "categories": categories, "source": JudgementSource.IMPORTED},
        )
        self.report.count("judgements", created)

    def score(self, summary: Summary, metric: str, value: float, config_key: str = IMPORTED_CONFIG) -> None:
        _, created = MetricScore.objects.update_or_create(
            summary=summary, metric=metric, config_key=config_key,
            defaults={"value": value, "source": MetricSource.IMPORTED},
        )
        self.report.count("metric scores", created)
