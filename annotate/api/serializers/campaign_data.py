"""The campaign's documents, summaries, scores and judgements; gold fields only in the admin variants. The worker field
here (pseudonyms unless an admin asks) serves protocols' lists of their own rows too (BUMP's edits)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import Document, MetricScore, SentenceJudgement, Summary, Trap


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "dataset", "split", "text", "sentences", "url", "entities", "metadata", "created_at"]


class TrapSerializer(serializers.ModelSerializer):
    class Meta:
        model = Trap
        fields = ["id", "code", "text", "expected_factual", "expected_category", "source", "weight"]


class AdminDocumentSerializer(DocumentSerializer):
    """Admins also see the gold: the negative entity and the trap sentences with their labels."""

    traps = TrapSerializer(many=True, read_only=True)

    class Meta(DocumentSerializer.Meta):
        fields = [*DocumentSerializer.Meta.fields, "negative_entity", "traps"]


class ScoreSerializer(serializers.ModelSerializer):
    class Meta:
        model = MetricScore
        fields = ["id", "summary", "metric", "config_key", "value", "source", "job_id", "created_at", "updated_at"]


class NestedScoreSerializer(serializers.ModelSerializer):
    class Meta:
        model = MetricScore
        fields = ["metric", "config_key", "value", "source"]


class SummarySerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document.external_id", read_only=True)
    dataset = serializers.CharField(source="document.dataset", read_only=True)
    split = serializers.CharField(source="document.split", read_only=True)
    scores = NestedScoreSerializer(source="metric_scores", many=True, read_only=True)

    class Meta:
        model = Summary
        fields = [
            "id", "document", "dataset", "split", "system", "text", "sentences", "is_reference", "edited_from",
            "requested_error_type", "corrected_error_type", "external_id", "human_scores", "scores", "created_at",
        ]


class _PseudonymousWorker(serializers.Field):
    """The worker as the caller may see them: a per-campaign pseudonym, or the real id for admins who ask."""

    def to_representation(self, worker_id):
        if worker_id is None:
            return None
        context = self.context
        if context.get("reveal_workers"):
            return context["real_worker_names"].get(worker_id, str(worker_id))
        return worker_pseudonym(context["campaign"].pk, worker_id)


@extend_schema_field(serializers.CharField(allow_null=True))
class PseudonymousWorkerField(_PseudonymousWorker):
    pass


class JudgementSerializer(serializers.ModelSerializer):
    worker = PseudonymousWorkerField(source="worker_id", read_only=True)

    class Meta:
        model = SentenceJudgement
        fields = ["id", "summary", "sentence_index", "worker", "factual", "categories", "lead_time_seconds", "source", "created_at"]
