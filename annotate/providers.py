"""Crowd platforms a worker can arrive from (Prolific, MTurk external questions), behind one interface.

A provider recognises its URL parameters (``detect``), names the worker (``worker_identity``) and tells
where the worker goes when they are done (``completion``). Add a platform by subclassing
:class:`Provider` and listing it in ``PROVIDERS``.
"""
from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare, salted_hmac

from annotate.models import Campaign

#: Query parameter carrying the campaign's study-link token.
STUDY_TOKEN_PARAM = "study"
#: Crowd ids: Prolific ids are 24 hex digits, MTurk worker/assignment ids are short upper-case strings.
#: The bound keeps ``<provider>-<id>`` far below Django's 150-character username (no truncation, so no
#: collision between two long ids sharing a prefix); the character set keeps ids inert in pages and CSVs.
ID_MAX_LENGTH = 64
ID_PATTERN = re.compile(rf"[A-Za-z0-9_-]{{1,{ID_MAX_LENGTH}}}")


def study_token(campaign: Campaign) -> str:
    """The campaign's study-link token: an HMAC of the campaign under the site's secret key (unguessable,
    nothing to store; rotating ``DJANGO_SECRET_KEY`` rotates every link)."""
    return salted_hmac("factlab.study-link", f"{campaign.pk}:{campaign.slug}").hexdigest()[:32]


def has_study_token(request: HttpRequest, campaign: Campaign) -> bool:
    return constant_time_compare(request.GET.get(STUDY_TOKEN_PARAM, ""), study_token(campaign))


def study_links(campaign: Campaign, entry_url: str) -> dict[str, str]:
    """The URLs to paste into each platform; ``entry_url`` is the absolute ``/c/<slug>/`` URL.

    Prolific replaces the ``{{%...%}}`` placeholders; MTurk appends ``assignmentId``, ``hitId``,
    ``turkSubmitTo`` and ``workerId`` to an external question's URL itself.
    """
    base = f"{entry_url}?{STUDY_TOKEN_PARAM}={study_token(campaign)}"
    return {
        "prolific": base + "&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "mturk": base,
    }


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
class CrowdProgress:
    """What the completion step needs to know about the worker: items done (under this MTurk assignment
    for MTurk), whether they were screened out (failed qualification, blocked), and whether the campaign has
    no work left for them (``no_work``)."""

    items_done: int
    screened_out: bool
    no_work: bool = False


@dataclass(frozen=True)
class Completion:
    """Where a finished worker is sent: a link (GET) or a form posted with ``fields``; ``code`` is the code
    the worker may copy into the platform by hand (Prolific), shown as text beside the link."""

    url: str
    method: str = "get"
    fields: dict[str, str] = field(default_factory=dict)
    label: str = "Return to the platform"
    screen_out: bool = False
    code: str = ""
    platform: str = ""


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

    def completion(self, context: dict[str, str], campaign: Campaign, progress: CrowdProgress) -> Completion | None:
        """Where to send the worker now (None: not done yet, or nothing to go back to)."""
        return None


def _param(request: HttpRequest, name: str, *, required: bool = True) -> str:
    """A platform id parameter: 1 to ``ID_MAX_LENGTH`` letters, digits, ``_`` or ``-`` (refused otherwise, never cut)."""
    value = request.GET.get(name) or ""
    if not value:
        if required:
            raise ArrivalError(f"the {name} parameter is missing")
        return ""
    if len(value) > ID_MAX_LENGTH:
        raise ArrivalError(f"the {name} parameter is too long ({len(value)} characters, at most {ID_MAX_LENGTH})")
    if not ID_PATTERN.fullmatch(value):
        raise ArrivalError(f"the {name} parameter may only hold letters, digits, '_' and '-'")
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

    def completion(self, context: dict[str, str], campaign: Campaign, progress: CrowdProgress) -> Completion | None:
        # The screen-out code goes only to the screened out; the completion code only after the required
        # items, or to a worker who did some work when the campaign has none left for them (they could not
        # reach the minimum); a worker left without work before doing any gets the screen-out code.
        screen_out = progress.screened_out or (progress.no_work and progress.items_done == 0)
        if screen_out:
            code, label = campaign.prolific_screenout_code, "Return to Prolific"
        elif progress.items_done >= campaign.completion_min_items or progress.no_work:
            code, label = campaign.prolific_completion_code, "Finish and return to Prolific"
        else:
            return None
        if not code:
            return None
        return Completion(
            url=f"{self.COMPLETE_URL}?{urlencode({'cc': code})}", label=label, screen_out=screen_out, code=code, platform="Prolific",
        )


class MTurkProvider(Provider):
    name = "mturk"
    PREVIEW_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
    #: The only hosts a HIT may be submitted to (production, sandbox).
    SUBMIT_HOSTS = frozenset({"www.mturk.com", "workersandbox.mturk.com"})

    def detect(self, request: HttpRequest) -> bool:
        return "assignmentId" in request.GET or "workerId" in request.GET

    def worker_identity(self, request: HttpRequest) -> Arrival:
        assignment_id = _param(request, "assignmentId")
        if assignment_id == self.PREVIEW_ID:
            return Arrival(provider=self.name, worker_id="", preview=True, context={"hit_id": _param(request, "hitId", required=False)})
        submit_to = self.submit_origin(request.GET.get("turkSubmitTo") or "")
        return Arrival(
            provider=self.name,
            worker_id=_param(request, "workerId"),
            context={
                "assignment_id": assignment_id,
                "hit_id": _param(request, "hitId", required=False),
                "submit_to": submit_to,
            },
        )

    @classmethod
    def submit_origin(cls, value: str) -> str:
        """``https://<MTurk host>`` from a ``turkSubmitTo`` value, parsed as a URL (not compared by prefix):
        https only, host exactly one of ``SUBMIT_HOSTS``, no user info, port, query or fragment."""
        if not value:
            raise ArrivalError("the turkSubmitTo parameter is missing")
        try:
            parts = urlsplit(value)
            port = parts.port
        except ValueError:
            raise ArrivalError("the turkSubmitTo parameter is not a valid URL") from None
        if (
            parts.scheme != "https"
            or parts.hostname not in cls.SUBMIT_HOSTS
            or parts.netloc != parts.hostname  # no "user@", no port, no upper case tricks
            or port is not None
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
        ):
            raise ArrivalError("the turkSubmitTo parameter is not an MTurk address (https://www.mturk.com or https://workersandbox.mturk.com)")
        return f"https://{parts.hostname}"

    def completion(self, context: dict[str, str], campaign: Campaign, progress: CrowdProgress) -> Completion | None:
        if not context.get("submit_to") or not context.get("assignment_id"):
            return None
        # The HIT is submitted once its assignment covered its items, or earlier by a screened-out worker
        # who did some of them (the requester decides); with nothing done there is nothing to submit.
        done = progress.items_done >= campaign.mturk_items_per_assignment
        if not done and not ((progress.screened_out or progress.no_work) and progress.items_done > 0):
            return None
        submit_to = self.submit_origin(context["submit_to"])  # sessions written before this check existed
        return Completion(
            url=f"{submit_to}/mturk/externalSubmit",
            method="post",
            fields={"assignmentId": context["assignment_id"], "campaign": campaign.slug},
            label="Submit the HIT to MTurk",
            platform="MTurk",
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
    if not ID_PATTERN.fullmatch(arrival.worker_id):
        raise ArrivalError("the worker id is malformed")
    User = get_user_model()
    # Ids are at most ID_MAX_LENGTH characters, so the username is never cut (two ids never share one).
    username = f"{arrival.provider}-{arrival.worker_id}"
    for _attempt in range(2):
        try:
            with transaction.atomic():
                user = User(username=username)
                user.set_unusable_password()
                user.save()
                return Worker.objects.create(user=user, provider=arrival.provider, external_id=arrival.worker_id)
        except IntegrityError:
            # The same worker arrived twice at once (the other request created them), or a local account
            # already has this username: then the crowd user gets a distinct one.
            existing = Worker.objects.select_related("user").filter(provider=arrival.provider, external_id=arrival.worker_id).first()
            if existing is not None:
                return existing
            username = f"{arrival.provider}-{arrival.worker_id}-{secrets.token_hex(4)}"
    raise ArrivalError("the worker id could not be registered; please try again")
