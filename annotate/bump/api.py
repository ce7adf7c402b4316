"""BUMP's edits in the REST API: ``GET /api/campaigns/<slug>/edits/`` (researchers and admins), with their hints
and review, workers as per-campaign pseudonyms unless an admin asks. Routed by :mod:`annotate.bump.api_urls`
(``BumpProtocol.api_urls_module``) among the shared campaign resources; any campaign lists its edits (none but
a BUMP campaign's)."""
from __future__ import annotations

import django_filters as df
from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from annotate.api.filters import SPLIT_CHOICES, WorkDoneFilter, annotate_worker_blocked
from annotate.api.query_options import DatasetFilter
from annotate.api.serializers.campaign_data import PseudonymousWorkerField
from annotate.api.views.base import REVEAL, SLUG, WorkerRowsList
from annotate.bump.models import Edit
from annotate.models import ReviewStatus


class EditSerializer(serializers.ModelSerializer):
    worker = PseudonymousWorkerField(source="worker_id", read_only=True)

    class Meta:
        model = Edit
        fields = [
            "id", "source_summary", "edited_summary", "worker", "requested_error_type", "is_not_applicable", "text",
            "word_distance", "inserted_words", "hint_inserted_in_article", "hint_likely_kind", "hint_disagrees",
            "review_status", "corrected_error_type", "review_comment", "reviewed_at", "created_at",
        ]


class EditFilter(WorkDoneFilter):
    system = df.CharFilter(field_name="source_summary__system")
    dataset = DatasetFilter(field_name="source_summary__document__dataset")
    split = df.ChoiceFilter(field_name="source_summary__document__split", choices=SPLIT_CHOICES)
    review_status = df.ChoiceFilter(choices=ReviewStatus.choices)
    requested_error_type = df.CharFilter()

    class Meta:
        model = Edit
        fields = ["system", "dataset", "split", "review_status", "requested_error_type"]


@extend_schema(parameters=[SLUG, REVEAL])
class EditList(WorkerRowsList):
    """BUMP edits of the campaign, with hints and review."""

    serializer_class = EditSerializer
    filterset_class = EditFilter

    def get_queryset(self):
        if self.fake():
            return Edit.objects.none()
        queryset = Edit.objects.filter(source_summary__document__campaign=self.campaign)
        return annotate_worker_blocked(queryset, self.campaign)
