"""Serializers: plain field lists; gold fields (negative entity, trap labels) only in the admin variants."""
from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.frank.exporter import FILES as FRANK_FILES
from annotate.exporters.formats import EXPORT_FORMATS
from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.exporters.tabular import ROW_KINDS, WORKER_STATUSES
from annotate.providers import study_links
from annotate.models import (
    Assignment,
    Campaign,
    CampaignKind,
    Dataset,
    Document,
    Edit,
    ImportJob,
    Item,
    MetricScore,
    Participation,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)



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
        completion = attrs.get("prolific_completion_code", getattr(self.instance, "prolific_completion_code", ""))
        screenout = attrs.get("prolific_screenout_code", getattr(self.instance, "prolific_screenout_code", ""))
        if completion and screenout and completion == screenout:
            raise serializers.ValidationError({"prolific_screenout_code": "must differ from prolific_completion_code"})
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


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["id", "external_id", "dataset", "split", "text", "sentences", "url", "entities", "metadata", "created_at"]


class TrapSerializer(serializers.ModelSerializer):
    class Meta:
        model = Trap
        fields = ["id", "code", "text", "expected_factual", "expected_category"]


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


class EditSerializer(serializers.ModelSerializer):
    worker = PseudonymousWorkerField(source="worker_id", read_only=True)

    class Meta:
        model = Edit
        fields = [
            "id", "source_summary", "edited_summary", "worker", "requested_error_type", "is_not_applicable", "text",
            "word_distance", "inserted_words", "hint_inserted_in_article", "hint_likely_kind", "hint_disagrees",
            "review_status", "corrected_error_type", "review_comment", "reviewed_at", "created_at",
        ]


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


class ParticipationSerializer(serializers.ModelSerializer):
    """A worker's quality figures and standing in one campaign (admins)."""

    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    trap_score = serializers.FloatField(read_only=True, allow_null=True)
    bonus_total = serializers.DecimalField(max_digits=10, decimal_places=2, read_only=True)
    reliability = serializers.SerializerMethodField(
        help_text="Label reliability over the campaign's judgements: n, majority, dawid_skene, mace (factual labels) and "
        "<method>_categories; null without sentences judged by two workers or more."
    )
    fast_worker = serializers.BooleanField(source="is_fast_worker", read_only=True)

    class Meta:
        model = Participation
        fields = [
            "id", "worker", "campaign", "tutorial_done", "qualification_status", "qualification_attempts",
            "qualification_score", "is_blocked", "blocked_reason", "blocked_at", "trap_total", "trap_correct", "trap_score",
            "entity_checks", "entity_failures", "items_submitted", "too_fast_items", "fast_worker", "bonus_items", "bonus_total",
            "reliability", "created_at",
        ]

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


class ScoringJobCreateSerializer(serializers.Serializer):
    metric = serializers.CharField(max_length=50, help_text="Scorer name, e.g. rouge, bleu, meteor, bertscore, coco.")
    config = serializers.DictField(required=False, default=dict, help_text="Scorer configuration (see the scorer's docs).")
    summary_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, allow_empty=False,
        help_text="Only these summaries of the campaign (default: all of them).",
    )
    chunk_size = serializers.IntegerField(min_value=1, max_value=10_000, default=64)


class ScoringJobSerializer(serializers.Serializer):
    """A scoring job's progress (``metrics_service.services.job_progress``)."""

    id = serializers.IntegerField()
    metric = serializers.CharField()
    config_key = serializers.CharField()
    status = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    failed = serializers.IntegerField()
    skipped = serializers.IntegerField()
    percent = serializers.FloatField()
    message = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_blank=True)
    config = serializers.DictField(help_text="The scorer configuration (model, masks, ...).")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ReportQuerySerializer(serializers.Serializer):
    """The report's options: the same as ``manage.py report`` (``--split``, ``--dataset``, ``--system``, ``--no-partial``, ``--aggregation``)."""

    split = serializers.ChoiceField(choices=["all", "valid", "test"], default="all")
    dataset = serializers.ChoiceField(choices=Dataset.values, required=False)
    system = serializers.CharField(required=False, max_length=100, help_text="Only this system's summaries.")
    aggregation = serializers.ChoiceField(
        choices=["majority", "dawid_skene", "mace"], default="majority",
        help_text="How sentence labels become FRANK's summary scores: majority (FRANK's rule), Dawid-Skene or MACE.",
    )
    partial = serializers.BooleanField(default=True, help_text="Partial correlations controlling for system x dataset (FRANK).")
    spearman = serializers.ChoiceField(
        choices=["residuals", "ranks"], default="residuals",
        help_text="Partial Spearman: of the residuals of the raw values (FRANK, default) or rank-then-residualise.",
    )
    auc_references = serializers.ChoiceField(
        choices=["per_pair", "once"], default="per_pair",
        help_text="BUMP ROC AUC positives: each pair's reference (BUMP, default) or each reference once.",
    )
    include_incomplete = serializers.BooleanField(
        default=False, help_text="Let metrics whose scoring job runs or whose coverage is partial enter the comparisons.",
    )


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=EXPORT_FORMATS, default="jsonl")
    file = serializers.ChoiceField(
        choices=["zip", *FRANK_FILES], default="zip",
        help_text="frank only: the whole zip (default) or one of its JSON files: summaries, sentences, articles.",
    )
    rows = serializers.CharField(
        required=False, help_text=f"jsonl/csv/parquet only: comma-separated row kinds among {', '.join(ROW_KINDS)} (default all)."
    )
    split = serializers.ChoiceField(choices=["valid", "test"], required=False)
    dataset = serializers.ChoiceField(choices=Dataset.values, required=False)
    system = serializers.CharField(required=False, max_length=100)
    worker_status = serializers.ChoiceField(choices=WORKER_STATUSES, default="any")
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    reveal_workers = serializers.BooleanField(default=False, help_text="Admins only: real worker ids instead of pseudonyms.")
    license = serializers.RegexField(
        r"^[A-Za-z0-9.+-]{1,64}$", required=False,
        help_text="parquet only: license id for the dataset card (default: the campaign's license, else unknown).",
    )

    def validate_rows(self, value: str) -> list[str]:
        kinds = [v.strip() for v in value.split(",") if v.strip()]
        unknown = [k for k in kinds if k not in ROW_KINDS]
        if unknown or not kinds:
            raise serializers.ValidationError(f"expected a comma-separated list of {', '.join(ROW_KINDS)}")
        return kinds


class ImportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id", "kind", "format", "campaign_slug", "campaign_kind", "options", "original_name", "size", "status", "progress",
            "report", "error", "created_at", "started_at", "finished_at",
        ]

    @extend_schema_field(serializers.DictField())
    def get_progress(self, job: ImportJob) -> dict:
        from .services import import_progress

        return import_progress(job)


class ImportJobCreateSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="frank: a .zip of FRANK's folder or of a FactLab FRANK export; bump: .json; qags, jsonl: .jsonl; scores csv: .csv."
    )
    format = serializers.ChoiceField(choices=["frank", "bump", "qags", "jsonl", "csv"], help_text="csv: metric scores only (kind=scores).")
    kind = serializers.ChoiceField(choices=["dataset", "scores"], default="dataset", help_text="scores: metric scores of an existing campaign.")
    dataset = serializers.ChoiceField(
        choices=Dataset.values, required=False, help_text="qags only: dataset of records that do not name one (default: from the file name, else other)."
    )
    campaign = serializers.SlugField(max_length=80, help_text="Campaign slug (created by dataset imports when missing).")
    campaign_kind = serializers.ChoiceField(choices=CampaignKind.choices, required=False, allow_blank=True)


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(required=False, max_length=150)
    password = serializers.CharField(required=False, max_length=128, style={"input_type": "password"}, trim_whitespace=False)

    def validate(self, attrs):
        user = self.context["request"].user
        if attrs.get("username") or attrs.get("password"):
            found = authenticate(self.context["request"], username=attrs.get("username", ""), password=attrs.get("password", ""))
            if found is None:
                raise serializers.ValidationError("unknown username or wrong password", code="authorization")
            attrs["user"] = found
        elif user and user.is_authenticated:
            attrs["user"] = user
        else:
            raise serializers.ValidationError("give username and password, or call this with a logged-in session", code="authorization")
        return attrs


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()
    role = serializers.CharField()


class ResearcherCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    campaigns = serializers.ListField(
        child=serializers.SlugField(max_length=80), required=False, default=list, help_text="Slugs of campaigns to grant."
    )


class InvitationSerializer(serializers.Serializer):
    uid = serializers.CharField()
    token = serializers.CharField()
    url = serializers.CharField(help_text="The one-time page where the invitee sets a password.")
    expires_in_seconds = serializers.IntegerField()


class ResearcherSerializer(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.CharField(allow_blank=True)
    is_active = serializers.BooleanField(help_text="False until the invitation is accepted.")
    campaigns = serializers.ListField(child=serializers.CharField())
    invitation = InvitationSerializer(required=False, help_text="Only in the answer that creates the researcher.")


class InvitationAcceptSerializer(serializers.Serializer):
    uid = serializers.CharField(max_length=64)
    token = serializers.CharField(max_length=128)
    password = serializers.CharField(max_length=128, style={"input_type": "password"}, trim_whitespace=False)
