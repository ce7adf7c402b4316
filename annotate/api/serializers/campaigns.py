"""Campaigns and their states."""
from __future__ import annotations

import copy

from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from annotate.models import Campaign
from annotate.providers import study_links
from annotate.services.campaign_settings import NON_FIELD, campaign_settings_errors

M2M_FIELDS = ("researchers", "reviewers")


class CampaignSerializer(serializers.ModelSerializer):
    researchers = serializers.SlugRelatedField(
        slug_field="username", many=True, required=False, queryset=get_user_model().objects.all(),
        help_text="Usernames of the researchers granted read/export access.",
    )
    reviewers = serializers.SlugRelatedField(
        slug_field="username", many=True, required=False, queryset=get_user_model().objects.all(),
        help_text="Usernames of the reviewers of this campaign's work (staff and the 'reviewers' group review every campaign).",
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
        from annotate.metrics_port import metrics

        names = metrics().metric_names()
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise serializers.ValidationError(f"unknown metric(s) {', '.join(unknown)}; available: {', '.join(names)}")
        return value

    def validate(self, attrs: dict) -> dict:
        # The campaign's database constraints and its kind's rules (the settings page's too), as a 400 naming the field.
        campaign = copy.copy(self.instance) if self.instance is not None else Campaign()
        for name, value in attrs.items():
            if name not in M2M_FIELDS:
                setattr(campaign, name, value)
        errors = campaign_settings_errors(campaign)
        if errors:
            raise serializers.ValidationError({
                api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD else field: messages for field, messages in errors.items()
            })
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
