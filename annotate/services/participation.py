"""A worker's standing in a campaign: eligibility, blocking, qualification bookkeeping, quality rules."""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import DecimalField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignStatus,
    Participation,
    QualificationAttempt,
    QualificationStatus,
    Worker,
)
from annotate.protocols import protocol_for
from annotate.ratelimits import network_key
from annotate.rows import CompiledQueries, CompiledQuery

from .errors import NotEligible
from .ledger import owed_in_campaign
from .live_counts import close_assignments

_PARTICIPATION = CompiledQuery(
    lambda worker_id, campaign_id: Participation.objects.filter(worker_id=worker_id, campaign_id=campaign_id)[:1],
    worker_id=int, campaign_id=int,
)


# A task page shows what the ledger owes the worker in the campaign: read with the participation, in its query.
_OWED_IN_CAMPAIGN = Subquery(
    owed_in_campaign(OuterRef("worker_id"), OuterRef("campaign_id"))[:1], output_field=DecimalField(max_digits=12, decimal_places=2),
)
_OWED_TOTAL = Coalesce(_OWED_IN_CAMPAIGN, Decimal("0.00"), output_field=DecimalField(max_digits=12, decimal_places=2))
_PARTICIPATION_WITH_OWED = CompiledQuery(
    lambda worker_id, campaign_id: Participation.objects.filter(worker_id=worker_id, campaign_id=campaign_id).annotate(owed_total=_OWED_TOTAL)[:1],
    worker_id=int, campaign_id=int,
)


# A task page's campaign, found by its slug among the protocol's kinds, with the worker's participation and what
# the ledger owes: one query (compiled once per set of kinds) where the campaign and the participation were two.
_PAGE_PARTICIPATION = CompiledQueries()


def task_page_participation(worker: Worker, slug: str, kinds: Sequence[str]) -> Participation | None:
    """The worker's participation in the campaign ``slug`` of one of ``kinds``, with its campaign and
    ``owed_total`` (as :func:`get_participation` with ``with_owed``); None when there is none yet (or no such
    campaign: the caller reads the campaign alone then, and creates the participation)."""
    query = _PAGE_PARTICIPATION.get(tuple(kinds), lambda: CompiledQuery(
        lambda worker_id, slug: Participation.objects.select_related("campaign")
        .filter(worker_id=worker_id, campaign__slug=slug, campaign__kind__in=list(kinds)).annotate(owed_total=_OWED_TOTAL)[:1],
        worker_id=int, slug=str,
    ))
    participation = query.row(worker_id=worker.pk, slug=slug)
    if participation is not None:
        participation.worker = worker
    return participation


def get_participation(worker: Worker, campaign: Campaign, *, with_owed: bool = False) -> Participation:
    """The worker's participation in the campaign (created on first sight). ``with_owed``: with ``owed_total``,
    what the ledger owes the worker in the campaign, read in the same query (a task page shows it)."""
    # Every task page reads it: compiled once.
    participation = (_PARTICIPATION_WITH_OWED if with_owed else _PARTICIPATION).row(worker_id=worker.pk, campaign_id=campaign.pk)
    if participation is None:
        participation, _ = Participation.objects.get_or_create(worker=worker, campaign=campaign)
    # The caller's objects, so that eligibility checks read them instead of loading them again.
    participation.worker, participation.campaign = worker, campaign
    return participation


def took_exclusive_qualification(worker: Worker, campaign: Campaign) -> bool:
    """True when the campaign excludes workers of another campaign and this worker took its qualification.

    BUMP Task 2 only accepts workers who did not take the Task 1 qualification (exclusive pools).
    """
    other = campaign.exclusive_with_id
    if other is None:
        return False
    return Participation.objects.filter(worker=worker, campaign_id=other, qualification_attempts__gt=0).exists()


def eligibility_problem(participation: Participation, *, for_main_task: bool = True) -> str | None:
    """Why this worker may not work on the campaign now, or None when they may."""
    campaign, worker = participation.campaign, participation.worker
    if worker.is_blocked:
        return f"Your account is blocked: {worker.blocked_reason or 'contact the campaign admin'}."
    if participation.is_blocked:
        return f"You have been blocked from this campaign: {participation.blocked_reason}."
    if campaign.status != CampaignStatus.RUNNING:
        return "This campaign is not running at the moment." if campaign.status != CampaignStatus.FINISHED else "This campaign has finished."
    if took_exclusive_qualification(worker, campaign):
        return "This task is only open to workers who did not take part in the related taxonomy task (Task 1)."
    if for_main_task and participation.pay_held:
        return "Your recent work is waiting for review by the campaign's admin; you can continue once it is released."
    if for_main_task:
        # Only a protocol with a tutorial page asks for it (BUMP's instructions are in the task page).
        if not participation.tutorial_done and protocol_for(campaign.kind).needs_tutorial(campaign):
            return "Please complete the tutorial first."
        if campaign.qualification_required and participation.qualification_status != QualificationStatus.PASSED:
            if participation.qualification_status == QualificationStatus.FAILED:
                return "You did not pass the qualification test, so you cannot take the main task."
            return "Please pass the qualification test first."
    return None


#: Prolific's published rule: a participant may be rejected for attention checks only after failing two.
READING_CHECK_FAILURES_TO_SCREEN_OUT = 2


def reading_check_block_reason(participation: Participation, campaign) -> str | None:
    """Why the reading check blocks the worker now (their wrong answers in the campaign reached
    :data:`READING_CHECK_FAILURES_TO_SCREEN_OUT`, with the check enabled), or None. Called with the
    participation's counts already holding the answer just given, wherever it was given."""
    failures = participation.entity_failures
    if participation.is_blocked or not campaign.entity_check_enabled or failures < READING_CHECK_FAILURES_TO_SCREEN_OUT:
        return None
    return (f"{failures} answers to the reading check (which option was not mentioned in the article) were wrong; "
            "the items you submitted before are paid")


def screened_out_by_reading_check(participation: Participation) -> bool:
    """Blocked here by the reading check's second wrong answer: the worker paid attention to the items they
    submitted before (each had its check answered), so those are paid, never rejected."""
    return participation.is_blocked and participation.entity_failures >= READING_CHECK_FAILURES_TO_SCREEN_OUT


def reading_check_screen_outs(campaign) -> QuerySet[Participation]:
    """The campaign's participations for which :func:`screened_out_by_reading_check` holds, as one query."""
    return Participation.objects.filter(campaign=campaign, is_blocked=True, entity_failures__gte=READING_CHECK_FAILURES_TO_SCREEN_OUT)


def is_screened_out(participation: Participation) -> bool:
    """Screened out (Prolific's screen-out code applies): failed the qualification, or blocked here or everywhere."""
    return (
        participation.is_blocked
        or participation.worker.is_blocked
        or participation.qualification_status == QualificationStatus.FAILED
    )


def items_under_external_assignment(participation: Participation, external_id: str, *, live: bool = False) -> int:
    """Items the worker submitted (``live``: or holds) under one platform assignment id (an MTurk HIT assignment)."""
    statuses = (AssignmentStatus.SUBMITTED, AssignmentStatus.ACTIVE) if live else (AssignmentStatus.SUBMITTED,)
    if not external_id:
        return 0
    return Assignment.objects.filter(
        worker_id=participation.worker_id, item__campaign_id=participation.campaign_id,
        external_assignment_id=external_id, status__in=statuses,
    ).count()


def require_eligible(participation: Participation, *, for_main_task: bool = True) -> None:
    problem = eligibility_problem(participation, for_main_task=for_main_task)
    if problem:
        raise NotEligible(problem)


def qualification_attempts_left(participation: Participation) -> int:
    return max(0, participation.campaign.qualification_attempts - participation.qualification_attempts)


def client_address(request) -> str:
    """A keyed hash of the request's network address (IPv4 address, IPv6 /64): attempts from one network
    are counted together without storing the address itself."""
    network = network_key(request.META.get("REMOTE_ADDR", ""))
    if not network:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), network.encode(), hashlib.sha256).hexdigest()[:32]


def qualification_attempts_per_address(campaign: Campaign) -> int:
    """Attempts one network address may make in a campaign, all identities together (the per-worker limit
    times ``FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS``, 3 by default: a shared office or household)."""
    return campaign.qualification_attempts * int(getattr(settings, "FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS", 3))


def record_qualification(
    participation: Participation, *, score: float, passed: bool, answers: dict[str, Any], address: str = "",
) -> QualificationAttempt:
    """Store one qualification attempt; refuses when no attempt is left to the worker or to their network
    address in this campaign (``address`` from :func:`client_address`), or the worker already passed."""
    with transaction.atomic():
        locked = Participation.objects.select_for_update().get(pk=participation.pk)
        if locked.qualification_status == QualificationStatus.PASSED:
            raise NotEligible("You have already passed the qualification test.")
        if qualification_attempts_left(locked) <= 0:
            raise NotEligible("You have no qualification attempt left.")
        if address:
            # Serialise attempts of one campaign so two identities on one address cannot both slip under the limit.
            Campaign.objects.select_for_update().filter(pk=locked.campaign_id).first()
            used = QualificationAttempt.objects.filter(participation__campaign_id=locked.campaign_id, address=address).count()
            if used >= qualification_attempts_per_address(locked.campaign):
                raise NotEligible("No qualification attempt is left from your network in this campaign.")
        attempt = QualificationAttempt.objects.create(participation=locked, answers=answers, score=score, passed=passed, address=address)
        locked.qualification_attempts += 1
        locked.qualification_score = score
        if passed:
            locked.qualification_status = QualificationStatus.PASSED
        elif qualification_attempts_left(locked) <= 0:
            locked.qualification_status = QualificationStatus.FAILED
        locked.save(update_fields=["qualification_attempts", "qualification_score", "qualification_status"])
    participation.refresh_from_db()
    return attempt


def mark_tutorial_done(participation: Participation) -> None:
    if not participation.tutorial_done:
        participation.tutorial_done = True
        participation.save(update_fields=["tutorial_done"])


def block_participation(participation: Participation, reason: str) -> Participation:
    """Block a worker from a campaign now and release their unfinished assignments there."""
    with transaction.atomic():
        locked = Participation.objects.select_for_update().get(pk=participation.pk)
        if not locked.is_blocked:
            locked.is_blocked = True
            locked.blocked_reason = reason[:300]
            locked.blocked_at = timezone.now()
            locked.save(update_fields=["is_blocked", "blocked_reason", "blocked_at"])
        close_assignments(
            Assignment.objects.filter(worker_id=locked.worker_id, item__campaign_id=locked.campaign_id),
            AssignmentStatus.RELEASED,
        )
    participation.refresh_from_db()
    return participation


def unblock_participation(participation: Participation) -> Participation:
    participation.is_blocked = False
    participation.blocked_reason = ""
    participation.blocked_at = None
    participation.save(update_fields=["is_blocked", "blocked_reason", "blocked_at"])
    return participation


def apply_quality_rules(participation: Participation) -> str | None:
    """Block the worker when their answers on known labels fall below the campaign's thresholds, all scored
    as balanced accuracy (``quality.quality_block_reason``).

    Returns the block reason when the worker was blocked now, else None. Must be called with the
    participation's counters already updated.
    """
    from .quality import quality_block_reason

    reason = None if participation.is_blocked else quality_block_reason(participation)
    if reason is not None:
        block_participation(participation, reason)
    return reason
