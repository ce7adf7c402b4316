"""Identity and CSP in headless Chromium: a study link naming another participant leaves the session alone
and offers to sign out, and the main pages run under ``script-src 'self'`` without a single refusal.
Screenshots go to test-output/screenshots/csp-*.png."""
from __future__ import annotations

import uuid

import pytest

from annotate.models import Worker
from annotate.providers import study_token
from tests.browser import live_login
from tests.factories import make_campaign, make_document, make_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"


def study_url(live_server, campaign, pid: str) -> str:
    return f"{live_server.url}/c/{campaign.slug}/?study={study_token(campaign)}&PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=x1"


def csp_refusals(page) -> list[str]:
    """Collect the console's CSP refusals ("Refused to execute inline script ...") of the page from now on."""
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text) if (
        "Content Security Policy" in message.text or "Refused to" in message.text) else None)
    return refused


def test_a_link_naming_another_participant_offers_to_sign_out(browser_page, live_server, screenshot):
    campaign = make_campaign()
    make_document(campaign)
    first, second = "A" + uuid.uuid4().hex[:16], "B" + uuid.uuid4().hex[:16]
    page = browser_page
    refused = csp_refusals(page)
    page.goto(study_url(live_server, campaign, first))
    assert "/frank/task/" in page.url
    page.goto(study_url(live_server, campaign, second))
    assert page.locator("h1").inner_text() == "This link is for another participant"
    assert page.locator("#signed-in-as").inner_text() == f"prolific {first}"
    assert page.locator("#link-names").inner_text() == f"prolific {second}"
    screenshot(page, "csp-01-identity-conflict")
    page.goto(f"{live_server.url}/c/{campaign.slug}/frank/task/")
    assert "/frank/task/" in page.url  # still the first participant's session
    assert not Worker.objects.filter(external_id=second).exists()

    page.go_back()
    page.click("#sign-out-and-continue button")
    page.wait_for_url("**/frank/task/")
    assert Worker.objects.filter(external_id=second).exists()
    assert page.locator(".who").inner_text() == f"prolific-{second}"
    assert refused == [] and page.js_errors == []


def test_main_pages_run_under_the_csp_without_a_refusal(browser_page, new_page, live_server, screenshot):
    campaign = make_campaign(prolific_completion_code="CODE7", prolific_screenout_code="OUT7")
    make_document(campaign)
    admin = make_worker("csp-admin", staff=True).user
    admin.is_superuser = True  # the Django admin's add pages too
    admin.save(update_fields=["is_superuser"])

    crowd = new_page()
    crowd_refused = csp_refusals(crowd)
    crowd.goto(study_url(live_server, campaign, "P" + uuid.uuid4().hex[:16]))
    crowd.wait_for_selector("#worker-rules")
    crowd.goto(f"{live_server.url}/c/{campaign.slug}/frank/tutorial/")
    crowd.wait_for_selector("#finish-tutorial")
    assert crowd_refused == [] and crowd.js_errors == []

    page = browser_page
    refused = csp_refusals(page)
    page.goto(f"{live_server.url}/accounts/login/")
    live_login(page, live_server, "csp-admin", PASSWORD)
    for path, ready in [
        (f"/manage/{campaign.slug}/", "#action-finish"),
        (f"/campaigns/{campaign.slug}/dashboard/", "[data-refresh-note], h1"),
        ("/api/docs/", ".swagger-ui .info .title"),
        ("/api/redoc/", "[role=search], .api-info, h1"),
        ("/admin/", "#site-name"),
        ("/admin/annotate/campaign/add/", "#content form"),
    ]:
        page.goto(live_server.url + path)
        page.wait_for_selector(ready)
        if path == "/api/docs/":
            screenshot(page, "csp-02-api-docs")
    # The confirm() of "Finish" comes from a static script now: dismissing it keeps the campaign running.
    page.goto(f"{live_server.url}/manage/{campaign.slug}/")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#action-finish")
    campaign.refresh_from_db()
    assert campaign.status == "running"
    # Redoc's bundle always asks its CDN for a "by Redocly" logo (and hides it when it does not load): the one
    # refusal expected, proof that nothing on these pages is fetched from elsewhere.
    assert [text for text in refused if "https://cdn.redoc.ly/redoc/logo-mini.svg" not in text] == []
    assert page.js_errors == []
