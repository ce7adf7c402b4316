"""Idempotent writes shared by every importer: each helper finds a row by its natural key or creates it."""
from __future__ import annotations

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

from .base import ImportReport

IMPORTED_CONFIG = "imported"


class Store:
    """Writes of one import run into one campaign, counting what was created and what existed."""

    def __init__(self, campaign: Campaign, report: ImportReport):
        self.campaign = campaign
        self.report = report
        self._workers: dict[tuple[str, str], Worker] = {}

    def document(self, external_id: str, **fields: Any) -> Document:
        doc, created = Document.objects.get_or_create(campaign=self.campaign, external_id=external_id, defaults=fields)
        self.report.count("documents", created)
        return doc

    def summary(self, document: Document, system: str, **fields: Any) -> Summary:
        summary, created = Summary.objects.get_or_create(
            document=document, system=system, edited_from=None, defaults=fields
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
