"""Crowd platforms a worker can arrive from (Prolific, MTurk external questions), behind one interface.

A provider recognises its URL parameters (``detect``), names the worker (``worker_identity``) and tells
where the worker goes when they are done (``completion``). Add a platform by subclassing
:class:`Provider` and listing it in ``PROVIDERS``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.http import HttpRequest

from annotate.models import Campaign


@dataclass(frozen=True)
class Arrival:
    """What a crowd platform told us about a worker arriving on a campaign page."""

    provider: str
    worker_id: str
    #: Platform details kept in the session (study/session ids, MTurk assignment and submit URL).
    context: dict[str, str] = field(default_factory=dict)
    #: True for an MTurk preview: show the task read-only and create nobody.
    preview: bool = False

    @property
    def external_assignment_id(self) -> str:
        return self.context.get("assignment_id") or self.context.get("session_id") or ""


@dataclass(frozen=True)
class Completion:
    """Where a finished worker is sent: a link (GET) or a form posted with ``fields``."""

    url: str
    method: str = "get"
    fields: dict[str, str] = field(default_factory=dict)
    label: str = "Return to the platform"


class ArrivalError(ValueError):
    """The platform parameters are present but unusable; the message names the parameter."""


class Provider:
    name: str = ""

    def detect(self, request: HttpRequest) -> bool:
        """True when the request carries this platform's parameters."""
        raise NotImplementedError

    def worker_identity(self, request: HttpRequest) -> Arrival:
        """The arriving worker; raises ``ArrivalError`` naming a missing or malformed parameter."""
        raise NotImplementedError

    def completion(self, context: dict[str, str], campaign: Campaign) -> Completion | None:
        """Where to send the worker once they are done (None: nothing to go back to)."""
        return None


def _param(request: HttpRequest, name: str, *, required: bool = True, max_length: int = 200) -> str:
    value = (request.GET.get(name) or "").strip()
    if required and not value:
        raise ArrivalError(f"the {name} parameter is missing")
    if len(value) > max_length or any(ch.isspace() for ch in value):
        raise ArrivalError(f"the {name} parameter is malformed")
    return value


class ProlificProvider(Provider):
    name = "prolific"
    COMPLETE_URL = "https://app.prolific.com/submissions/complete"

    def detect(self, request: HttpRequest) -> bool:
        return "PROLIFIC_PID" in request.GET

    def worker_identity(self, request: HttpRequest) -> Arrival:
        return Arrival(
            provider=self.name,
            worker_id=_param(request, "PROLIFIC_PID"),
            context={
                "study_id": _param(request, "STUDY_ID", required=False),
                "session_id": _param(request, "SESSION_ID", required=False),
            },
        )

    def completion(self, context: dict[str, str], campaign: Campaign) -> Completion | None:
        if not campaign.prolific_completion_code:
            return None
        return Completion(
            url=f"{self.COMPLETE_URL}?{urlencode({'cc': campaign.prolific_completion_code})}",
            label="Finish and return to Prolific",
        )


class MTurkProvider(Provider):
    name = "mturk"
    PREVIEW_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
    SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")

    def detect(self, request: HttpRequest) -> bool:
        return "assignmentId" in request.GET or "workerId" in request.GET

    def worker_identity(self, request: HttpRequest) -> Arrival:
        assignment_id = _param(request, "assignmentId")
        if assignment_id == self.PREVIEW_ID:
            return Arrival(provider=self.name, worker_id="", preview=True, context={"hit_id": _param(request, "hitId", required=False)})
        submit_to = (request.GET.get("turkSubmitTo") or "").strip().rstrip("/")
        if not submit_to:
            raise ArrivalError("the turkSubmitTo parameter is missing")
        if not submit_to.startswith(self.SUBMIT_HOSTS):
            raise ArrivalError("the turkSubmitTo parameter is not an MTurk address")
        return Arrival(
            provider=self.name,
            worker_id=_param(request, "workerId"),
            context={
                "assignment_id": assignment_id,
                "hit_id": _param(request, "hitId", required=False),
                "submit_to": submit_to,
            },
        )

    def completion(self, context: dict[str, str], campaign: Campaign) -> Completion | None:
        if not context.get("submit_to") or not context.get("assignment_id"):
            return None
        return Completion(
            url=f"{context['submit_to']}/mturk/externalSubmit",
            method="post",
            fields={"assignmentId": context["assignment_id"], "campaign": campaign.slug},
            label="Submit the HIT to MTurk",
        )


PROVIDERS: dict[str, Provider] = {p.name: p for p in (ProlificProvider(), MTurkProvider())}


def detect_provider(request: HttpRequest) -> Provider | None:
    """The platform whose parameters the request carries, if any."""
    return next((p for p in PROVIDERS.values() if p.detect(request)), None)


def provider_named(name: str) -> Provider | None:
    return PROVIDERS.get(name)


def worker_for_arrival(arrival: Arrival):
    """Find or create the worker (and their Django user, with an unusable password) a platform names."""
    from django.contrib.auth import get_user_model
    from django.db import IntegrityError, transaction

    from annotate.models import Worker

    existing = Worker.objects.select_related("user").filter(provider=arrival.provider, external_id=arrival.worker_id).first()
    if existing is not None:
        return existing
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(username=f"{arrival.provider}-{arrival.worker_id}"[:150])
            user.set_unusable_password()
            user.save()
            return Worker.objects.create(user=user, provider=arrival.provider, external_id=arrival.worker_id)
    except IntegrityError:
        # The same worker arrived twice at once: the other request created them.
        return Worker.objects.select_related("user").get(provider=arrival.provider, external_id=arrival.worker_id)
