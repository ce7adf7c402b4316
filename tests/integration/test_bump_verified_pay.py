"""BUMP pays for verified work: through the real pages, an N/A bot (fast, or at a human pace) and a worker whose
edits reviewers reject are held within a few items with the reason on record, an honest editor is paid, and
pay before review is capped (the rest is paid when the review accepts the edit)."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from annotate.bump.models import Edit
from annotate.bump.review import make_reviewer, review_edit
from annotate.bump.services import create_bump_campaign
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    CampaignStatus,
    Participation,
    PayDecision,
    PayDecisionKind,
)
from annotate.services.bonuses import worker_total
from annotate.services.pay_rules import release_held_pay
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = pytest.mark.django_db

PAY = Decimal("0.50")
# Edits an honest worker makes of the reference, each a real one-place change.
HONEST_EDITS = ["Pfizer", "Novartis", "Roche", "Sanofi", "Bayer", "Moderna", "AstraZeneca", "Biogen"]


@pytest.fixture
def task1():
    """A running Task 1 campaign with BUMP's defaults (speed rule, N/A and rejection limits, cap) and 4 documents
    of the seven requestable types each: 28 items."""
    campaign = create_bump_campaign("vp", "Verified pay", "bump_taxonomy", status=CampaignStatus.RUNNING, pay_per_item=PAY)
    for _ in range(4):
        make_bump_document(campaign)
    return campaign


def _claim(client, campaign) -> Assignment | None:
    """Open the task page as the signed-in worker; the assignment it shows, or None when none is given."""
    response = client.get(f"/c/{campaign.slug}/bump/task/")
    if response.status_code != 200:
        return None
    return Assignment.objects.filter(worker__user=response.wsgi_request.user, status=AssignmentStatus.ACTIVE).first()


def _submit(client, campaign, assignment, *, seconds: float = 0.0, **answer):
    """Submit through the page's endpoint; ``seconds``: how long the page was open (the server's clock)."""
    if seconds:
        Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))
    body = {"checkpoint": assignment.checkpoint.code, "submission_key": f"k{assignment.pk}", **answer}
    return client.post(f"/c/{campaign.slug}/bump/task/{assignment.pk}/submit/", body, content_type="application/json")


def _run_bot(client, campaign, *, seconds: float, limit: int = 28) -> int:
    """Answer N/A to every item given, until no item is given; returns the items submitted."""
    done = 0
    while done < limit:
        assignment = _claim(client, campaign)
        if assignment is None:
            break
        response = _submit(client, campaign, assignment, seconds=seconds, not_applicable=True)
        if response.status_code != 200:
            break
        done += 1
    return done


@pytest.mark.parametrize(("seconds", "rule", "paid_items"), [
    (0.0, "consistently fast: 3 of 3 items", 2),  # the bot of the finding: 57 items in 89 s
    (60.0, "too many N/A answers: 5 of 5 items answered N/A", 4),  # the same bot at a human pace
])
def test_an_na_bot_is_held_within_ten_items_with_the_reason_on_record_and_earns_no_more_pay(client, task1, seconds, rule, paid_items):
    bot = make_worker("na-bot")
    qualify(bot, task1)
    client.force_login(bot.user)
    submitted = _run_bot(client, task1, seconds=seconds)
    participation = Participation.objects.get(worker=bot, campaign=task1)
    # Held at the item that crossed the rule, and given no item after it.
    assert submitted == paid_items + 1 <= 10
    assert participation.pay_held and rule in participation.pay_held_reason
    held = PayDecision.objects.get(worker=bot, kind=PayDecisionKind.HELD)
    assert held.amount == PAY and rule in held.reason and held.assignment.edit.is_not_applicable
    owed = worker_total(bot, task1)
    assert owed == PAY * paid_items  # before these rules: 0.50 for every one of the 28 items (14.00)
    # The page sends the bot back to the campaign entry, which says why; nothing more is paid.
    assert client.get(f"/c/{task1.slug}/bump/task/").status_code == 302
    assert "waiting for review" in client.get(f"/c/{task1.slug}/", follow=True).content.decode()
    assert _run_bot(client, task1, seconds=seconds) == 0
    assert worker_total(bot, task1) == owed and Assignment.objects.filter(worker=bot).count() == submitted


def test_without_the_speed_and_na_rules_the_same_bot_takes_every_item_and_is_paid_for_each(client, task1):
    """The baseline the rules above are measured against: the campaign as it was (no speed rule, any share of N/A)."""
    task1.min_seconds_per_sentence, task1.max_not_applicable_share = 0.0, 1.0
    task1.save(update_fields=["min_seconds_per_sentence", "max_not_applicable_share"])
    bot = make_worker("na-bot-unchecked")
    qualify(bot, task1)
    client.force_login(bot.user)
    assert _run_bot(client, task1, seconds=0.0) == 28
    assert worker_total(bot, task1) == PAY * 28 and not Participation.objects.get(worker=bot).pay_held


def test_an_honest_editor_is_paid_and_pay_before_review_is_capped(client, task1, django_user_model):
    worker = make_worker("honest")
    qualify(worker, task1)
    client.force_login(worker.user)
    cap = task1.unreviewed_paid_edits
    for n, company in enumerate(HONEST_EDITS[: cap + 2]):
        assignment = _claim(client, task1)
        if n == 3:  # an honest worker says N/A where the type cannot be introduced, now and then
            assert _submit(client, task1, assignment, seconds=90, not_applicable=True).status_code == 200
            continue
        response = _submit(client, task1, assignment, seconds=90, edited=BUMP_REFERENCE.replace("Merck", company), not_applicable=False)
        assert response.status_code == 200, response.content
    participation = Participation.objects.get(worker=worker, campaign=task1)
    assert not participation.pay_held and participation.too_fast_items == 0
    # Paid at submission for the N/A and the first ``cap`` edits; the last edit's pay waits for its review.
    edits = list(Edit.objects.filter(worker=worker, is_not_applicable=False).order_by("pk"))
    assert len(edits) == cap + 1
    assert worker_total(worker, task1) == PAY * (cap + 1)
    waiting = PayDecision.objects.get(worker=worker, key__startswith="deferred-pay:")
    assert waiting.assignment_id == edits[-1].assignment_id and f"{cap} of your edits paid at submission await review" in waiting.reason
    # A hold's release never pays work still waiting for its review.
    assert release_held_pay(participation) == Decimal("0.00")
    reviewer = django_user_model.objects.create_user("reviewer")
    make_reviewer(reviewer)
    for edit in edits:
        review_edit(edit.pk, reviewer, "accept", campaign_id=task1.pk)
    # Every item paid once, every accepted edit with its bonus (1.00): 7 x 0.50 + 6 x 1.00.
    assert worker_total(worker, task1) == PAY * (cap + 2) + task1.bonus_per_item * len(edits)
    assert BonusEntry.objects.filter(worker=worker, reason="pay per item").count() == cap + 2
    # A changed decision takes the deferred pay back with the bonus, once.
    review_edit(edits[-1].pk, reviewer, "reject", campaign_id=task1.pk)
    review_edit(edits[-1].pk, reviewer, "reject", campaign_id=task1.pk)
    assert worker_total(worker, task1) == PAY * (cap + 1) + task1.bonus_per_item * (len(edits) - 1)


def test_a_worker_whose_edits_reviewers_reject_is_held_and_a_rejected_edit_waiting_for_review_is_never_paid(client, task1, django_user_model):
    worker = make_worker("sloppy")
    qualify(worker, task1)
    client.force_login(worker.user)
    task1.unreviewed_paid_edits = 2
    task1.save(update_fields=["unreviewed_paid_edits"])
    for company in HONEST_EDITS[:4]:
        assignment = _claim(client, task1)
        assert _submit(client, task1, assignment, seconds=90, edited=BUMP_REFERENCE.replace("Merck", company)).status_code == 200
    reviewer = django_user_model.objects.create_user("strict")
    make_reviewer(reviewer)
    edits = list(Edit.objects.filter(worker=worker).order_by("pk"))
    for edit, action in zip(edits, ["reject", "reject", "accept", "reject"], strict=True):
        review_edit(edit.pk, reviewer, action, campaign_id=task1.pk, corrected_type="extrinsic_entity")
    # Two edits paid at submission, the accepted third paid on review with its bonus, the rejected fourth never.
    assert worker_total(worker, task1) == PAY * 3 + task1.bonus_per_item
    # The next submission holds the pay: 3 of 4 reviewed edits rejected.
    assignment = _claim(client, task1)
    assert _submit(client, task1, assignment, seconds=90, edited=BUMP_REFERENCE.replace("Merck", "Bayer")).status_code == 200
    participation = Participation.objects.get(worker=worker, campaign=task1)
    assert participation.pay_held and "too many edits rejected in review: 3 of 4 reviewed edits" in participation.pay_held_reason
    assert PayDecision.objects.filter(assignment=assignment, kind=PayDecisionKind.HELD, reason__contains="3 of 4 reviewed").exists()
    assert _claim(client, task1) is None
    assert worker_total(worker, task1) == PAY * 3 + task1.bonus_per_item


@pytest.mark.parametrize(("edited", "reason"), [
    (BUMP_REFERENCE.replace("The FDA", "Th\u0435 FDA"), "Cyrillic '\u0435' (looks like Latin 'e') in 'Th\u0435'"),
    (BUMP_REFERENCE.replace("Merck", "Mer\u200bck"), "invisible characters (zero-width space)"),
    (BUMP_REFERENCE.replace("Merck", "Merk"), "looks like a typo ('Merck' \u2192 'Merk' is not a word)"),
])
def test_the_page_gets_the_reason_an_edit_is_refused_and_nothing_is_stored(client, task1, edited, reason):
    worker = make_worker()
    qualify(worker, task1)
    client.force_login(worker.user)
    # The page tells the worker the rules their pay follows.
    page = " ".join(client.get(f"/c/{task1.slug}/bump/task/").content.decode().split())
    assert "once 5 of your edits await review" in page and "N/A to more than 30% of items" in page and "more than 30% of your edits rejected" in page
    assignment = _claim(client, task1)
    response = _submit(client, task1, assignment, seconds=90, edited=edited)
    assert response.status_code == 400 and reason in response.json()["detail"] and response.json()["fields"]["edited"]
    assert not Edit.objects.exists() and not BonusEntry.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE
