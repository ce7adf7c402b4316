"""The dashboard in headless Chromium: charts drawn in the browser from small JSON specs; a running campaign's
page reloads only when its data changed, and never over unapplied filters."""
from __future__ import annotations

import pytest

from annotate.models import Campaign, Summary
from tests.browser import live_login
from tests.factories import make_campaign, make_document, make_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_running_dashboard_reloads_only_when_data_changes(browser_page, live_server, settings):
    settings.FACTLAB_DASHBOARD_REFRESH_SECONDS = 1
    campaign = make_campaign()
    document = make_document(campaign)
    make_worker("dash-admin", staff=True)
    page = browser_page
    live_login(page, live_server, "dash-admin", "pw-factlab-1")
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/dashboard/")
    assert "checks for new data every 1 seconds" in page.inner_text("[data-refresh-note]")

    page.evaluate("window.factlabMarker = 1")  # a reload wipes it
    page.wait_for_timeout(2_500)
    assert page.evaluate("window.factlabMarker") == 1  # nothing changed: no reload

    Summary.objects.create(document=document, system="new-system", text="A new summary.")
    page.wait_for_function("() => window.factlabMarker === undefined", timeout=5_000)

    page.evaluate("window.factlabMarker = 2")
    page.select_option("select[name=split]", "test")
    Summary.objects.create(document=document, system="another-system", text="Another summary.")
    page.wait_for_selector("text=Automatic refresh paused", timeout=5_000)
    page.wait_for_timeout(2_500)
    assert page.evaluate("window.factlabMarker") == 2  # no reload: the unapplied choice is still there
    assert page.input_value("select[name=split]") == "test"
    assert page.js_errors == []


def test_bump_dashboard_draws_charts_with_counts_and_significance(browser_page, live_server, samples_dir):
    from annotate.services.imports import import_dataset

    import_dataset("bump", [samples_dir / "bump_task1_sample.json", samples_dir / "bump_task2_sample.json"], campaign_slug="bump-dash")
    Campaign.objects.filter(slug="bump-dash").update(status="finished")
    make_worker("dash-admin2", staff=True)
    page = browser_page
    live_login(page, live_server, "dash-admin2", "pw-factlab-1")
    response = page.goto(f"{live_server.url}/campaigns/bump-dash/dashboard/")
    assert len(response.body()) < 100_000  # specs, not inline SVG
    page.wait_for_selector("figure[data-chart=roc_auc][data-drawn] svg")
    heatmap = page.inner_text("figure[data-chart=roc_auc]")
    assert "intrinsic entity (n=3)" in heatmap and "all (n=15)" in heatmap
    assert page.locator("#pair-significance tr").count() > 1
    assert "each pair's reference is one positive" in page.inner_text("figure[data-chart=roc_auc] figcaption")
    assert page.locator("#pairs td .ci").first.inner_text().startswith("[")
    page.evaluate("window.factlabMarker = 3")
    page.wait_for_timeout(1_500)
    assert page.evaluate("window.factlabMarker") == 3 and page.locator("[data-refresh-note]").count() == 0
    assert page.js_errors == []
