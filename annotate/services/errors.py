"""Errors raised by the workflow services. Each carries the HTTP status a view should answer with."""
from __future__ import annotations


class WorkflowError(Exception):
    """A request the workflow refuses; ``message`` is shown to the person as is."""

    status_code = 400
    code = "refused"

    def __init__(self, message: str, *, field_errors: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.field_errors = field_errors or {}

    def as_dict(self) -> dict:
        data = {"error": self.code, "detail": self.message}
        if self.field_errors:
            data["fields"] = self.field_errors
        return data


class NotEligible(WorkflowError):
    """The worker may not take work in this campaign (blocked, unqualified, campaign not running...)."""

    status_code = 403
    code = "not_eligible"


class NotYourAssignment(WorkflowError):
    """No such assignment for this worker: missing and someone else's answer alike (no existence oracle)."""

    status_code = 404
    code = "not_found"


class AssignmentClosed(WorkflowError):
    """The assignment expired, was released, or was already submitted with another submission."""

    status_code = 409
    code = "assignment_closed"


class InvalidSubmission(WorkflowError):
    """The submitted answers are incomplete or malformed; nothing was stored."""

    status_code = 400
    code = "invalid_submission"


class NoWorkAvailable(WorkflowError):
    status_code = 404
    code = "no_work"
