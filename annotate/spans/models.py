"""The span protocol's tables: answers (a worker's, an imported annotator's or a model's), gold spans, and the
word scores a detector gave a summary.

Spans are stored as ``[first_word, end_word, type]`` lists on the words of ``annotate.spans.words`` (end
exclusive), already snapped and merged; an empty list is the explicit "no error" answer.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models import Assignment, Summary, Worker


class AnswerSource(models.TextChoices):
    CROWD = "crowd", "Crowd worker"
    IMPORTED = "imported", "Imported annotation"
    MODEL = "model", "Model annotator"


class SpanAnswer(models.Model):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="span_answers")
    source = models.CharField(max_length=10, choices=AnswerSource.choices)
    #: The crowd assignment it answers (crowd answers only).
    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="span_answer")
    #: The crowd worker, or the model annotator's pseudo-worker (provider "llm").
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.CASCADE, related_name="span_answers")
    #: The release's annotator id of an imported answer ("" for an aggregated release: one answer per summary).
    annotator = models.CharField(max_length=200, blank=True)
    spans = models.JSONField(default=list, blank=True)
    n_words = models.PositiveIntegerField()
    #: Optional FRANK category per span, by span position (workers may add one).
    frank_categories = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(source="crowd", assignment__isnull=False, worker__isnull=False)
                | models.Q(source="model", assignment__isnull=True, worker__isnull=False)
                | models.Q(source="imported", assignment__isnull=True, worker__isnull=True),
                name="span_answer_source_fits_its_links",
            ),
            models.UniqueConstraint(fields=["summary", "worker"], condition=models.Q(source="model"), name="span_answer_once_per_model"),
            models.UniqueConstraint(fields=["summary", "annotator"], condition=models.Q(source="imported"),
                                    name="span_answer_once_per_imported_annotator"),
        ]
        indexes = [models.Index(fields=["summary", "source"])]


class GoldOrigin(models.TextChoices):
    IMPORTED = "imported", "From imported annotations"
    ADMIN = "admin", "Set by an admin"


class GoldSpans(models.Model):
    """The expected spans of a control summary (never sent to a worker's browser)."""

    summary = models.OneToOneField(Summary, on_delete=models.CASCADE, related_name="gold_spans")
    spans = models.JSONField(default=list, blank=True)
    n_words = models.PositiveIntegerField()
    origin = models.CharField(max_length=10, choices=GoldOrigin.choices)
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)


class WordScores(models.Model):
    """One detector's error score per word of a summary (higher = more likely wrong; null: the word is not scored)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="span_word_scores")
    detector = models.CharField(max_length=100)
    scores = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "detector"], name="word_scores_once_per_detector")]
