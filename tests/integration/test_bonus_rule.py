"""One rule for whether an item bonus can be paid: the worker page, the control page and the pay decision agree.

Two cases where they used to disagree: a campaign with no checks (the control page said no bonus could be
paid, while the worker page promised one per item and the pay rules paid it), and a campaign whose only
checks are public labels (the worker page promised a bonus for agreement the pay rules never reward).
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Assignment, BonusEntry, PayDecision, PayDecisionKind, Summary
from annotate.services.assignments import submit_assignment
from annotate.services.bonus_rule import NO_EVIDENCE, ON_CHECKS, UNCHECKED, bonus_rule
from annotate.services.gold import mark_gold_public, set_gold_label
from annotate.services.readiness import study_readiness
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.guarantee_support import frank_answers

pytestmark = pytest.mark.django_db


def _worker_page_and_one_submission(campaign) -> tuple[str, Assignment]:
    """The task page as a worker sees it, and that item submitted with every sentence answered "factual"."""
    worker = make_worker()
    qualify(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert page.status_code == 200
    assignment = Assignment.objects.get(worker=worker, item__campaign=campaign)
    submit_assignment(assignment.pk, worker, frank_answers(assignment))
    return page.content.decode(), assignment


def _control_page(campaign) -> str:
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    return admin.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()


def _bonus_paid(assignment: Assignment) -> bool:
    return BonusEntry.objects.filter(assignment=assignment, key__startswith="item-bonus").exists()


def test_a_campaign_without_checks_promises_pays_and_tells_the_admin_the_same_unchecked_bonus():
    campaign = make_campaign(trap_rate=0.0, entity_check_enabled=False)
    make_document(campaign)
    assert bonus_rule(campaign).basis == UNCHECKED
    page, assignment = _worker_page_and_one_submission(campaign)
    # The worker page promises the bonus per item, and the pay rules pay it...
    assert 'id="rule-bonus"' in page and "per item accepted" in page and 'id="no-bonus-yet"' not in page
    assert _bonus_paid(assignment)
    # ...and the control page says so, instead of "no item bonus can be paid".
    control = _control_page(campaign)
    assert 'id="bonus-unchecked"' in control and "No item bonus can be paid yet" not in control
    # The checklist warns the admin: no check can ever pay it.
    bonus_item = {item.key: item for item in study_readiness(campaign)}["bonus"]
    assert not bonus_item.ok and "paid on every item" in bonus_item.detail


def test_a_campaign_checked_only_on_public_labels_promises_no_bonus_and_pays_none():
    campaign = make_campaign(trap_rate=0.0, entity_check_enabled=False)
    document = make_document(campaign)
    summary = Summary.objects.filter(document=document).order_by("pk").first()
    set_gold_label(summary, 0, False, "EntE", public=True)
    set_gold_label(summary, 1, True, public=True)
    rule = bonus_rule(campaign)
    assert rule.basis == NO_EVIDENCE and not rule.possible and rule.evidence == 0
    page, assignment = _worker_page_and_one_submission(campaign)
    # Before, the page promised a bonus "while your agreement with our known answers is at least ..." and no more.
    assert 'id="no-bonus-yet"' in page
    assert not _bonus_paid(assignment)
    assert PayDecision.objects.filter(assignment=assignment, kind=PayDecisionKind.REFUSED, key__startswith="refused:").exists()
    assert "No item bonus can be paid yet" in _control_page(campaign)


def test_private_erroneous_gold_makes_the_bonus_possible_on_every_page():
    campaign = make_campaign(trap_rate=0.0, entity_check_enabled=False)
    document = make_document(campaign)
    summary = Summary.objects.filter(document=document).order_by("pk").first()
    set_gold_label(summary, 0, False, "EntE")
    rule = bonus_rule(campaign)
    assert rule.basis == ON_CHECKS and rule.possible and rule.evidence == 1
    worker = make_worker()
    qualify(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
    assert "while your agreement with our known answers" in page and 'id="no-bonus-yet"' not in page
    control = _control_page(campaign)
    assert "No item bonus can be paid yet" not in control and 'id="bonus-unchecked"' not in control
    # Marking that gold public takes the bonus away on every page at once.
    assert mark_gold_public(campaign, True) == 1
    assert bonus_rule(campaign, kept_evidence=True).basis == NO_EVIDENCE
    assert 'id="no-bonus-yet"' in client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
