"""FRANK's transactional services beside the submission: the reading check."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from annotate.frank.models import EntityAnswer, entity_answer
from annotate.models import AssignmentStatus, Worker
from annotate.rows import insert_row, update_row
from annotate.services.errors import AssignmentClosed, InvalidSubmission
from annotate.services.participation import (
    block_participation,
    reading_check_block_reason,
    require_eligible,
)


def record_entity_answer(assignment, choice: Any, *, field: str = "entity_choice") -> bool:
    """Store the worker's first answer to the assignment's entity question and say whether it is right
    (:func:`entity_answer_row`, inserted)."""
    answer = entity_answer_row(assignment, choice, field=field)
    insert_row(answer)
    return answer.correct


def entity_answer_row(assignment, choice: Any, *, field: str = "entity_choice") -> EntityAnswer:
    """The worker's answer to the assignment's entity question, marked right or wrong, not stored yet (a
    submission inserts it with its other answers).

    One rule wherever the answer arrives (with the submission, or on its own before it): the choice must
    name one of the options shown; the caller adds the answer to the participation's counts. The right
    option is never returned to the worker. ``field``: the request's name for the choice, for the error."""
    entity = assignment.layout["entity"]
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(entity["options"]):
        raise InvalidSubmission(f"{field}: choose one of the {len(entity['options'])} options of the reading check "
                                f"(0 to {len(entity['options']) - 1})")
    return EntityAnswer(assignment=assignment, choice=choice, correct=choice == entity["answer"])


def check_entity_answer(assignment_id: int, worker: Worker, choice: Any, campaign=None) -> dict[str, Any]:
    """Check the worker's answer to "Which of the following was NOT mentioned in the article?" on its own,
    before the submission (the task page sends it with the submission instead: :func:`record_entity_answer`).

    Prolific's attention-check policy: a check answerable with the article on screen (the page shows it), and a
    participant is removed only after failing two. So a first wrong answer is recorded and the worker goes on
    with the item; the second wrong answer in the campaign blocks them (``reading_check_block_reason``; their
    unfinished assignment is released; items already submitted keep their pay). Answering twice returns the
    first outcome. Returns ``{"correct": bool, "blocked_reason": str | None, "failures": int}``; the right
    option is never returned.
    """
    from annotate.services.assignments import lock_worker_assignment

    with transaction.atomic():
        participation, assignment = lock_worker_assignment(assignment_id, worker, campaign)
        if assignment.layout.get("entity") is None:
            return {"correct": True, "blocked_reason": None}
        answered = entity_answer(assignment)
        if answered is not None:
            return {"correct": answered.correct, "blocked_reason": participation.blocked_reason or None,
                    "failures": participation.entity_failures}
        if assignment.status != AssignmentStatus.ACTIVE or assignment.expires_at < timezone.now():
            raise AssignmentClosed("This task is closed; reload the page to get a new one.")
        require_eligible(participation)
        correct = record_entity_answer(assignment, choice, field="choice")
        # The participation is locked (lock_worker_assignment): its counts as read are current.
        participation.entity_checks += 1
        participation.entity_failures += 0 if correct else 1
        update_row(participation, ["entity_checks", "entity_failures"])
        reason = None if correct else reading_check_block_reason(participation, assignment.item.campaign)
        if reason is not None:
            block_participation(participation, reason)
    return {"correct": correct, "blocked_reason": reason, "failures": participation.entity_failures}
