"""Metric scoring jobs and the report's options."""
from __future__ import annotations

from rest_framework import serializers

from annotate.api.query_options import DatasetChoiceField


class ScoringJobCreateSerializer(serializers.Serializer):
    metric = serializers.CharField(max_length=50, help_text="Scorer name, e.g. rouge, bleu, meteor, bertscore, coco.")
    config = serializers.DictField(required=False, default=dict, help_text="Scorer configuration (see the scorer's docs).")
    summary_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, allow_empty=False, min_length=1,  # minItems in the schema
        help_text="Only these summaries of the campaign (default: all of them).",
    )
    chunk_size = serializers.IntegerField(min_value=1, max_value=10_000, default=64)


class ScoringJobSerializer(serializers.Serializer):
    """A scoring job's progress (``metrics_service.scoring.jobs.job_progress``)."""

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
    dataset = DatasetChoiceField(required=False)
    system = serializers.CharField(required=False, max_length=100, help_text="Only this system's summaries.")
    aggregation = serializers.ChoiceField(
        choices=["majority", "dawid_skene", "mace", "glad"], default="majority",
        help_text="How sentence labels become FRANK's summary scores: majority (FRANK's rule), Dawid-Skene, MACE or GLAD.",
    )
    min_label_posterior = serializers.FloatField(
        required=False, min_value=0.5, max_value=1.0,
        help_text="Leave out judged summaries with a sentence label whose posterior is below this (label confidence).",
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
    kendall = serializers.BooleanField(default=False, help_text="Kendall tau-b beside Pearson and Spearman in the correlation section.")
