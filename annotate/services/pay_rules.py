"""Pay rules that need the work: what a submission is owed, or why it is not (yet).

Decided once, at submission, from facts the worker cannot forge:

* **held**: a worker consistently faster than the campaign's minimum time per sentence on the server's
  clock (``Participation.FAST_WORKER_*``, counting only items since their last release) has their pay and
  bonuses held for an admin's review, and takes no new item until released (:func:`release_held_pay`);
* **no bonus for an item submitted too fast** (server clock);
* **no bonus until** ``control_min_per_class`` **erroneous sentences were checked against labels the page does
  not give away** (gold, human-written BUMP-edit traps): traps built from the shipped article alone never
  earn a bonus, since a script finds many of them;
* **pay held until the worker's score exists**: in a campaign that scores workers at submission, an
  identity's items before its balanced score (or the score of its recent checks) is known are not paid at
  once but held (``pending-pay``), then paid once the score exists, or refused when the worker is blocked
  (:func:`settle_pending_pay`): a script's first items earn nothing before it can be judged;
* **no bonus while the balanced control score of recent work is below** ``bonus_min_score``: the most
  recent checked answers of each class (:func:`~annotate.services.quality.recent_quality`), so a
  worker who banked good work and stopped reading loses the bonus within a few items;
* **no bonus while the balanced control score is unknown or below** ``bonus_min_score``
  (:mod:`annotate.services.quality`), in every campaign that has gold labels or shows traps; with
  ``bonus_confidence`` > 0 the score must be above it with that confidence (per-class Wilson lower bounds),
  so that a few lucky answers early on never earn a bonus;
* **held: answers a page feature predicts** (one threshold on the word overlap, the sentence length, ...)
  almost perfectly, even where the rule contradicts the known labels: a page rule, not a reader
  (:mod:`annotate.services.predictable_answers`), held for an admin's review with that evidence;
* **a bonus the protocol settles later** (BUMP's edit bonus, owed while expert review accepts or corrects
  the edit: ``annotate.bump.pay.settle_edit_bonus``) is recorded as held while the worker's pay is held
  (under the protocol's ``held_bonus_prefix``), and a release hands it back to the protocol
  (``release_held_bonuses``), which settles it as the work stands then.

Money owed is only in the append-only :class:`~annotate.models.BonusEntry` ledger; every amount not paid,
and every release, is an append-only :class:`~annotate.models.PayDecision` with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Sum, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotate.models import (
    Assignment,
    BonusEntry,
    Participation,
    PayDecision,
    PayDecisionKind,
)
from annotate.protocols import protocol_for
from annotate.rows import CompiledQuery, insert_all_unless_present, insert_unless_present, update_row

from .bonus_rule import bonus_rule
from .gold import campaign_has_checks
from .independence import copy_hold, hold_unpaid_entries
from .ledger import add_ledger_entry, append_ledger_entries, ledger_entry
from .participation import screened_out_by_reading_check
from .predictable_answers import predictable_answers_hold
from .quality import describe_recent, worker_quality, worker_recent_quality

#: Pay per item a protocol settles from a later decision on the work (a BUMP edit's review): ``defer_pay``.
DEFERRED_PAY_PREFIX = "deferred-pay"
#: Pay of an item submitted before the worker's score existed: held, then paid or refused by the score.
PENDING_PAY_PREFIX = "pending-pay"


@dataclass(frozen=True)
class Verdict:
    """What one submission may be paid: ``held`` (nothing now), else pay, and the bonus unless ``bonus_refusal``."""

    held: bool
    bonus_refusal: str | None
    score: float | None
    #: Decisions of a submission that is not held, unwritten: the caller appends them with its ledger entries.
    decisions: tuple[PayDecision, ...] = ()

    @property
    def bonus_allowed(self) -> bool:
        return not self.held and self.bonus_refusal is None


def record_pay_decision(participation: Participation, assignment: Assignment | None, *, key: str, kind: str, amount: Decimal, reason: str, user=None) -> bool:
    """Append one decision; False (nothing written) when one with this key exists."""
    return insert_unless_present(pay_decision(participation, assignment, key=key, kind=kind, amount=amount, reason=reason, user=user))


def pay_decision(participation: Participation, assignment: Assignment | None, *, key: str, kind: str, amount: Decimal, reason: str,
                 user=None) -> PayDecision:
    """The decision :func:`record_pay_decision` appends, unwritten (a submission's are appended together)."""
    return PayDecision(key=key, kind=kind, worker_id=participation.worker_id, campaign_id=participation.campaign_id,
                       assignment=assignment, amount=amount, reason=reason[:300], decided_by=user)


def _unit(campaign) -> str:
    """The unit of work the campaign's minimum time is per, in its protocol's words ("sentence", "summary")."""
    return protocol_for(campaign.kind).unit_words[0]


def _units(campaign) -> str:
    """The same unit, plural: what the control score's counts are of ("sentences", "summaries")."""
    return protocol_for(campaign.kind).unit_words[1]


def hold_reason(participation: Participation) -> str | None:
    """Why the worker's pay is held now: held already, or consistently fast since their last release."""
    if participation.pay_held:
        return participation.pay_held_reason or "pay held for review"
    items = participation.items_submitted - participation.released_items
    fast = participation.too_fast_items - participation.released_too_fast_items
    if items >= Participation.FAST_WORKER_MIN_ITEMS and fast >= Participation.FAST_WORKER_SHARE * items:
        minimum = participation.campaign.min_seconds_per_sentence
        return f"consistently fast: {fast} of {items} items under {minimum:g} s per {_unit(participation.campaign)} on the server's clock"
    return protocol_for(participation.campaign.kind).pay_hold_reason(participation)


def bonus_refusal(participation: Participation, assignment: Assignment) -> tuple[str | None, float | None]:
    """``(why this submission earns no item bonus or None, the balanced score at submission or None)``."""
    campaign = participation.campaign
    if assignment.too_fast:
        seconds = assignment.lead_time_seconds
        took = f"{seconds:.1f} s for the item" if seconds is not None else "too little time"
        return f"item submitted too fast on the server's clock ({took}; minimum {campaign.min_seconds_per_sentence:g} s per {_unit(campaign)})", None
    if not bonus_rule(campaign, count_evidence=False).checks:
        return None, None  # nothing to score against: the campaign pays every item (annotate.services.bonus_rule)
    # Published labels (a benchmark's release) are left out unless the campaign accepts them knowingly.
    quality = worker_quality(participation, until=assignment.submitted_at, in_submission=True, for_bonus=True)
    if quality.score is None:
        return f"no bonus yet: {quality.describe(_units(campaign))}", None
    if quality.independent_erroneous < campaign.control_min_per_class:
        # A script finds traps built from the page's own text, so they never earn a bonus alone: it takes
        # erroneous sentences whose label the page does not give away (gold, human-written BUMP-edit traps).
        return (
            f"no bonus yet: {quality.independent_erroneous} erroneous {_units(campaign)} checked against gold or human-written "
            f"traps, {campaign.control_min_per_class} needed (traps built from the article alone do not earn a bonus"
            f"{', nor do public labels' if quality.public_left_out else ''}); "
            f"{quality.describe(_units(campaign))}"
        )[:300], quality.score
    bound = quality.lower_bound(campaign.bonus_confidence)
    if bound < campaign.bonus_min_score:
        sure = f", at least {bound:.2f} with {campaign.bonus_confidence:.0%} confidence," if campaign.bonus_confidence > 0 else ""
        return f"{quality.describe(_units(campaign))}{sure} below the bonus threshold {campaign.bonus_min_score:.2f}", quality.score
    recent = worker_recent_quality(participation, until=assignment.submitted_at, in_submission=True)
    recent_bound = recent.lower_bound(campaign.bonus_confidence)
    if recent_bound is not None and recent_bound < campaign.bonus_min_score:
        sure = f", at least {recent_bound:.2f} with {campaign.bonus_confidence:.0%} confidence" if campaign.bonus_confidence > 0 else ""
        return f"recent work below the bonus threshold {campaign.bonus_min_score:.2f}: {describe_recent(recent, _units(campaign))}{sure}"[:300], quality.score
    return None, quality.score


def score_exists(participation: Participation, assignment: Assignment) -> bool:
    """Whether the worker can be judged at this submission: their balanced score, or that of their recent
    checks, is decisive (the scores that block)."""
    return (
        worker_quality(participation, until=assignment.submitted_at, in_submission=True).score is not None
        or worker_recent_quality(participation, until=assignment.submitted_at, in_submission=True).score is not None
    )


# Every submit of a scored worker looks for held items (almost always none): compiled once.
_PENDING_HOLDS = CompiledQuery(
    lambda worker_id, campaign_id: PayDecision.objects.filter(
        worker_id=worker_id, campaign_id=campaign_id, kind=PayDecisionKind.HELD, key__startswith=f"{PENDING_PAY_PREFIX}:",
    ).only("key", "assignment_id", "amount"),
    worker_id=int, campaign_id=int,
)


def unsettled_pending_pay() -> Exists:
    """Whether the participation (the outer query's row) has pay held until its score existed and not yet paid or
    refused: for the submission's lock of the participation, which so tells :func:`settle_pending_pay` (almost
    always) that there is nothing to settle without a query of its own."""
    settled = PayDecision.objects.filter(
        Q(key=Concat(Value("released:"), OuterRef("key"))) | Q(key=Concat(Value("refused:"), OuterRef("key"))))
    return Exists(PayDecision.objects.filter(
        worker_id=OuterRef("worker_id"), campaign_id=OuterRef("campaign_id"), kind=PayDecisionKind.HELD,
        key__startswith=f"{PENDING_PAY_PREFIX}:",
    ).filter(~Exists(settled)))


def settle_pending_pay(participation: Participation, *, refuse: str | None = None) -> Decimal:
    """Pay the worker's items held until their score existed (``refuse``: refuse them instead, with this reason).
    Each held item is settled once (unique keys); returns the amount paid now.

    Called inside the submission with the participation locked, so the keys read here cannot be written
    meanwhile; the settlement is two inserts however many items were held (a submit's cost stays fixed).
    A participation whose ``may_have_pending_pay`` is False (its lock found none: ``lock_worker_assignment``)
    has nothing to settle, and no query is run."""
    if getattr(participation, "may_have_pending_pay", True) is False:
        return Decimal("0.00")
    held = _PENDING_HOLDS.rows(worker_id=participation.worker_id, campaign_id=participation.campaign_id)
    if not held:
        return Decimal("0.00")
    settled = set(PayDecision.objects.filter(
        key__in=[f"{outcome}:{d.key}" for d in held for outcome in ("released", "refused")],
    ).values_list("key", flat=True))
    open_holds = [d for d in held if f"released:{d.key}" not in settled and f"refused:{d.key}" not in settled]
    outcome, kind = ("refused", PayDecisionKind.REFUSED) if refuse is not None else ("released", PayDecisionKind.RELEASED)
    reason = (f"pay held until the quality score existed, refused: {refuse}" if refuse is not None
              else "pay held until the quality score existed: paid, the score exists")[:300]
    PayDecision.objects.bulk_create([
        PayDecision(key=f"{outcome}:{d.key}", kind=kind, worker_id=participation.worker_id,
                    campaign_id=participation.campaign_id, assignment_id=d.assignment_id, amount=d.amount, reason=reason)
        for d in open_holds
    ])
    if refuse is not None:
        return Decimal("0.00")
    entries = [ledger_entry(key=f"released:{d.key}", participation=participation, assignment=d.assignment_id, amount=d.amount,
                            reason="pay per item") for d in open_holds]
    appended = append_ledger_entries(entries)
    return sum((e.amount for e in entries if e is not None and e.key in appended), Decimal("0.00"))


def judge_submission(participation: Participation, assignment: Assignment, *, just_submitted: bool = False) -> Verdict:
    """Decide, once, what a submitted assignment may be paid, recording every amount withheld with its reason
    (a paid submission's refusals in ``Verdict.decisions``, which its caller appends with the ledger entries).

    Called with the participation locked (inside the submission); its counters already include this item.
    A submission that already has ledger entries (a recomputation) is judged again but never held now;
    ``just_submitted``: called by the submission that stored it, which no ledger entry can name yet.
    """
    campaign = participation.campaign
    # A protocol that settles its bonus later (BUMP: after the edit's review) is not judged on scores here.
    bonus_now = protocol_for(campaign.kind).bonus_at_submission
    refusal, score = bonus_refusal(participation, assignment) if bonus_now else (None, None)
    paid_before = not just_submitted and BonusEntry.objects.filter(assignment=assignment).exists()
    # Answers copied from (or shared with) another worker: held with the evidence (services/independence.py).
    copying = None if paid_before else copy_hold(participation, assignment)
    hold = None if paid_before else (hold_reason(participation) or copying)
    if hold is None and not paid_before:
        # Answers a page feature predicts almost perfectly, even against the known labels: a rule, not a reader
        # (services/predictable_answers.py); what the ledger owes and was not paid out is held with them.
        hold = predictable_answers_hold(participation, assignment)
        if hold is not None:
            hold_unpaid_entries(participation, hold, why="predictable answers")
    decisions: list[PayDecision] = []  # appended together, in one statement

    def decide(key: str, kind: str, amount: Decimal, reason: str) -> None:
        decisions.append(pay_decision(participation, assignment, key=key, kind=kind, amount=amount, reason=reason))

    if hold is None and not paid_before and bonus_now and campaign_has_checks(campaign):
        if not score_exists(participation, assignment):
            if campaign.pay_per_item > 0:
                decide(f"{PENDING_PAY_PREFIX}:{assignment.pk}", PayDecisionKind.HELD, campaign.pay_per_item,
                       "pay per item held until the worker's quality score exists (paid then, refused if blocked)")
            if refusal is not None and campaign.bonus_per_item > 0:
                decide(f"refused:{assignment.pk}", PayDecisionKind.REFUSED, campaign.bonus_per_item, refusal)
            insert_all_unless_present(decisions, by="key")
            participation.may_have_pending_pay = True
            return Verdict(held=True, bonus_refusal=refusal, score=score)
        settle_pending_pay(participation)
    if hold is not None:
        if not participation.pay_held:
            participation.pay_held, participation.pay_held_reason, participation.pay_held_at = True, hold[:300], timezone.now()
            update_row(participation, ["pay_held", "pay_held_reason", "pay_held_at"])
        decide(f"held-pay:{assignment.pk}", PayDecisionKind.HELD, campaign.pay_per_item, f"pay per item held for review: {hold}")
        if bonus_now and refusal is None and campaign.bonus_per_item > 0:
            decide(f"held-bonus:{assignment.pk}", PayDecisionKind.HELD, campaign.bonus_per_item, f"item bonus held for review: {hold}")
    if refusal is not None and campaign.bonus_per_item > 0:
        decide(f"refused:{assignment.pk}", PayDecisionKind.REFUSED, campaign.bonus_per_item, refusal)
    if hold is not None:
        insert_all_unless_present(decisions, by="key")
        return Verdict(held=True, bonus_refusal=refusal, score=score)
    # Paid: the decisions go into the ledger's statement (award_submission_pay_and_bonus), one round trip for both.
    return Verdict(held=False, bonus_refusal=refusal, score=score, decisions=tuple(decisions))


def refuse_pay_of_blocking_submission(participation: Participation, assignment: Assignment, block_reason: str) -> None:
    """The submission that got its worker blocked is not paid (neither pay nor bonus): recorded with the reason."""
    campaign = participation.campaign
    amount = campaign.pay_per_item + (campaign.bonus_per_item if protocol_for(campaign.kind).bonus_at_submission else Decimal(0))
    record_pay_decision(participation, assignment, key=f"blocked:{assignment.pk}", kind=PayDecisionKind.REFUSED, amount=amount,
            reason=f"not paid: this submission got the worker blocked ({block_reason})")
    settle_pending_pay(participation, refuse=f"the worker was blocked ({block_reason})")


def release_held_pay(participation: Participation, *, user=None, note: str = "") -> Decimal:
    """An admin's release after review: every held amount goes into the ledger (once), the hold is lifted and
    only items submitted from now on can hold the pay again. Returns the amount released now.

    A held edit bonus is not paid as it was held: its edit is settled again from the review as it stands now
    (a review may have been changed or undone while the pay was held)."""
    released = Decimal("0.00")
    with transaction.atomic():
        locked = Participation.objects.select_for_update().select_related("campaign").get(pk=participation.pk)
        held = PayDecision.objects.filter(worker_id=locked.worker_id, campaign_id=locked.campaign_id, kind=PayDecisionKind.HELD).exclude(
            key__startswith=f"{DEFERRED_PAY_PREFIX}:")  # deferred pay waits for its own decision (settle_deferred_pay)
        who = getattr(user, "username", "") or "an admin"
        protocol = protocol_for(locked.campaign.kind)
        held_bonuses: list[str] = []
        for decision in held.select_related("assignment"):
            if decision.key.startswith(f"{PENDING_PAY_PREFIX}:") and PayDecision.objects.filter(key=f"refused:{decision.key}").exists():
                continue  # refused when the worker was blocked: no hold left to release
            reason = f"released by {who} after review" + (f": {note}" if note else "")
            if not record_pay_decision(locked, decision.assignment, key=f"released:{decision.key}", kind=PayDecisionKind.RELEASED,
                           amount=decision.amount, reason=reason, user=user):
                continue  # released before
            if protocol.held_bonus_prefix and decision.key.startswith(f"{protocol.held_bonus_prefix}:"):
                held_bonuses.append(decision.key)  # the protocol settles its own bonus again (it may no longer be owed)
                continue
            if add_ledger_entry(key=f"released:{decision.key}", participation=locked, assignment=decision.assignment,
                                amount=decision.amount, reason=f"released after review ({decision.key.split(':')[0]})"):
                released += decision.amount
        locked.pay_held, locked.pay_held_reason, locked.pay_held_at = False, "", None
        locked.released_items, locked.released_too_fast_items = locked.items_submitted, locked.too_fast_items
        locked.save(update_fields=["pay_held", "pay_held_reason", "pay_held_at", "released_items", "released_too_fast_items"])
        if held_bonuses:
            released += protocol.release_held_bonuses(locked, held_bonuses)
    participation.refresh_from_db()
    return released


def defer_pay(participation: Participation, assignment: Assignment, reason: str) -> None:
    """The pay per item of ``assignment`` waits for a later decision on the work (the protocol's
    ``pay_deferral``): recorded as held with the reason, and neither paid nor released with a hold's release."""
    record_pay_decision(participation, assignment, key=f"{DEFERRED_PAY_PREFIX}:{assignment.pk}", kind=PayDecisionKind.HELD,
            amount=participation.campaign.pay_per_item, reason=f"pay per item waits for review: {reason}")


def settle_deferred_pay(participation: Participation, assignment: Assignment, *, owed: bool) -> Decimal:
    """Bring the ledger in line with the decision on deferred work: its pay per item while ``owed`` (e.g. an
    edit accepted in review), nothing otherwise; a changed decision appends a reversal. Returns the amount
    appended; 0 when the pay of ``assignment`` was not deferred. Called with the participation locked."""
    deferred = PayDecision.objects.filter(key=f"{DEFERRED_PAY_PREFIX}:{assignment.pk}").first()
    if deferred is None:
        return Decimal(0)
    entries = BonusEntry.objects.filter(key__startswith=f"{DEFERRED_PAY_PREFIX}:{assignment.pk}:")
    delta = (deferred.amount if owed else Decimal(0)) - (entries.aggregate(total=Sum("amount"))["total"] or Decimal(0))
    if delta == 0:
        return delta
    # "pay per item" as at submission (a reversal too), so that payment exports treat it as the base pay it is.
    add_ledger_entry(key=f"{DEFERRED_PAY_PREFIX}:{assignment.pk}:{entries.count()}", participation=participation,
                     assignment=assignment, amount=delta, reversal=delta < 0, reason="pay per item")
    return delta


def pay_decisions(participation: Participation):
    """The worker's decisions in the campaign, oldest first (what the admin reviews)."""
    return PayDecision.objects.filter(worker_id=participation.worker_id, campaign_id=participation.campaign_id)


# ---------------------------------------------------------------- what the crowd platform approves

#: Approval files: Prolific's bulk approval (participant ids, one a line) and rejection (id and reason), MTurk's
#: batch results columns (``AssignmentId``, ``WorkerId``, ``Approve``: "x", ``Reject``: the reason), and one
#: table of every decision, those left for review included.
APPROVAL_FORMATS = ("approval", "prolific-approve", "prolific-reject", "mturk-approval")


@dataclass(frozen=True)
class Approval:
    """The platform decision for one crowd submission: ``approve``, ``reject`` (with the reason), ``review``
    (not decided: pay held for review, or waiting for the worker's score) or ``screened-out`` (a Prolific
    participant screened out by the reading check: neither approved nor rejected, the items they submitted
    are paid in Prolific's bonus file)."""

    participation: Participation
    external_assignment_id: str
    decision: str
    reason: str


def _approval(participation: Participation, items_at_pace: int, needed: int) -> tuple[str, str]:
    campaign = participation.campaign
    if participation.is_blocked and not screened_out_by_reading_check(participation):
        return "reject", f"failed the campaign's quality checks: {participation.blocked_reason}"
    if participation.pay_held:
        return "review", f"pay held for review: {participation.pay_held_reason}"
    if items_at_pace < needed:
        minimum = campaign.min_seconds_per_sentence
        return "reject", (f"did not complete the minimum work: {items_at_pace} of {needed} items at the minimum time "
                          f"({minimum:g} s per {_unit(campaign)} on the server's clock)")
    pending = list(PayDecision.objects.filter(
        worker_id=participation.worker_id, campaign_id=participation.campaign_id, key__startswith=f"{PENDING_PAY_PREFIX}:",
    ).values_list("key", flat=True))
    settled = PayDecision.objects.filter(key__in=[f"{o}:{k}" for k in pending for o in ("released", "refused")]).count()
    if settled < len(pending):
        return "review", "pay held until the worker's quality score exists"
    return "approve", ""


def _screen_out_reason(participation: Participation) -> str:
    paid = BonusEntry.objects.filter(
        worker_id=participation.worker_id, campaign_id=participation.campaign_id, reason="pay per item",
    ).aggregate(total=Sum("amount"))["total"] or Decimal(0)
    return (f"screened out by the reading check ({participation.entity_failures} wrong answers) after "
            f"{participation.items_submitted} submitted items, paid {paid:.2f} in Prolific's bonus file")


def approvals(campaign) -> list[Approval]:
    """Every crowd submission's decision: a Prolific participant is approved once they submitted
    ``completion_min_items`` items at the minimum time and are neither blocked nor held; an MTurk assignment
    once at least one item under it was; a blocked worker is rejected with the reason, a held one left for review.
    The reading check's screen-out rejects nobody: a Prolific participant is ``screened-out`` (their items are
    paid as a bonus), an MTurk assignment is decided on the items submitted under it."""
    from annotate.models import AssignmentStatus

    rows = []
    participations = Participation.objects.filter(campaign=campaign, worker__provider__in=("prolific", "mturk")).exclude(
        worker__external_id="").select_related("worker", "campaign").order_by("pk")
    for participation in participations:
        if participation.worker.provider == "prolific":
            if screened_out_by_reading_check(participation):
                rows.append(Approval(participation, "", "screened-out", _screen_out_reason(participation)))
                continue
            at_pace = participation.items_submitted - participation.too_fast_items
            decision, reason = _approval(participation, at_pace, campaign.completion_min_items)
            rows.append(Approval(participation, "", decision, reason))
            continue
        submitted = Assignment.objects.filter(
            worker_id=participation.worker_id, item__campaign=campaign, status=AssignmentStatus.SUBMITTED,
        ).exclude(external_assignment_id="")
        for external in sorted(set(submitted.values_list("external_assignment_id", flat=True))):
            at_pace = submitted.filter(external_assignment_id=external, too_fast=False).count()
            decision, reason = _approval(participation, at_pace, 1)
            rows.append(Approval(participation, external, decision, reason))
    return rows


def approval_csv(campaign, fmt: str) -> str:
    """The approval file in one of :data:`APPROVAL_FORMATS` (cells neutralised against formula injection)."""
    import io

    from annotate.safe_csv import SafeCsvWriter

    if fmt not in APPROVAL_FORMATS:
        raise ValueError(f"unknown approval format {fmt!r}; expected one of {', '.join(APPROVAL_FORMATS)}")
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    rows = approvals(campaign)
    prolific = [r for r in rows if r.participation.worker.provider == "prolific"]
    if fmt == "prolific-approve":
        for row in prolific:
            if row.decision == "approve":
                writer.writerow([row.participation.worker.external_id])
    elif fmt == "prolific-reject":
        for row in prolific:
            if row.decision == "reject":
                writer.writerow([row.participation.worker.external_id, row.reason[:300]])
    elif fmt == "mturk-approval":
        writer.writerow(["AssignmentId", "WorkerId", "Approve", "Reject"])
        for row in rows:
            if row.external_assignment_id and row.decision != "review":
                writer.writerow([row.external_assignment_id, row.participation.worker.external_id,
                                 "x" if row.decision == "approve" else "", row.reason[:1000] if row.decision == "reject" else ""])
    else:
        writer.writerow(["provider", "participant", "assignment", "decision", "reason"])
        for row in rows:
            writer.writerow([row.participation.worker.provider, row.participation.worker.external_id, row.external_assignment_id,
                             row.decision, row.reason])
    return out.getvalue()
