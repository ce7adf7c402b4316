"""Campaigns and their states."""
from __future__ import annotations

import copy

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from annotate.models import Campaign
from annotate.protocols import PROTOCOLS
from annotate.services.campaigns import campaign_setting_problems
from annotate.providers import study_links

#: The field an API client is told about when a campaign constraint refuses its values.
CONSTRAINT_FIELDS = {
    "completion_code_differs_from_screen_out_code": "prolific_screenout_code",
    "campaign_min_workers_le_max": "min_workers",
}


class CampaignSerializer(serializers.ModelSerializer):
    researchers = serializers.SlugRelatedField(
        slug_field="username", many=True, required=False, queryset=get_user_model().objects.all(),
        help_text="Usernames of the researchers granted read/export access.",
    )
    document_count = serializers.SerializerMethodField()
    study_links = serializers.SerializerMethodField(help_text="URLs to paste into Prolific and MTurk (they carry the campaign's access token).")
    auto_score_metrics = serializers.ListField(
        child=serializers.CharField(max_length=50), required=False, help_text="Metrics computed for new summaries, e.g. [\"rouge\"]."
    )

    class Meta:
        model = Campaign
        # training_material holds qualification keys: imported with manage.py import_training_material only.
        exclude = ["exclusive_with", "training_material"]
        read_only_fields = ["status", "created_at", "updated_at", "started_at", "finished_at"]

    def validate_auto_score_metrics(self, value: list[str]) -> list[str]:
        from metrics_service.scorers import REGISTRY

        unknown = sorted(set(value) - set(REGISTRY))
        if unknown:
            raise serializers.ValidationError(f"unknown metric(s) {', '.join(unknown)}; available: {', '.join(sorted(REGISTRY))}")
        return value

    def validate(self, attrs: dict) -> dict:
        # The campaign's database constraints, reported as a 400 naming the field before saving.
        campaign = copy.copy(self.instance) if self.instance is not None else Campaign()
        for name, value in attrs.items():
            if name != "researchers":
                setattr(campaign, name, value)
        errors: dict[str, list[str]] = {}
        for constraint in Campaign._meta.constraints:
            try:
                constraint.validate(Campaign, campaign)
            except DjangoValidationError as exc:
                field = CONSTRAINT_FIELDS.get(constraint.name, api_settings.NON_FIELD_ERRORS_KEY)
                errors.setdefault(field, []).extend(exc.messages)
        if campaign.kind in PROTOCOLS:  # an unknown kind is the kind field's own error
            for field, message in campaign_setting_problems(campaign.kind, vars(campaign)).items():
                errors.setdefault(field, []).append(message)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    @extend_schema_field(serializers.DictField(child=serializers.CharField()))
    def get_study_links(self, campaign: Campaign) -> dict[str, str]:
        path = reverse("annotate:campaign", args=[campaign.slug])
        request = self.context.get("request")
        return study_links(campaign, request.build_absolute_uri(path) if request is not None else path)

    @extend_schema_field(serializers.IntegerField())
    def get_document_count(self, campaign: Campaign) -> int:
        annotated = getattr(campaign, "n_documents", None)  # list views annotate it; one query otherwise
        return annotated if annotated is not None else campaign.documents.count()


class CampaignStatusSerializer(serializers.Serializer):
    slug = serializers.CharField()
    status = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
