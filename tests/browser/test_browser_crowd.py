"""Crowd entry in headless Chromium: a crowd id stays in the browser that created it, staff sessions
are never swapped, task pages state the rules and keep their item with heartbeats, and the campaign page blocks
with a reason. Screenshots go to test-output/screenshots/crowd-*.png."""
from __future__ import annotations

import time
import uuid

import pytest

from annotate.models import (
    Assignment,
    CrowdEvent,
    CrowdEventKind,
    Participation,
    Worker,
)
from annotate.providers import study_token
from tests.browser import live_login
from tests.factories import make_campaign, make_document, make_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"


def study_url(live_server, campaign, pid: str) -> str:
    return f"{live_server.url}/c/{campaign.slug}/?study={study_token(campaign)}&PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=x1"


def wait_for(predicate, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_crowd_id_stays_in_the_browser_that_created_it(browser_page, new_page, live_server, screenshot):
    campaign = make_campaign(prolific_completion_code="CODE9", prolific_screenout_code="OUT9")
    make_document(campaign)
    pid = "P" + uuid.uuid4().hex[:20]
    owner = browser_page
    owner.goto(study_url(live_server, campaign, pid))
    assert "/frank/task/" in owner.url
    # The task page states pay, bonus and blocking rules, and its heartbeat reserves the item.
    rules = owner.locator("#worker-rules")
    assert "a second wrong answer ends your participation" in rules.inner_text()
    assert owner.locator("#owed-so-far").inner_text() == "$0.00"
    assignment = Assignment.objects.get(worker__external_id=pid)
    assert wait_for(lambda: Assignment.objects.get(pk=assignment.pk).last_seen_at is not None)
    screenshot(owner, "crowd-01-task-rules")

    intruder = new_page()
    intruder.goto(study_url(live_server, campaign, pid))
    assert "This participant id is in use in another browser" in intruder.locator("h1").inner_text()
    screenshot(intruder, "crowd-02-id-in-another-browser")
    intruder.goto(f"{live_server.url}/c/{campaign.slug}/frank/task/")
    assert "/accounts/login/" in intruder.url  # neither the session nor the assignment
    assert CrowdEvent.objects.filter(kind=CrowdEventKind.IDENTITY_REUSED, external_id=pid).count() == 1
    # The owner's browser keeps working, and no code is shown before an item is submitted.
    owner.goto(f"{live_server.url}/c/{campaign.slug}/done/")
    assert owner.locator("#completion-link").count() == 0 and owner.locator("#screenout-link").count() == 0
    assert owner.js_errors == [] and intruder.js_errors == []


def test_staff_opening_a_crowd_link_keeps_their_session(browser_page, live_server, screenshot):
    campaign = make_campaign()
    make_worker("crowd-admin", staff=True)
    page = browser_page
    live_login(page, live_server, "crowd-admin", PASSWORD)
    pid = "P" + uuid.uuid4().hex[:20]
    page.goto(study_url(live_server, campaign, pid))
    assert "You are signed in with your own account" in page.locator("h1").inner_text()
    assert "crowd-admin" in page.content()
    screenshot(page, "crowd-03-staff-session-kept")
    page.goto(f"{live_server.url}/manage/{campaign.slug}/")
    assert page.locator("#study-link-prolific").inner_text().endswith("SESSION_ID={{%SESSION_ID%}}")
    assert not Worker.objects.filter(external_id=pid).exists()


def test_block_button_with_a_reason_on_the_campaign_page(browser_page, live_server, screenshot):
    campaign = make_campaign()
    make_document(campaign)
    make_worker("crowd-admin2", staff=True)
    worker = make_worker("to-block")
    Participation.objects.create(worker=worker, campaign=campaign)
    page = browser_page
    live_login(page, live_server, "crowd-admin2", PASSWORD)
    page.goto(f"{live_server.url}/manage/{campaign.slug}/")
    row = page.locator("tr[data-worker='to-block']")
    row.locator("input[name=reason]").fill("answers copied from another worker")
    row.locator("button.block").click()
    page.wait_for_load_state()
    row = page.locator("tr[data-worker='to-block']")
    assert "answers copied from another worker" in row.inner_text() and row.locator("button.unblock").count() == 1
    screenshot(page, "crowd-04-blocked-with-reason")
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    assert participation.is_blocked and participation.blocked_reason == "answers copied from another worker"
    # The worker sees the reason.
    page.context.clear_cookies()
    live_login(page, live_server, "to-block", PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    assert "answers copied from another worker" in page.locator("#problem").inner_text()
