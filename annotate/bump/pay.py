"""What a BUMP worker is paid before their edits are verified, and when their pay is held.

An edit is only known to be good once an expert reviewed it (``annotate.bump.review``), so:

* **pay before review is capped**: a worker is paid at submission for at most ``unreviewed_paid_edits`` edits
  awaiting review; the pay per item of further edits waits for their review (recorded as held with the
  reason), is paid when the review accepts or corrects the edit and never when it rejects it
  (:func:`settle_edit_pay`, through the shared ``settle_deferred_pay``);
* **a speed rule**: an item submitted faster than the campaign's ``min_seconds_per_sentence`` for each
  sentence to read (the reference, and the article the first time the worker meets it) is too fast on the
  server's clock, and the shared rule holds a consistently fast worker's pay, as in FRANK;
* **N/A answers**: a worker whose share of N/A answers is above ``max_not_applicable_share`` after
  :data:`NA_MIN_ITEMS` items has their pay held for review (an N/A answer needs no edit and no review: a bot
  answering N/A everywhere otherwise earns the pay of every item);
* **rejected edits**: a worker whose share of edits rejected in review is above ``max_rejected_edit_share``
  after :data:`REJECTED_MIN_REVIEWED` reviewed edits has their pay held for review.

Shares count the items submitted since the worker's last release (as the shared fast-worker rule does), so a
released worker starts afresh. The shared pay rules (``annotate.services.pay_rules``) ask these through the
protocol (``pay_hold_reason``, ``pay_deferral``); holds and releases are theirs.
"""
from __future__ import annotations

from decimal import Decimal

from django.db.models import Sum

from annotate.bump.models import Edit
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Participation,
    PayDecision,
    PayDecisionKind,
    ReviewStatus,
)
from annotate.nlp import count_sentences_by_punctuation
from annotate.services.ledger import add_ledger_entry
from annotate.services.pay_rules import DEFERRED_PAY_PREFIX, record_pay_decision, settle_deferred_pay

EDIT_BONUS_PREFIX = "edit-bonus"
HELD_EDIT_BONUS_PREFIX = f"held-{EDIT_BONUS_PREFIX}"

#: Items before the share of N/A answers can hold the pay.
NA_MIN_ITEMS = 5
#: Reviewed edits before the share of rejected ones can hold the pay.
REJECTED_MIN_REVIEWED = 4


def sentences_to_read(assignment: Assignment) -> int:
    """Sentences the worker must read for this item: the reference's, and the article's the first time the
    worker meets its document (later items of the same document need no second reading)."""
    item = assignment.item
    reference = len(item.summary.sentences or []) or count_sentences_by_punctuation(item.summary.text)
    seen = (
        Assignment.objects.filter(worker_id=assignment.worker_id, item__document_id=item.document_id, status=AssignmentStatus.SUBMITTED)
        .exclude(pk=assignment.pk).exists()
    )
    article = 0 if seen else len(item.document.sentences or []) or count_sentences_by_punctuation(item.document.text)
    return max(1, reference + article)


def is_too_fast(assignment: Assignment, elapsed_seconds: float) -> bool:
    """Submitted faster than the campaign's minimum time per sentence to read (server clock)."""
    return elapsed_seconds < assignment.item.campaign.min_seconds_per_sentence * sentences_to_read(assignment)


def _edits_since_release(participation: Participation):
    submitted = list(
        Assignment.objects.filter(worker_id=participation.worker_id, item__campaign_id=participation.campaign_id,
                                  status=AssignmentStatus.SUBMITTED)
        .order_by("submitted_at", "pk").values_list("pk", flat=True)[participation.released_items:]
    )
    return len(submitted), Edit.objects.filter(assignment_id__in=submitted)


def hold_reason(participation: Participation) -> str | None:
    """Why the worker's pay is held: too many N/A answers, or too many edits rejected in review."""
    campaign = participation.campaign
    items, edits = _edits_since_release(participation)
    not_applicable = edits.filter(is_not_applicable=True).count()
    if items >= NA_MIN_ITEMS and not_applicable > campaign.max_not_applicable_share * items:
        return (f"too many N/A answers: {not_applicable} of {items} items answered N/A "
                f"(at most {campaign.max_not_applicable_share:.0%} without review)")
    reviewed = edits.filter(is_not_applicable=False).exclude(review_status=ReviewStatus.PENDING)
    rejected = reviewed.filter(review_status=ReviewStatus.REJECTED).count()
    total = reviewed.count()
    if total >= REJECTED_MIN_REVIEWED and rejected > campaign.max_rejected_edit_share * total:
        return (f"too many edits rejected in review: {rejected} of {total} reviewed edits "
                f"(at most {campaign.max_rejected_edit_share:.0%})")
    return None


def pay_deferral(participation: Participation, assignment: Assignment) -> str | None:
    """Why this edit's pay per item waits for its review: the worker has been paid for
    ``unreviewed_paid_edits`` edits that still await review. N/A answers are paid (their share is limited)."""
    edit = Edit.objects.filter(assignment=assignment).first()
    if edit is None or edit.is_not_applicable or participation.campaign.pay_per_item <= 0:
        return None  # nothing to wait for
    if BonusEntry.objects.filter(key=f"pay:{assignment.pk}").exists():
        return None  # paid at submission already (a recomputation)
    if PayDecision.objects.filter(key=f"{DEFERRED_PAY_PREFIX}:{assignment.pk}").exists():
        return "deferred at submission"
    awaiting = Edit.objects.filter(
        worker_id=participation.worker_id, assignment__item__campaign_id=participation.campaign_id,
        review_status=ReviewStatus.PENDING, is_not_applicable=False,
    ).exclude(pk=edit.pk).values("assignment_id")
    paid = BonusEntry.objects.filter(assignment_id__in=awaiting, key__startswith="pay:").count()
    cap = participation.campaign.unreviewed_paid_edits
    if paid >= cap:
        return f"{paid} of your edits paid at submission await review (at most {cap}); this one is paid once accepted"
    return None


def settle_edit_pay(edit: Edit) -> None:
    """Pay (or take back) a deferred edit's pay per item from its review as it stands: owed while accepted or
    corrected. Called inside the review's transaction; the worker's participation is locked here."""
    if edit.assignment is None or edit.worker_id is None:
        return
    participation = (
        Participation.objects.select_for_update().select_related("campaign")
        .filter(worker_id=edit.worker_id, campaign_id=edit.assignment.item.campaign_id).first()
    )
    if participation is None:
        return
    owed = edit.review_status in (ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED) and not edit.is_not_applicable
    settle_deferred_pay(participation, edit.assignment, owed=owed)


def settle_edit_bonus(edit: Edit) -> Decimal:
    """Bring the ledger in line with an edit's review: ``bonus_per_item`` owed while the edit is accepted or
    corrected, nothing otherwise (pending, rejected, N/A). Returns the amount appended (0 when in line).

    Called with the edit locked by the review; the worker's participation is locked here, so a release
    (``annotate.services.pay_rules.release_held_pay``) and a review never settle the same edit at once. Entries are only appended
    (a reversal cancels an earlier bonus). While the worker's pay is held, an amount owed is recorded as
    held instead (:class:`~annotate.models.PayDecision`), and settled again on release.
    """
    assignment = edit.assignment
    if assignment is None or edit.worker_id is None:
        return Decimal(0)
    participation = (
        Participation.objects.select_for_update().select_related("campaign")
        .filter(worker_id=edit.worker_id, campaign_id=assignment.item.campaign_id).first()
    )
    if participation is None:
        return Decimal(0)
    return _settle_edit_bonus(edit, participation)


def _settle_edit_bonus(edit: Edit, participation: Participation) -> Decimal:
    """:func:`settle_edit_bonus` with the participation locked by the caller."""
    campaign = participation.campaign
    owed = edit.review_status in (ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED) and not edit.is_not_applicable
    entries = BonusEntry.objects.filter(key__startswith=f"{EDIT_BONUS_PREFIX}:{edit.pk}:")
    current = entries.aggregate(total=Sum("amount"))["total"] or Decimal(0)
    delta = (campaign.bonus_per_item if owed else Decimal(0)) - current
    if delta == 0:
        return delta
    if delta > 0 and participation.pay_held:
        holds = list(PayDecision.objects.filter(key__startswith=f"{HELD_EDIT_BONUS_PREFIX}:{edit.pk}:").values_list("key", flat=True))
        released = set(PayDecision.objects.filter(key__in=[f"released:{k}" for k in holds]).values_list("key", flat=True))
        if all(f"released:{k}" in released for k in holds):  # held once per hold: a re-accepted edit is not held twice
            record_pay_decision(participation, edit.assignment, key=f"{HELD_EDIT_BONUS_PREFIX}:{edit.pk}:{len(holds)}", kind=PayDecisionKind.HELD,
                    amount=delta, reason=f"edit bonus held for review: {participation.pay_held_reason or 'pay held for review'}")
        return Decimal(0)
    reason = "edit accepted in review" if delta > 0 else "edit bonus reversed: review decision changed"
    add_ledger_entry(
        key=f"{EDIT_BONUS_PREFIX}:{edit.pk}:{entries.count()}", participation=participation, assignment=edit.assignment,
        amount=delta, reason=reason, reversal=delta < 0,
    )
    return delta


def release_held_edit_bonuses(participation: Participation, keys: list[str]) -> Decimal:
    """Settle the edit bonuses held under ``keys`` (``held-edit-bonus:<edit>:<n>``) from the reviews as they stand,
    the participation locked by the release; returns the amount added."""
    edit_ids = {int(key.split(":")[1]) for key in keys}
    released = Decimal(0)
    for edit in Edit.objects.filter(pk__in=edit_ids).select_related("assignment__item__campaign").order_by("pk"):
        released += _settle_edit_bonus(edit, participation)
    return released
