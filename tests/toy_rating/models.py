"""A rating of a summary (the worker's answer) and a summary's gold rating."""
from __future__ import annotations

from django.db import models

from annotate.models import Assignment, Summary, Worker

LOWEST, HIGHEST = 1, 5


class Rating(models.Model):
    """One worker's rating of the summary of one assignment."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="rating")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="ratings")
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="ratings")
    score = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(score__gte=LOWEST, score__lte=HIGHEST), name="toy_rating_score_1_to_5")]


class GoldRating(models.Model):
    """The rating a summary should get (its control answer): 4-5 says it is faithful, 1-2 that it is not."""

    summary = models.OneToOneField(Summary, on_delete=models.CASCADE, related_name="gold_rating")
    score = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(score__gte=LOWEST, score__lte=HIGHEST), name="toy_gold_rating_1_to_5")]
