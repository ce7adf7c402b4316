"""The reading check by Prolific's attention-check rules, through the pages a Prolific worker uses.

A first wrong answer is forgiven: the worker finishes that item and goes on. The second screens them out:
the page shows the screen-out code with the link back to Prolific, no completion code, and no further item;
every item submitted before stays paid, in the ledger and in the files the admin pays with (the screened-out
participant is not approved, so their items are paid as a Prolific bonus, never rejected).
"""
from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.test import Client
from django.urls import reverse

from annotate.models import Assignment, AssignmentStatus, BonusEntry, Participation, Worker
from tests.factories import make_campaign, make_document, make_worker
from tests.integration.test_crowd_identity import an_ip, prolific_url, uid
from tests.integration.test_frank_protocol import answers_for

pytestmark = pytest.mark.django_db

PAY = Decimal("0.40")


def open_item(client: Client, campaign, worker: Worker) -> Assignment:
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert page.status_code == 200
    return Assignment.objects.get(worker=worker, status=AssignmentStatus.ACTIVE)


def answer_reading_check(client: Client, campaign, assignment: Assignment, *, right: bool) -> dict:
    entity = assignment.layout["entity"]
    choice = entity["answer"] if right else (entity["answer"] + 1) % len(entity["options"])
    response = client.post(reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk]), {"choice": choice},
                           content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def submit(client: Client, campaign, assignment: Assignment) -> None:
    assignment.refresh_from_db()
    response = client.post(reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]), answers_for(assignment),
                           content_type="application/json")
    assert response.status_code == 200, response.content


def test_a_worker_who_fails_the_reading_check_once_goes_on_and_after_the_second_gets_the_screen_out_code_and_is_paid():
    campaign = make_campaign(prolific_completion_code="DONE-READ", prolific_screenout_code="OUT-READ", completion_min_items=5,
                             pay_per_item=PAY, bonus_per_item=Decimal("0"), entity_check_enabled=True)
    for _ in range(5):
        make_document(campaign)
    client = Client()
    pid = uid()
    assert client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip()).status_code == 302
    worker = Worker.objects.get(provider="prolific", external_id=pid)
    done_url = reverse("annotate:campaign-done", args=[campaign.slug])

    # First item: a wrong answer is forgiven; the worker finishes the item.
    first = open_item(client, campaign, worker)
    outcome = answer_reading_check(client, campaign, first, right=False)
    assert outcome["correct"] is False and outcome["blocked"] is False
    assert "You can go on with this item" in outcome["detail"] and "second wrong answer" in outcome["detail"]
    submit(client, campaign, first)
    # Second item: answered right, submitted.
    second = open_item(client, campaign, worker)
    assert second.pk != first.pk
    assert answer_reading_check(client, campaign, second, right=True)["correct"] is True
    submit(client, campaign, second)
    assert not Participation.objects.get(worker=worker, campaign=campaign).is_blocked
    assert b"cc=" not in client.get(done_url).content  # neither code yet: 2 of 5 items, still working

    # Third item: the second wrong answer screens the worker out; the item in hand is released.
    third = open_item(client, campaign, worker)
    outcome = answer_reading_check(client, campaign, third, right=False)
    assert outcome["blocked"] is True and "the items you submitted before are paid" in outcome["detail"]
    third.refresh_from_db()
    assert third.status == AssignmentStatus.RELEASED
    for url in (done_url, reverse("annotate:campaign", args=[campaign.slug])):
        page = client.get(url).content.decode()
        assert 'id="screenout-code">OUT-READ</code>' in page
        assert 'id="screenout-link" href="https://app.prolific.com/submissions/complete?cc=OUT-READ"' in page
        assert "DONE-READ" not in page
    client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert not Assignment.objects.filter(worker=worker, status=AssignmentStatus.ACTIVE).exists()
    assert Assignment.objects.filter(worker=worker, status=AssignmentStatus.SUBMITTED).count() == 2

    # Paid for the two items submitted: in the ledger, the payment file and Prolific's bonus file; not rejected.
    ledger = BonusEntry.objects.filter(worker=worker, campaign=campaign)
    assert ledger.filter(reason="pay per item").count() == 2
    assert ledger.aggregate(total=Sum("amount"))["total"] == 2 * PAY
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    files = reverse("annotate:manage-bonuses-csv", args=[campaign.slug])

    def rows(fmt: str) -> list[list[str]]:
        response = admin.get(files, {"format": fmt})
        assert response.status_code == 200
        return list(csv.reader(io.StringIO(response.content.decode())))

    assert [r for r in rows("generic") if r[3] == pid][0][4] == f"{2 * PAY:.2f}"
    assert rows("prolific") == [[pid, f"{2 * PAY:.2f}"]]
    assert rows("prolific-reject") == [] and rows("prolific-approve") == []
    decision = [r for r in rows("approval") if r[1] == pid][0]
    assert decision[3] == "screened-out" and "reading check" in decision[4] and f"{2 * PAY:.2f}" in decision[4]


def test_a_worker_blocked_by_the_hidden_checks_is_still_rejected_and_not_paid_a_bonus_for_it(client):
    """Only the reading check's screen-out pays the submitted items as a bonus: a block for bad answers
    (trap quality, an admin) stays a rejection with its reason."""
    from annotate.services.participation import block_participation

    campaign = make_campaign(prolific_completion_code="DONE-Q", prolific_screenout_code="OUT-Q", completion_min_items=5,
                             pay_per_item=PAY, bonus_per_item=Decimal("0"))
    for _ in range(2):
        make_document(campaign)
    pid = uid()
    client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    worker = Worker.objects.get(provider="prolific", external_id=pid)
    item = open_item(client, campaign, worker)
    answer_reading_check(client, campaign, item, right=True)
    submit(client, campaign, item)
    block_participation(Participation.objects.get(worker=worker, campaign=campaign), "answers to the control sentences were wrong")
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    files = reverse("annotate:manage-bonuses-csv", args=[campaign.slug])
    rejected = list(csv.reader(io.StringIO(admin.get(files, {"format": "prolific-reject"}).content.decode())))
    assert [r[0] for r in rejected] == [pid] and "control sentences" in rejected[0][1]
    assert admin.get(files, {"format": "prolific"}).content.decode() == ""
