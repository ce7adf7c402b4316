"""Per-participation counts of checked answers (gold and trap answers, right and wrong, per class and stratum),
kept by the submission that adds to them, so that the balanced score and the pay rules read one row instead
of scoring the worker's whole history at every submission (``annotate.services.check_counts``)."""
from __future__ import annotations

from django.db import models
from django.db.models import F, Func, Q, Value
from django.db.models.lookups import Exact

from .workers import Participation


class JsonType(Func):
    """The JSON type of a value, as the database names it: PostgreSQL's ``jsonb_typeof``, SQLite's ``json_type``
    (the demo's database); both call an array "array"."""

    function = "jsonb_typeof"
    output_field = models.CharField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sql(compiler, connection, function="json_type", **extra_context)


def is_json_array(field: str) -> Exact:
    return Exact(JsonType(F(field)), Value("array"))


class CheckedAnswerCounts(models.Model):
    """What a worker's checked answers in a campaign add up to, as of ``items_counted`` submissions under the
    campaign's ``checks_version``.

    ``cells``: one entry per (class, right or wrong, source, public, built from the page, stratum, weighted):
    ``[expected_factual, correct, source, public, from_page, stratum, weighted, count, weight]``, what
    :func:`annotate.services.quality.balanced_score` sums. ``recent``: the checked-answer groups the window of
    recent work (:func:`annotate.services.quality.recent_checks`) takes, whole and with their submission time:
    ``[expected_factual, correct, weight, source, count, from_page, public, stratum, submitted_at]``.
    """

    participation = models.OneToOneField(Participation, primary_key=True, on_delete=models.CASCADE, related_name="checked_counts")
    checks_version = models.PositiveIntegerField()
    items_counted = models.PositiveIntegerField()
    cells = models.JSONField(default=list)
    recent = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=is_json_array("cells"), name="checked_counts_cells_array"),
            models.CheckConstraint(condition=is_json_array("recent"), name="checked_counts_recent_array"),
            models.CheckConstraint(condition=Q(checks_version__gte=0) & Q(items_counted__gte=0), name="checked_counts_non_negative"),
        ]

    def __str__(self) -> str:
        return f"checked answers of participation {self.participation_id} ({self.items_counted} items)"
