"""Participations and workers, with the block request."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.models import Participation, Worker


class ParticipationSerializer(serializers.ModelSerializer):
    """A worker's quality figures and standing in one campaign (admins)."""

    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    trap_score = serializers.FloatField(read_only=True, allow_null=True)
    bonus_total = serializers.DecimalField(max_digits=10, decimal_places=2, read_only=True)
    reliability = serializers.SerializerMethodField(
        help_text="Label reliability over the campaign's judgements: n, majority, dawid_skene, mace, glad (factual labels), "
        "<method>_categories and glad_ability (GLAD's alpha); null without sentences judged by two workers or more."
    )
    fast_worker = serializers.BooleanField(source="is_fast_worker", read_only=True)

    class Meta:
        model = Participation
        fields = [
            "id", "worker", "campaign", "tutorial_done", "qualification_status", "qualification_attempts",
            "qualification_score", "is_blocked", "blocked_reason", "blocked_at", "trap_total", "trap_correct", "trap_score",
            "entity_checks", "entity_failures", "items_claimed", "items_submitted", "too_fast_items", "fast_worker", "bonus_items", "bonus_total",
            "reliability", "label_ability", "label_reliability", "pay_held", "pay_held_reason", "created_at",
        ]
        # From the campaign's label model at its last refit (GLAD: ability alpha; else the reliability); a hold
        # of pay is decided by the pay rules and lifted by an admin's release.
        read_only_fields = ["label_ability", "label_reliability", "pay_held", "pay_held_reason", "items_claimed"]

    @extend_schema_field(serializers.DictField(child=serializers.FloatField(allow_null=True), allow_null=True))
    def get_reliability(self, participation: Participation) -> dict | None:
        table = self.context.get("reliability")
        if table is None:  # not computed for this view (e.g. a worker's detail across campaigns)
            return None
        return table.get(participation.worker_id)


class WorkerSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    bonus_total = serializers.DecimalField(max_digits=10, decimal_places=2, read_only=True)

    class Meta:
        model = Worker
        fields = ["id", "username", "provider", "external_id", "is_blocked", "blocked_reason", "bonus_total", "created_at"]


class WorkerDetailSerializer(WorkerSerializer):
    participations = serializers.SerializerMethodField()

    class Meta(WorkerSerializer.Meta):
        fields = [*WorkerSerializer.Meta.fields, "participations"]

    @extend_schema_field(ParticipationSerializer(many=True))
    def get_participations(self, worker: Worker) -> list[dict]:
        return ParticipationSerializer(self.context.get("participations", []), many=True).data


class BlockSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=300, required=False, allow_blank=True, default="blocked by an admin")
