"""Crowd identity, completion and payment: each attack found on the crowd entry is a regression test.

Arrivals go through the real entry view (Django test client, PostgreSQL, the Redis-backed rate-limit cache);
every id, address and campaign is unique to its test, so rate counters never carry over between tests.
"""
from __future__ import annotations

import csv
import io
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.exporters.tabular import COLUMNS, csv_lines
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    CrowdEvent,
    CrowdEventKind,
    Participation,
    QualificationStatus,
    SentenceJudgement,
    Worker,
)
from annotate.providers import ID_MAX_LENGTH, study_token
from annotate.safe_csv import neutralise_cell
from annotate.services.assignments import (
    release_unattended_assignments,
    request_assignment,
)
from annotate.services.bonuses import ledger_csv
from annotate.services.crowd import ensure_prolific_codes
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.integration.test_frank_protocol import TRAPS, answers_for

pytestmark = pytest.mark.django_db


def uid(prefix: str = "P") -> str:
    return f"{prefix}{uuid.uuid4().hex[:16]}"


def an_ip() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def prolific_url(campaign, pid: str, *, token: str | None = None) -> str:
    token = study_token(campaign) if token is None else token
    return reverse("annotate:campaign", args=[campaign.slug]) + f"?study={token}&PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se{pid[:20]}"


def mturk_url(campaign, worker_id: str, assignment_id: str, submit_to: str = "https://workersandbox.mturk.com") -> str:
    return (
        reverse("annotate:campaign", args=[campaign.slug])
        + f"?study={study_token(campaign)}&workerId={worker_id}&assignmentId={assignment_id}&hitId=H1&turkSubmitTo={submit_to}"
    )


def submit_current(client: Client, campaign, worker: Worker, *, entity_right: bool = True) -> Assignment:
    """Open the task page, answer the reading check and submit the item as the page would."""
    assert client.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 200
    assignment = Assignment.objects.get(worker=worker, status=AssignmentStatus.ACTIVE)
    answer = assignment.layout["entity"]["answer"]
    choice = answer if entity_right else (answer + 1) % len(assignment.layout["entity"]["options"])
    client.post(reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk]), {"choice": choice}, content_type="application/json")
    assignment.refresh_from_db()
    if not Participation.objects.get(worker=worker, campaign=campaign).is_blocked:  # a first wrong answer is forgiven
        response = client.post(reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]), answers_for(assignment), content_type="application/json")
        assert response.status_code == 200, response.content
    return assignment


# --- 1. Study links -------------------------------------------------------------------------------------------


def test_arrival_without_or_with_a_wrong_study_token_is_refused_and_logged(client):
    campaign = make_campaign()
    pid = uid()
    for token in ("", "0" * 32):
        response = client.get(prolific_url(campaign, pid, token=token), REMOTE_ADDR=an_ip())
        assert response.status_code == 403 and b"This study link is not valid" in response.content
    assert not Worker.objects.filter(external_id=pid).exists() and "_auth_user_id" not in client.session
    assert CrowdEvent.objects.filter(campaign=campaign, kind=CrowdEventKind.BAD_LINK).count() == 2
    # Another campaign's token does not open this one.
    other = make_campaign()
    assert client.get(prolific_url(campaign, pid, token=study_token(other))).status_code == 403


def test_study_links_on_the_campaign_page_and_in_the_api_work(client, admin_client):
    campaign = make_campaign()
    make_document(campaign)
    page = admin_client.get(reverse("annotate:manage-campaign", args=[campaign.slug])).content.decode()
    token = study_token(campaign)
    assert f"?study={token}&amp;" + "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}" in page
    api = admin_client.get(f"/api/campaigns/{campaign.slug}/").json()["study_links"]
    assert api["mturk"] == f"http://testserver/c/{campaign.slug}/?study={token}"
    # What MTurk appends to the external question URL is accepted as is.
    response = client.get(api["mturk"] + "&assignmentId=A1&hitId=H1&turkSubmitTo=https%3A%2F%2Fwww.mturk.com&workerId=W1", REMOTE_ADDR=an_ip())
    assert response.status_code == 302 and Worker.objects.filter(provider="mturk", external_id="W1").exists()


def test_unlimited_identities_are_rate_limited_per_address(client, settings):
    """Attack: 300 anonymous arrivals created 300 users; now the address's fourth new id gets a 429 page."""
    settings.FACTLAB_RATELIMIT_CROWD_IDENTITY = "3/h"
    campaign = make_campaign()
    ip = an_ip()
    ids = [uid() for _ in range(4)]
    statuses = [Client().get(prolific_url(campaign, pid), REMOTE_ADDR=ip).status_code for pid in ids]
    assert statuses == [302, 302, 302, 429]
    refused = Client().get(prolific_url(campaign, uid()), REMOTE_ADDR=ip)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert b"Too many new participants arrived from your network address" in refused.content
    assert Client().get(prolific_url(campaign, ids[3]), REMOTE_ADDR=ip).status_code == 429  # same refusal again: not logged twice
    assert Worker.objects.filter(provider="prolific", external_id__in=ids).count() == 3
    # A returning worker is not a new identity: still welcome from that address, in their own browser.
    first = Client()
    pid = uid()
    settings.FACTLAB_RATELIMIT_CROWD_IDENTITY = "1/h"
    ip2 = an_ip()
    assert first.get(prolific_url(campaign, pid), REMOTE_ADDR=ip2).status_code == 302
    assert first.get(prolific_url(campaign, pid), REMOTE_ADDR=ip2).status_code == 302
    # Refusals are logged, a repeated one from the same address and id once per EVENT_REPEAT_SECONDS.
    assert CrowdEvent.objects.filter(campaign=campaign, kind=CrowdEventKind.RATE_LIMITED).count() == 2


def test_campaign_hourly_cap_on_new_identities(client):
    campaign = make_campaign(new_crowd_workers_per_hour=2)
    statuses = [Client().get(prolific_url(campaign, uid()), REMOTE_ADDR=an_ip()).status_code for _ in range(3)]
    assert statuses == [302, 302, 429]
    assert Worker.objects.filter(crowd_events__campaign=campaign).count() == 2
    # The cap counts the last hour only.
    CrowdEvent.objects.filter(campaign=campaign).update(created_at=timezone.now() - timedelta(hours=2))
    assert Client().get(prolific_url(campaign, uid()), REMOTE_ADDR=an_ip()).status_code == 302


@pytest.mark.parametrize("bad, message", [
    ("A" * (ID_MAX_LENGTH + 1), b"too long"),
    ("=HYPERLINK(1)", b"may only hold letters"),
    ("a b", b"may only hold letters"),
    ("<script>", b"may only hold letters"),
])
def test_malformed_ids_are_refused_with_a_clear_400(client, bad, message):
    campaign = make_campaign()
    response = client.get(reverse("annotate:campaign", args=[campaign.slug]), {"study": study_token(campaign), "PROLIFIC_PID": bad})
    assert response.status_code == 400 and message in response.content and b"PROLIFIC_PID" in response.content
    assert not Worker.objects.filter(provider="prolific").exists()


def test_over_long_ids_sharing_a_prefix_no_longer_collide(client):
    """Attack: two ids over 150 characters with one prefix collided on the truncated username (anonymous 500)."""
    campaign = make_campaign()
    prefix = "X" * 150
    for suffix in ("a", "b"):
        response = Client().get(prolific_url(campaign, prefix + suffix), REMOTE_ADDR=an_ip())
        assert response.status_code == 400 and b"too long" in response.content
    # The longest accepted ids are stored whole: two that differ only in their last character are two workers.
    ids = ["Y" * (ID_MAX_LENGTH - 1) + c for c in "ab"]
    for pid in ids:
        assert Client().get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip()).status_code == 302
    users = {w.user.username for w in Worker.objects.filter(external_id__in=ids)}
    assert users == {f"prolific-{pid}" for pid in ids}


def test_a_local_account_with_the_crowd_username_does_not_break_the_arrival(client):
    campaign = make_campaign()
    pid = uid()
    get_user_model().objects.create_user(username=f"prolific-{pid}", password="pw-x-123456")
    assert client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip()).status_code == 302
    worker = Worker.objects.get(provider="prolific", external_id=pid)
    assert worker.user.username.startswith(f"prolific-{pid}-")


# --- 2. Sessions ----------------------------------------------------------------------------------------------


def test_impersonation_another_browser_with_the_same_id_gets_nothing(client, admin_client):
    """Attack: anyone who knew a worker's id got that worker's session and assignment in progress."""
    campaign = make_campaign()
    make_document(campaign)
    pid = uid()
    owner = Client()
    assert owner.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip()).status_code == 302
    worker = Worker.objects.get(external_id=pid)
    assert owner.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 200
    assignment = Assignment.objects.get(worker=worker)

    intruder = Client()
    response = intruder.get(prolific_url(campaign, pid), REMOTE_ADDR="10.9.9.9", HTTP_USER_AGENT="evil-agent")
    assert response.status_code == 403 and b"in use in another browser" in response.content
    assert "_auth_user_id" not in intruder.session
    assert intruder.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 302  # to the login page
    intruder.cookies["factlab_crowd"] = f"prolific:{pid}"  # an unsigned (forged) binding changes nothing
    assert intruder.get(prolific_url(campaign, pid)).status_code == 403
    event = CrowdEvent.objects.filter(kind=CrowdEventKind.IDENTITY_REUSED, worker=worker).last()  # the first refusal
    assert event is not None and event.ip == "10.9.9.9" and event.detail == "evil-agent"
    page = admin_client.get(reverse("annotate:manage-campaign", args=[campaign.slug])).content.decode()
    assert "Crowd id presented by another browser (refused)" in page and pid in page
    # The owner's browser comes back with its cookie even after its session ended, and finds its assignment.
    del owner.cookies["sessionid"]
    assert "factlab_crowd" in owner.cookies
    assert owner.get(prolific_url(campaign, pid)).status_code == 302
    assert owner.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 200
    assert list(Assignment.objects.filter(worker=worker)) == [assignment]


@pytest.mark.parametrize("role", ["staff", "researcher", "reviewer", "local"])
def test_signed_in_accounts_are_never_swapped_for_a_crowd_worker(client, role):
    """Attack: a signed-in admin who opened a crowd link was silently logged in as that crowd worker."""
    from django.contrib.auth.models import Group

    campaign = make_campaign()
    user = get_user_model().objects.create_user(username=f"{role}-{uid()}", password="pw-x-123456", is_staff=role == "staff")
    if role in ("researcher", "reviewer"):
        user.groups.add(Group.objects.get_or_create(name=f"{role}s")[0])
    if role == "local":
        Worker.objects.create(user=user)
    client.force_login(user)
    pid = uid()
    response = client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    assert response.status_code == 403
    assert b"You are signed in with your own account" in response.content and user.username.encode() in response.content
    assert int(client.session["_auth_user_id"]) == user.pk
    assert not Worker.objects.filter(external_id=pid).exists()


# --- 3. Completion --------------------------------------------------------------------------------------------


def test_completion_code_only_after_the_required_items(client):
    """Attack: the completion code was shown to a worker who did nothing."""
    campaign = make_campaign(prolific_completion_code="DONE1", prolific_screenout_code="OUT1", completion_min_items=2)
    for _ in range(3):
        make_document(campaign)
    pid = uid()
    client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    worker = Worker.objects.get(external_id=pid)
    done_url = reverse("annotate:campaign-done", args=[campaign.slug])
    assert b"cc=" not in client.get(done_url).content
    submit_current(client, campaign, worker)
    page = client.get(done_url).content
    assert b"cc=" not in page and b"Submit 1 more item" in page
    submit_current(client, campaign, worker)
    page = client.get(done_url).content
    assert b"cc=DONE1" in page and b"cc=OUT1" not in page


def test_screen_out_code_only_for_the_screened_out(client):
    """Attack: a worker just blocked for failing the reading check was shown the completion code."""
    campaign = make_campaign(prolific_completion_code="DONE2", prolific_screenout_code="OUT2")
    make_document(campaign)
    make_document(campaign)
    pid = uid()
    client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    worker = Worker.objects.get(external_id=pid)
    submit_current(client, campaign, worker, entity_right=False)  # forgiven once (Prolific's rule): the item is submitted
    assert not Participation.objects.get(worker=worker).is_blocked
    submit_current(client, campaign, worker, entity_right=False)  # the second failure screens the worker out
    assert Participation.objects.get(worker=worker).is_blocked
    for url in (reverse("annotate:campaign-done", args=[campaign.slug]), reverse("annotate:campaign", args=[campaign.slug])):
        page = client.get(url).content
        assert b"cc=OUT2" in page and b"cc=DONE2" not in page
    # A worker who failed the qualification is screened out too; one who is still working sees neither code.
    failed = Client()
    pid2 = uid()
    failed.get(prolific_url(campaign, pid2), REMOTE_ADDR=an_ip())
    page = failed.get(reverse("annotate:campaign-done", args=[campaign.slug])).content
    assert b"cc=" not in page
    Participation.objects.filter(worker__external_id=pid2).update(qualification_status=QualificationStatus.FAILED)
    assert b"cc=OUT2" in failed.get(reverse("annotate:campaign-done", args=[campaign.slug])).content


def test_codes_are_set_on_the_campaign_page_and_in_the_api(admin_client):
    campaign = make_campaign()
    url = reverse("annotate:manage-crowd", args=[campaign.slug])
    form = {"prolific_completion_code": "CPAGE", "prolific_screenout_code": "SPAGE", "completion_min_items": 3,
            "mturk_items_per_assignment": 2, "new_crowd_workers_per_hour": 50, "unattended_release_minutes": 4}
    assert admin_client.post(url, form).status_code == 302
    campaign.refresh_from_db()
    assert (campaign.prolific_completion_code, campaign.prolific_screenout_code, campaign.completion_min_items) == ("CPAGE", "SPAGE", 3)
    bad = admin_client.post(url, {**form, "prolific_screenout_code": "CPAGE", "completion_min_items": 0})
    assert bad.status_code == 400 and b"must differ from the completion code" in bad.content
    campaign.refresh_from_db()
    assert campaign.prolific_screenout_code == "SPAGE" and campaign.completion_min_items == 3
    api = admin_client.patch(f"/api/campaigns/{campaign.slug}/", {"prolific_completion_code": "CAPI", "prolific_screenout_code": "SAPI",
                                                                   "mturk_items_per_assignment": 5}, content_type="application/json")
    assert api.status_code == 200 and api.json()["prolific_screenout_code"] == "SAPI"
    same = admin_client.patch(f"/api/campaigns/{campaign.slug}/", {"prolific_screenout_code": "CAPI"}, content_type="application/json")
    assert same.status_code == 400 and "prolific_screenout_code" in same.json()
    campaign.refresh_from_db()
    assert (campaign.prolific_completion_code, campaign.mturk_items_per_assignment) == ("CAPI", 5)


def test_demo_campaigns_get_codes():
    campaign = make_campaign()
    ensure_prolific_codes(campaign)
    campaign.refresh_from_db()
    assert campaign.prolific_completion_code and campaign.prolific_screenout_code
    assert campaign.prolific_completion_code != campaign.prolific_screenout_code
    kept = campaign.prolific_completion_code
    assert ensure_prolific_codes(campaign).prolific_completion_code == kept


@pytest.mark.parametrize("submit_to", [
    "https://www.mturk.com.evil.example",
    "https://www.mturk.com@evil.example",
    "https://user:pw@www.mturk.com",
    "http://www.mturk.com",
    "https://www.mturk.com:8443",
    "https://evil.example/?next=https://www.mturk.com",
    "https://evil.example/https://www.mturk.com",
    "https://www.mturk.com/mturk/externalSubmit?x=1",
    "https://www.mturk.com#evil",
    "//www.mturk.com",
    "javascript:alert(1)",
])
def test_turk_submit_to_must_be_exactly_an_mturk_host(client, submit_to):
    """Attack: turkSubmitTo was checked by prefix, so the final form posted to evil hosts."""
    campaign = make_campaign()
    response = client.get(reverse("annotate:campaign", args=[campaign.slug]), {
        "study": study_token(campaign), "workerId": uid("W"), "assignmentId": uid("A"), "turkSubmitTo": submit_to,
    }, REMOTE_ADDR=an_ip())
    assert response.status_code == 400 and b"turkSubmitTo parameter is not" in response.content
    assert not Worker.objects.filter(provider="mturk").exists()


@pytest.mark.parametrize("submit_to", ["https://www.mturk.com", "https://www.mturk.com/", "https://workersandbox.mturk.com"])
def test_turk_submit_to_accepts_production_and_sandbox(client, submit_to):
    campaign = make_campaign()
    response = client.get(mturk_url(campaign, uid("W"), uid("A"), submit_to), REMOTE_ADDR=an_ip())
    assert response.status_code == 302


def test_one_mturk_assignment_covers_the_configured_items_and_no_more(client):
    """Attack: one assignmentId took more items after its HIT's item was submitted (unpaid work)."""
    campaign = make_campaign(mturk_items_per_assignment=2)
    for _ in range(4):
        make_document(campaign)
    wid, aid = uid("W"), uid("A")
    client.get(mturk_url(campaign, wid, aid), REMOTE_ADDR=an_ip())
    worker = Worker.objects.get(external_id=wid)
    done_url = reverse("annotate:campaign-done", args=[campaign.slug])
    submit_current(client, campaign, worker)
    page = client.get(done_url).content.decode()
    assert "externalSubmit" not in page and 'id="next-item"' in page  # 1 of 2: keep going, nothing to submit yet
    submit_current(client, campaign, worker)
    page = client.get(done_url).content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page and f'value="{aid}"' in page
    assert 'id="next-item"' not in page
    task = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert task.status_code == 302 and task["Location"] == done_url
    assert Assignment.objects.filter(worker=worker).count() == 2
    assert set(Assignment.objects.filter(worker=worker).values_list("external_assignment_id", flat=True)) == {aid}
    # The worker's next HIT (a new assignmentId) covers new items again.
    client.get(mturk_url(campaign, wid, uid("A")))
    assert client.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 200
    assert Assignment.objects.filter(worker=worker).count() == 3


# --- 4. Slots -------------------------------------------------------------------------------------------------


def test_hoarded_slots_are_released_when_no_page_reports_being_open(client):
    """Attack: throwaway ids took every item for 60 minutes; unopened or silent claims now go after a few minutes."""
    campaign = make_campaign(redundancy=1, unattended_release_minutes=5)
    make_document(campaign)
    hoarder, genuine = make_worker(), make_worker()
    claimed = request_assignment(hoarder, campaign)
    assert request_assignment(genuine, campaign) is None  # the only slot is taken
    Assignment.objects.filter(pk=claimed.pk).update(created_at=timezone.now() - timedelta(minutes=6))
    got = request_assignment(genuine, campaign)
    assert got is not None and got.item_id == claimed.item_id
    claimed.refresh_from_db()
    assert claimed.status == AssignmentStatus.EXPIRED


def test_heartbeat_keeps_the_slot_and_its_absence_releases_it(client):
    campaign = make_campaign(redundancy=1, unattended_release_minutes=5)
    make_document(campaign)
    worker = make_worker()
    client.force_login(worker.user)
    assignment = request_assignment(worker, campaign)
    beat = reverse("annotate:assignment-heartbeat", args=[campaign.slug, assignment.pk])
    Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(minutes=30))
    elsewhere = reverse("annotate:assignment-heartbeat", args=[make_campaign().slug, assignment.pk])
    assert client.post(elsewhere).status_code == 410  # the assignment is heard from through its own campaign's URL only
    assert Assignment.objects.get(pk=assignment.pk).last_seen_at is None
    assert client.post(beat).status_code == 204
    assert release_unattended_assignments(campaign) == 0  # heard from just now
    Assignment.objects.filter(pk=assignment.pk).update(last_seen_at=timezone.now() - timedelta(minutes=6))
    assert release_unattended_assignments(campaign) == 1
    assignment.item.refresh_from_db()
    assert assignment.item.live_count == 0  # the stored live count frees the slot for the next claim
    gone = client.post(beat)
    assert gone.status_code == 410 and "no longer reserved" in gone.json()["detail"]
    other = Client()
    other.force_login(make_worker().user)
    assert other.post(beat).status_code == 410  # someone else's assignment is never touched
    assert Client().post(beat).status_code == 403


# --- 5. Admin -------------------------------------------------------------------------------------------------


def test_block_with_a_reason_on_the_campaign_page_and_in_the_api(admin_client):
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker()
    request_assignment(worker, campaign)
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    page = admin_client.get(reverse("annotate:manage-campaign", args=[campaign.slug])).content.decode()
    assert reverse("annotate:manage-block", args=[campaign.slug, participation.pk]) in page
    url = reverse("annotate:manage-block", args=[campaign.slug, participation.pk])
    assert b"Give a reason" in admin_client.post(url, {"reason": " "}, follow=True).content
    participation.refresh_from_db()
    assert not participation.is_blocked
    admin_client.post(url, {"reason": "copied answers"})
    participation.refresh_from_db()
    assert participation.is_blocked and participation.blocked_reason == "copied answers"
    assert not Assignment.objects.filter(worker=worker, status=AssignmentStatus.ACTIVE).exists()
    admin_client.post(reverse("annotate:manage-unblock", args=[campaign.slug, participation.pk]))
    api = admin_client.post(f"/api/campaigns/{campaign.slug}/participations/{participation.pk}/block/", {"reason": "api reason"},
                            content_type="application/json")
    assert api.status_code == 200
    participation.refresh_from_db()
    assert participation.blocked_reason == "api reason"


def test_payment_csvs_carry_what_each_platform_needs(admin_client):
    """Attack: the payments CSV lacked the MTurk assignment id needed to send a bonus."""
    campaign = make_campaign(pay_per_item=Decimal("0.50"))
    mturk = make_worker(provider="mturk", external_id=uid("W"))
    prolific = make_worker(provider="prolific", external_id=uid("P"))
    for worker, ext in ((mturk, "ASSIGN1"), (mturk, "ASSIGN2"), (prolific, "SESSION1")):
        doc = make_document(campaign)
        item = campaign.items.get(document=doc)
        a = Assignment.objects.create(item=item, worker=worker, status=AssignmentStatus.SUBMITTED, external_assignment_id=ext,
                                      expires_at=timezone.now() + timedelta(hours=1))
        BonusEntry.objects.create(key=f"pay:{a.pk}", worker=worker, campaign=campaign, assignment=a, amount=Decimal("0.50"), reason="pay per item")
        BonusEntry.objects.create(key=f"bonus:{a.pk}", worker=worker, campaign=campaign, assignment=a, amount=Decimal("1.00"), reason="bonus")
    rows = list(csv.reader(io.StringIO(admin_client.get(reverse("annotate:manage-bonuses-csv", args=[campaign.slug]) + "?format=mturk").content.decode())))
    assert rows[0] == ["WorkerId", "AssignmentId", "BonusAmount", "Reason"]
    assert [r[:3] for r in rows[1:]] == [[mturk.external_id, "ASSIGN1", "1.00"], [mturk.external_id, "ASSIGN2", "1.00"]]
    rows = list(csv.reader(io.StringIO(ledger_csv(campaign, fmt="prolific"))))
    assert rows == [[prolific.external_id, "1.00"]]
    assert admin_client.get(reverse("annotate:manage-bonuses-csv", args=[campaign.slug]) + "?format=nope").status_code == 400


# --- 6. Workers see the rules ---------------------------------------------------------------------------------


def test_task_page_owes_what_the_ledger_holds_in_this_campaign_after_each_entry(client, monkeypatch):
    """The owed total read with the participation: entries of this campaign only, as they are when the page opens."""

    def second_query(*args, **kwargs):
        raise AssertionError("the task page summed the ledger again")

    campaign, other = make_campaign(trap_rate=1.0), make_campaign()
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    qualify(worker, campaign)
    BonusEntry.objects.create(key=f"elsewhere:{worker.pk}", worker=worker, campaign=other, amount=Decimal("9.00"), reason="bonus")
    client.force_login(worker.user)
    monkeypatch.setattr("annotate.templatetags.crowd.worker_total", second_query)
    task_url = reverse("annotate:frank-task", args=[campaign.slug])
    assert 'id="owed-so-far">$0.00<' in client.get(task_url).content.decode()
    for n, amount in enumerate(["1.25", "0.50"]):
        BonusEntry.objects.create(key=f"here:{worker.pk}:{n}", worker=worker, campaign=campaign, amount=Decimal(amount), reason="pay per item")
    assert 'id="owed-so-far">$1.75<' in client.get(task_url).content.decode()


def test_task_page_states_pay_bonus_owed_and_blocking_rules_without_revealing_checks(client):
    """Attack: workers never saw pay, bonus rules, or what ends their participation."""
    campaign = make_campaign(pay_per_item=Decimal("0.75"), bonus_per_item=Decimal("1.00"), trap_rate=1.0, trap_block_threshold=0.5,
                             trap_min_count=3, bonus_min_score=0.6)
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    BonusEntry.objects.create(key=f"earlier:{worker.pk}", worker=worker, campaign=campaign, amount=Decimal("2.25"), reason="bonus")
    client.force_login(worker.user)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
    assert "$0.75</strong> per item" in page
    assert "$1.00</strong> per item submitted while your agreement with our known answers is at least 60%" in page
    assert 'id="owed-so-far">$2.25<' in page
    assert "a second wrong answer ends your participation" in page
    assert "giving the same answer everywhere scores 50%" in page and "If it falls below 60%" in page
    assert "fewer than 50% of at least 3 added check sentences are judged correctly, your participation ends" in page
    assert "working consistently faster holds your pay" in page
    assignment = Assignment.objects.get(worker=worker)
    assert reverse("annotate:assignment-heartbeat", args=[campaign.slug, assignment.pk]) in page
    rules = page[page.index('id="worker-rules"'):page.index("</details>")]
    for text in TRAPS.values():
        assert text not in rules  # the rules never name a control sentence


def test_bump_task_page_states_its_rules_too(client):
    from tests.factories import make_bump_document, qualify

    campaign = make_campaign(kind="bump_taxonomy", pay_per_item=Decimal("0.40"), entity_check_enabled=True, trap_rate=0.25)
    make_bump_document(campaign, types=["extrinsic_entity"])
    worker = make_worker()
    qualify(worker, campaign)
    client.force_login(worker.user)
    page = client.get(reverse("annotate:bump-task", args=[campaign.slug])).content.decode()
    assert 'id="worker-rules"' in page and "$0.40</strong> per item" in page and "reviewed by an expert" in page
    assert "reading check" not in page.lower() and "Hidden checks" not in page  # FRANK-only rules stay off BUMP pages
    assignment = Assignment.objects.get(worker=worker)
    assert reverse("annotate:assignment-heartbeat", args=[campaign.slug, assignment.pk]) in page


# --- 7. CSV injection -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    ("=HYPERLINK(\"http://evil\",\"x\")", "'=HYPERLINK(\"http://evil\",\"x\")"),
    ("+cmd", "'+cmd"), ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("plain", "plain"), ("-0.25", "-0.25"), ("+3", "+3"), (-2.5, -2.5), ("", ""),
])
def test_formula_leading_cells_are_neutralised(value, expected):
    assert neutralise_cell(value) == expected


def test_every_csv_export_neutralises_a_formula_crowd_id(admin_client):
    """Attack: a crowd id such as =HYPERLINK(...) landed unescaped in workers.csv."""
    campaign = make_campaign()
    evil = '=HYPERLINK("http://evil.example","click")'
    worker = make_worker(provider="prolific", external_id=evil)
    doc = make_document(campaign)
    item = campaign.items.get(document=doc)
    a = Assignment.objects.create(item=item, worker=worker, status=AssignmentStatus.SUBMITTED, expires_at=timezone.now() + timedelta(hours=1))
    Participation.objects.create(worker=worker, campaign=campaign, items_submitted=1, is_blocked=True, blocked_reason="@evil")
    BonusEntry.objects.create(key=f"b:{a.pk}", worker=worker, campaign=campaign, assignment=a, amount=Decimal("1.00"), reason="bonus")
    SentenceJudgement.objects.create(summary=doc.summaries.first(), sentence_index=0, worker=worker, assignment=a, factual=True)
    outputs = [admin_client.get(reverse(f"annotate:manage-{name}-csv", args=[campaign.slug]) + query).content.decode()
               for name, query in (("workers", ""), ("judgements", ""), ("bonuses", ""), ("bonuses", "?format=prolific"))]
    outputs.append(ledger_csv(campaign, fmt="mturk"))
    outputs.append("".join(csv_lines([dict.fromkeys(COLUMNS, evil)])))
    for text in outputs:
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                assert not cell.startswith(("=", "+", "@", "\t", "\r")) and not (cell.startswith("-") and not cell.lstrip("-").replace(".", "").isdigit()), (text, cell)
    assert "'=HYPERLINK(" in outputs[0] and "'@evil" in outputs[0] and "'=HYPERLINK(" in outputs[1]
