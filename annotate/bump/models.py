"""BUMP's own rows: a worker's edit of a reference summary (or N/A), with its hints and its expert review, and
the checkpoint code an assignment's instructions show.

The table keeps its first name (``annotate_edit``): the model moved into the BUMP app without moving data.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models import Assignment, ReviewStatus, Summary, Worker


class Checkpoint(models.Model):
    """The code shown in the middle of an assignment's instructions, which the worker copies into the submission:
    drawn when the item is claimed (``BumpProtocol.assignment_claimed``), compared when it is submitted."""

    assignment = models.OneToOneField(Assignment, primary_key=True, on_delete=models.CASCADE, related_name="checkpoint")
    code = models.CharField(max_length=16)

    class Meta:
        constraints = [models.CheckConstraint(condition=~models.Q(code=""), name="bump_checkpoint_code_not_empty")]

    def __str__(self) -> str:
        return f"checkpoint of assignment {self.assignment_id}"


def checkpoint_code(assignment: Assignment) -> str:
    """The assignment's checkpoint code ("" when it has none, which no typed code matches), read from the
    assignment when it was loaded or claimed with it (``BumpProtocol.assignment_relations``), else one query."""
    try:
        return assignment.checkpoint.code
    except Checkpoint.DoesNotExist:
        return ""


class Edit(models.Model):
    """A BUMP edit: the worker's minimal change of a reference summary (or N/A), with hints and review."""

    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="edit")
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="edits")
    source_summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="received_edits")
    edited_summary = models.OneToOneField(Summary, null=True, blank=True, on_delete=models.SET_NULL, related_name="edit_record")
    requested_error_type = models.CharField(max_length=30, blank=True, help_text="Empty for free-style edits.")
    is_not_applicable = models.BooleanField(default=False, help_text="The worker said the type cannot be introduced (N/A).")
    text = models.TextField(blank=True)
    word_distance = models.PositiveIntegerField(default=0)
    inserted_words = models.JSONField(default=list, blank=True)
    hint_inserted_in_article = models.BooleanField(null=True, blank=True)
    hint_likely_kind = models.CharField(max_length=10, blank=True, help_text="'intrinsic' or 'extrinsic'.")
    hint_disagrees = models.BooleanField(default=False)
    review_status = models.CharField(max_length=10, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)
    corrected_error_type = models.CharField(max_length=30, blank=True)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    review_comment = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotate_edit"
