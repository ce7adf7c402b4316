"""django-filter filter sets of the list endpoints (query parameters documented in the schema)."""
from __future__ import annotations

from datetime import UTC

import django_filters as df
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from drf_spectacular.utils import extend_schema_field

from annotate.api.query_options import DatasetFilter
from annotate.exporters.tabular import ANNOTATORS, filter_by_annotators
from annotate.kinds import kind_choices
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignStatus,
    Document,
    ImportJob,
    ImportStatus,
    Item,
    MetricScore,
    Participation,
    SentenceJudgement,
    Split,
    Summary,
    Worker,
)

#: Row ids are PostgreSQL bigints from 1.
ID_RANGE = {"minimum": 1, "maximum": 2**63 - 1}


@extend_schema_field({"type": "integer", "format": "int64", **ID_RANGE})
class IdFilter(df.NumberFilter):
    """A row id: an integer within the id range (the schema says so, and anything else is a 400)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", ID_RANGE["minimum"])
        kwargs.setdefault("max_value", ID_RANGE["maximum"])
        super().__init__(*args, **kwargs)


SPLIT_CHOICES = [(v, label) for v, label in Split.choices if v]
WORKER_STATUS_CHOICES = [("any", "Any worker"), ("active", "Not blocked"), ("blocked", "Blocked (globally or here)")]


def annotate_worker_blocked(queryset: QuerySet, campaign: Campaign, worker_field: str = "worker") -> QuerySet:
    """Add ``worker_blocked``: the row's worker is blocked globally or in ``campaign``."""
    blocked_here = Participation.objects.filter(worker_id=OuterRef(f"{worker_field}_id"), campaign=campaign, is_blocked=True)
    return queryset.annotate(
        worker_blocked=Case(
            When(Q(**{f"{worker_field}__is_blocked": True}) | Q(Exists(blocked_here)), then=Value(True)),
            default=Value(False), output_field=BooleanField(),
        )
    )


def _worker_status(queryset: QuerySet, name: str, value: str) -> QuerySet:
    if value == "active":
        return queryset.filter(worker_blocked=False)
    if value == "blocked":
        return queryset.filter(worker_blocked=True)
    return queryset


class CampaignFilter(df.FilterSet):
    status = df.ChoiceFilter(choices=CampaignStatus.choices)
    kind = df.ChoiceFilter(choices=kind_choices)

    class Meta:
        model = Campaign
        fields = ["status", "kind"]


class DocumentFilter(df.FilterSet):
    dataset = DatasetFilter()
    split = df.ChoiceFilter(choices=SPLIT_CHOICES)
    external_id = df.CharFilter()

    class Meta:
        model = Document
        fields = ["dataset", "split", "external_id"]


class SummaryFilter(df.FilterSet):
    system = df.CharFilter()
    dataset = DatasetFilter(field_name="document__dataset")
    split = df.ChoiceFilter(field_name="document__split", choices=SPLIT_CHOICES)
    document = df.CharFilter(field_name="document__external_id", help_text="Document external id (hash).")
    is_reference = df.BooleanFilter()
    is_edit = df.BooleanFilter(field_name="edited_from", lookup_expr="isnull", exclude=True, help_text="Human edits (BUMP) only.")

    class Meta:
        model = Summary
        fields = ["system", "dataset", "split", "document", "is_reference"]


class _UtcIsoDateTimeField(df.fields.IsoDateTimeField):
    """ISO 8601 date-times moved to UTC: PostgreSQL refuses offsets beyond ±15:59 that Python accepts."""

    def to_python(self, value):
        parsed = super().to_python(value)
        if parsed is None or parsed.tzinfo is None:
            return parsed
        try:
            return parsed.astimezone(UTC)
        except (OverflowError, ValueError) as exc:
            raise ValidationError("date-time out of range", code="invalid") from exc


class UtcIsoDateTimeFilter(df.IsoDateTimeFilter):
    field_class = _UtcIsoDateTimeField


class WorkDoneFilter(df.FilterSet):
    """Shared filters of rows a worker produced (the queryset carries ``worker_blocked``); protocols' lists of
    their own rows (BUMP's edits) build on it too."""

    worker_status = df.ChoiceFilter(choices=WORKER_STATUS_CHOICES, method=_worker_status, help_text="Exclude or keep only blocked workers' work.")
    created_after = UtcIsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = UtcIsoDateTimeFilter(field_name="created_at", lookup_expr="lte")


class JudgementFilter(WorkDoneFilter):
    system = df.CharFilter(field_name="summary__system")
    dataset = DatasetFilter(field_name="summary__document__dataset")
    split = df.ChoiceFilter(field_name="summary__document__split", choices=SPLIT_CHOICES)
    summary = IdFilter(field_name="summary_id")
    factual = df.BooleanFilter()
    annotators = df.ChoiceFilter(
        choices=[(a, a) for a in ANNOTATORS], method="_annotators",
        help_text="Whose judgements: human (the default when absent), model (LLM annotators) or all.",
    )

    class Meta:
        model = SentenceJudgement
        fields = ["system", "dataset", "split", "summary", "factual", "annotators"]

    def _annotators(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset  # applied in filter_queryset, so that an absent value means "human"

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super().filter_queryset(queryset)
        return filter_by_annotators(queryset, self.form.cleaned_data.get("annotators") or "human")


class ScoreFilter(df.FilterSet):
    metric = df.CharFilter()
    config_key = df.CharFilter()
    system = df.CharFilter(field_name="summary__system")
    dataset = DatasetFilter(field_name="summary__document__dataset")
    split = df.ChoiceFilter(field_name="summary__document__split", choices=SPLIT_CHOICES)
    summary = IdFilter(field_name="summary_id")

    class Meta:
        model = MetricScore
        fields = ["metric", "config_key", "system", "dataset", "split", "summary"]


class ItemFilter(df.FilterSet):
    for_experts = df.BooleanFilter()
    requested_error_type = df.CharFilter()

    class Meta:
        model = Item
        fields = ["for_experts", "requested_error_type"]


class AssignmentFilter(WorkDoneFilter):
    status = df.ChoiceFilter(choices=AssignmentStatus.choices)
    worker = IdFilter(field_name="worker_id")
    too_fast = df.BooleanFilter()

    class Meta:
        model = Assignment
        fields = ["status", "worker", "too_fast"]


class ParticipationFilter(df.FilterSet):
    is_blocked = df.BooleanFilter()

    class Meta:
        model = Participation
        fields = ["is_blocked"]


class WorkerFilter(df.FilterSet):
    is_blocked = df.BooleanFilter()
    provider = df.CharFilter()
    campaign = df.CharFilter(field_name="participations__campaign__slug", distinct=True, help_text="Campaign slug.")

    class Meta:
        model = Worker
        fields = ["is_blocked", "provider", "campaign"]


class ImportJobFilter(df.FilterSet):
    status = df.ChoiceFilter(choices=ImportStatus.choices)
    campaign = df.CharFilter(field_name="campaign_slug")

    class Meta:
        model = ImportJob
        fields = ["status", "campaign"]
