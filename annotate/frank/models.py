"""FRANK's own record of an assignment: the worker's answer to the reading check.

The page asks "Which of the following was NOT mentioned in the article?" with the options of the assignment's
layout (``Assignment.layout["entity"]``, what the page showed); the answer is the worker's, so it lives here,
one row per answered assignment (``annotate.frank.services.check_entity_answer``).
"""
from __future__ import annotations

from django.db import models

from annotate.models import Assignment


class EntityAnswer(models.Model):
    """The worker's answer to the reading check of one assignment: the option chosen and whether it was right."""

    assignment = models.OneToOneField(Assignment, primary_key=True, on_delete=models.CASCADE, related_name="entity_answer")
    # Index into the layout's options; None for an answer recorded before the choice was kept (only its outcome was).
    choice = models.PositiveSmallIntegerField(null=True, blank=True)
    correct = models.BooleanField()

    def __str__(self) -> str:
        return f"reading check of assignment {self.assignment_id}: {'right' if self.correct else 'wrong'}"


def entity_answer(assignment: Assignment) -> EntityAnswer | None:
    """The assignment's reading-check answer, None when there is none yet. Read from the assignment when it was
    loaded with it (``FrankProtocol.assignment_relations``) or claimed just now, else one query."""
    try:
        return assignment.entity_answer
    except EntityAnswer.DoesNotExist:
        return None


def no_entity_answer_yet(assignment: Assignment) -> None:
    """Remember on a new claim that it has no answer yet, so that its first page reads that without a query
    (what ``select_related`` records for an assignment loaded without one)."""
    EntityAnswer.assignment.field.remote_field.set_cached_value(assignment, None)
