"""The live dashboard in headless Chromium: it reloads while the campaign runs, never over unapplied filters."""
from __future__ import annotations

import pytest

from tests.browser import live_login
from tests.factories import make_campaign, make_document, make_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_running_dashboard_reloads_until_a_filter_is_changed(browser_page, live_server, settings):
    settings.FACTLAB_DASHBOARD_REFRESH_SECONDS = 1
    campaign = make_campaign()
    make_document(campaign)
    make_worker("dash-admin", staff=True)
    page = browser_page
    live_login(page, live_server, "dash-admin", "pw-factlab-1")
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/dashboard/")
    assert "refreshes every 1 seconds" in page.inner_text("[data-refresh-note]")

    page.evaluate("window.factlabMarker = 1")  # a reload wipes it
    page.wait_for_function("window.factlabMarker === undefined", timeout=5_000)

    page.evaluate("window.factlabMarker = 2")
    page.select_option("select[name=split]", "test")
    page.wait_for_selector("text=Automatic refresh paused", timeout=5_000)
    page.wait_for_timeout(2_500)
    assert page.evaluate("window.factlabMarker") == 2  # no reload: the unapplied choice is still there
    assert page.input_value("select[name=split]") == "test"
    assert page.js_errors == []


def test_finished_campaign_dashboard_does_not_reload(browser_page, live_server, settings):
    settings.FACTLAB_DASHBOARD_REFRESH_SECONDS = 1
    campaign = make_campaign(status="finished")
    make_worker("dash-admin2", staff=True)
    page = browser_page
    live_login(page, live_server, "dash-admin2", "pw-factlab-1")
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/dashboard/")
    page.evaluate("window.factlabMarker = 3")
    page.wait_for_timeout(2_500)
    assert page.evaluate("window.factlabMarker") == 3 and page.locator("[data-refresh-note]").count() == 0
