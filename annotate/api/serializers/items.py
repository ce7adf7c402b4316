"""Items (HITs) and assignments."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.models import Assignment, Item
from annotate.protocols import protocol_for


class ItemSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document.external_id", read_only=True)
    live_assignments = serializers.IntegerField(read_only=True)

    class Meta:
        model = Item
        fields = ["id", "document", "summary", "requested_error_type", "for_experts", "position", "live_assignments", "created_at"]


class AssignmentSerializer(serializers.ModelSerializer):
    protocol_details = serializers.SerializerMethodField(
        help_text="What the campaign's protocol records about the assignment beside the shared fields "
        "(FRANK: the reading check's choice and whether it was right, null until answered); {} when nothing.",
    )

    class Meta:
        model = Assignment
        fields = [
            "id", "item", "worker", "status", "created_at", "expires_at", "submitted_at", "lead_time_seconds", "too_fast",
            "protocol_details", "external_assignment_id",
        ]

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_protocol_details(self, assignment: Assignment) -> dict[str, Any]:
        return protocol_for(self.context["campaign"].kind).assignment_details(assignment)
