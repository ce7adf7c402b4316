"""Items (HITs) and assignments."""
from __future__ import annotations

from rest_framework import serializers

from annotate.models import Assignment, Item


class ItemSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document.external_id", read_only=True)
    live_assignments = serializers.IntegerField(read_only=True)

    class Meta:
        model = Item
        fields = ["id", "document", "summary", "requested_error_type", "for_experts", "position", "live_assignments", "created_at"]


class AssignmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Assignment
        fields = [
            "id", "item", "worker", "status", "created_at", "expires_at", "submitted_at", "lead_time_seconds", "too_fast",
            "entity_correct", "external_assignment_id",
        ]
