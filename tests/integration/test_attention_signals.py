"""Signals of outside help: what the task page reports with a submission (focus time, tab switches, copy and
paste events) is stored on the assignment with the words the page gave to read, shown to the admin beside the
worker's quality, and never a reason to refuse, block or hold by itself."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from annotate.bump.services import create_bump_campaign
from annotate.models import (
    Assignment,
    BonusEntry,
    CampaignStatus,
    Participation,
)
from annotate.services.assignments import request_assignment
from annotate.services.attention import clean_signals, worker_attention
from tests.factories import (
    BUMP_REFERENCE,
    make_bump_document,
    make_campaign,
    make_document,
    make_worker,
    qualify,
)
from tests.integration.test_frank_protocol import age, answers_for

pytestmark = pytest.mark.django_db

SIGNALS = {"focus_seconds": 42.5, "page_seconds": 60.0, "tab_switches": 3, "copies": 1, "pastes": 2}


def _submit(client, campaign, assignment, signals, key="k1"):
    url = reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk])
    return client.post(url, {**answers_for(assignment), "submission_key": key, "signals": signals}, content_type="application/json")


def test_a_frank_submission_stores_the_page_signals_and_the_admin_sees_them():
    campaign = make_campaign(entity_check_enabled=False, pay_per_item=Decimal("0.50"))
    document = make_document(campaign)
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    assignment = request_assignment(worker, campaign)
    age(assignment)
    response = _submit(client, campaign, assignment, SIGNALS)
    assert response.status_code == 200 and response.json()["ok"]
    assignment.refresh_from_db()
    words = len(document.text.split()) + sum(len(s.text.split()) for s in document.summaries.all())
    assert assignment.signals == {**SIGNALS, "reading_words": words}
    assert assignment.layout["reading_words"] == words  # counted when the page was prepared, kept by the claim
    # A replay of the same submission does not overwrite what the first one reported.
    replay = _submit(client, campaign, assignment, {**SIGNALS, "tab_switches": 99})
    assert replay.status_code == 200 and replay.json()["duplicate"]
    assignment.refresh_from_db()
    assert assignment.signals["tab_switches"] == 3
    attention = worker_attention(Participation.objects.get(worker=worker, campaign=campaign))
    expected_ratio = 42.5 / (words * 60 / 250)
    assert attention.items == 1 and attention.focus_ratio == pytest.approx(expected_ratio) and attention.pastes == 2
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    page = admin.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert f"focus {expected_ratio:.2f}× reading time (median); 3 tab switches, 1 copies, 2 pastes over 1 items" in page


def test_signals_never_refuse_block_or_hold_and_bad_values_are_dropped_by_name():
    campaign = make_campaign(entity_check_enabled=False, pay_per_item=Decimal("0.50"))
    for _ in range(3):
        make_document(campaign)
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    hostile = {"focus_seconds": "lots", "tab_switches": 10**9, "copies": -1, "pastes": True, "evil": 1, "page_seconds": 1e300}
    for number in range(3):
        assignment = request_assignment(worker, campaign)
        age(assignment)
        signals = hostile if number == 0 else {"focus_seconds": 0.5, "tab_switches": 40, "copies": 12, "pastes": 12}
        response = client.post(
            reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]),
            json.dumps({**answers_for(assignment), "submission_key": f"k{number}", "signals": signals}),
            content_type="application/json",
        )
        assert response.status_code == 200 and not response.json()["blocked"], response.content
    first = Assignment.objects.filter(worker=worker).order_by("pk").first()
    assert first.signals["tab_switches"] == 10_000 and first.signals["page_seconds"] == 86_400.0 and set(first.signals["dropped"]) == {"focus_seconds", "copies", "pastes", "evil"}
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    assert not participation.is_blocked and not participation.pay_held and participation.items_submitted == 3
    assert BonusEntry.objects.filter(worker=worker, reason="pay per item").count() == 3
    assert clean_signals("not an object") == {"dropped": ["signals (not an object)"]} and clean_signals(None) == {}


def test_a_bump_edit_reports_pasted_characters_and_the_reference_counts_as_reading():
    campaign = create_bump_campaign("signals-t1", "Task 1", "bump_taxonomy", status=CampaignStatus.RUNNING)
    reference = make_bump_document(campaign, types=["extrinsic_entity"])
    worker = make_worker()
    qualify(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    page = client.get(reverse("annotate:bump-task", args=[campaign.slug])).content.decode()
    assert "data-paste-count" in page
    assignment = Assignment.objects.get(worker=worker)
    ok = client.post(reverse("annotate:bump-submit", args=[campaign.slug, assignment.pk]), {
        "checkpoint": assignment.checkpoint.code, "edited": BUMP_REFERENCE.replace("Merck", "Pfizer"), "submission_key": "b1",
        "signals": {"focus_seconds": 30, "pastes": 1, "pasted_characters": 64},
    }, content_type="application/json")
    assert ok.status_code == 200
    assignment.refresh_from_db()
    words = len(reference.document.text.split()) + len(reference.text.split())
    assert assignment.signals == {"focus_seconds": 30.0, "pastes": 1, "pasted_characters": 64, "reading_words": words}
