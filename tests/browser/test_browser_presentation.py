"""What a worker reads and where they leave, in headless Chromium on a desktop (1280 px) and a phone (390 px):
corpus text as a person writes it, the article in paragraphs, one category rule, the sentence under judgement
beside its evidence on a phone, rules collapsed after the first item, a truthful page for a submitted item,
BUMP pages and live diff, an exit code on every way out, dashboard labels.
Screenshots: test-output/screenshots/presentation-<viewport>-*.png."""
from __future__ import annotations

import json
import re
import time

import pytest

from annotate.bump.services import create_bump_campaign
from annotate.models import (
    Assignment,
    AssignmentStatus,
    CampaignStatus,
    Participation,
)
from tests.browser import BROWSER_TIMEOUT_MS, live_login
from tests.conftest import FRANK_DIR, SAMPLES_DIR
from tests.factories import (
    make_bump_document,
    make_campaign,
    make_document,
    make_worker,
    qualify,
)
from tests.integration.test_crowd_identity import prolific_url, uid
from tests.unit.test_presentation import artefacts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
# A FRANK article with a caption ("Scroll down for video"), quotes, and an s2s summary with UNK, all lower case.
ARTICLE_HASH = "e5f90abe548af86bae42ca91373ddbc828ac1a9e"


@pytest.fixture(params=list(VIEWPORTS))
def view(request, browser):
    """(viewport name, page) in a fresh context of that size."""
    context = browser.new_context(viewport=VIEWPORTS[request.param])
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    yield request.param, page
    context.close()


def frank_article() -> dict:
    return json.loads((FRANK_DIR / "articles" / f"{ARTICLE_HASH}.json").read_text(encoding="utf-8"))


def in_viewport(page, selector: str, wait_seconds: float = 5.0) -> bool:
    """Whether the element is (or, within ``wait_seconds``, comes) on screen: the page scrolls after rendering."""
    deadline = time.monotonic() + wait_seconds
    while True:
        box = page.locator(selector).first.bounding_box()
        height = page.viewport_size["height"]
        if box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= height:
            return True
        if time.monotonic() > deadline:
            return False
        page.wait_for_timeout(100)


def test_frank_text_layout_category_rule_rules_and_back(view, live_server, screenshot):
    name, page = view
    article = frank_article()
    campaign = make_campaign(trap_rate=1.0, redundancy=1, trap_min_count=1, min_seconds_per_sentence=0.0)
    trap = next(text for code, text in article["traps"] if code == "F6")
    for _ in range(2):
        make_document(campaign, article=article["article_lines"], summaries=[article["s2s_lines"], article["pgn_lines"]], traps={"F6": trap})
    worker = make_worker(f"reader-{name}")
    qualify(worker, campaign)
    live_login(page, live_server, worker.user.username, PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    page.wait_for_selector("#step-read:not([hidden])")
    # The article in paragraphs, its caption kept apart, no corpus artefact; rules open on the first item.
    assert page.locator("#read-article .article-paragraph").count() >= 10
    assert "Scroll down for video" in page.inner_text("#read-article .article-paragraph.caption >> nth=0")
    assert not artefacts(page.inner_text("#read-article"))
    assert page.locator("#worker-rules[open]").count() == 1
    screenshot(page, f"presentation-{name}-01-article-paragraphs")
    page.click("#done-reading")
    assignment = Assignment.objects.get(worker=worker, status=AssignmentStatus.ACTIVE)
    page.check(f"input[name=entity][value='{assignment.layout['entity']['answer']}']")
    page.click("#entity-submit")
    page.wait_for_selector("#step-annotate:not([hidden])")
    summary = page.inner_text("#summary-text")
    assert not artefacts(summary) and "UNK" not in summary
    # UNK as the neutral placeholder (explained in the instructions), the lower-case summaries truecased.
    shown = [s["text"] for summary in json.loads(page.inner_text("#task-data"))["summaries"] for s in summary["sentences"]]
    truecased = ["[?] hired a pair of pole dancing robots for an event in London.",
                 "Technology shows such as the annual E3 games conference in Los Angeles."]
    # The page's one trap takes the place of a sentence chosen at random, so one of the two may be hidden by it.
    assert sum(text in shown for text in truecased) >= len(truecased) - 1, shown
    assert all(text[0].isupper() or text[0] in "[‘“'\"" for text in shown) and not any(artefacts(text) for text in shown)
    assert "[?]" in page.inner_text("#unknown-word-rule")
    # The sentence under judgement and its underlined evidence are on screen together.
    assert in_viewport(page, ".summary-sentence.current") and in_viewport(page, "#annotate-article .relevant")
    screenshot(page, f"presentation-{name}-02-sentence-and-evidence")
    # One category rule everywhere: at most two, a third cannot be ticked.
    assert "at most two" in page.inner_text("#categories legend")
    page.check("#answer-no")
    page.check("#categories input[value=RelE]")
    page.check("#categories input[value=EntE]")
    assert page.locator("#categories input[value=CircE]").is_disabled()
    screenshot(page, f"presentation-{name}-03-two-categories")
    page.uncheck("#categories input[value=EntE]")
    assert page.locator("#categories input[value=CircE]").is_enabled()
    page.uncheck("#categories input[value=RelE]")
    while page.locator("#step-submit").is_hidden():
        page.check("#answer-yes")
        page.click("#next-sentence")
    # A second tab of the same item stays open while the first submits.
    stale = page.context.new_page()
    stale.goto(f"{live_server.url}/c/{campaign.slug}/frank/task/")
    stale.wait_for_selector("#step-submit:not([hidden])")  # the answers of the same item, kept in this browser
    page.click("#submit-answers")
    page.wait_for_url("**/done/**")
    # Shown again (as Back from the browser's cache does), the submitted item says so, then moves on.
    stale.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    stale.wait_for_selector("#already-submitted")
    assert "already submitted" in stale.inner_text("#already-submitted").lower()
    assert stale.locator("#step-submit").is_hidden() and stale.locator("#submit-answers").is_hidden()
    screenshot(stale, f"presentation-{name}-04-already-submitted")
    stale.wait_for_url(re.compile(r".*/frank/task/$|.*/c/[^/]+/$"))
    stale.wait_for_selector("#step-read:not([hidden]), #step-annotate:not([hidden])")
    next_assignment = Assignment.objects.get(worker=worker, status=AssignmentStatus.ACTIVE)
    assert next_assignment.pk != assignment.pk
    # After the first item the rules are collapsed, one tap away.
    assert stale.locator("#worker-rules").count() == 1 and stale.locator("#worker-rules[open]").count() == 0
    screenshot(stale, f"presentation-{name}-05-next-item-rules-collapsed")
    stale.close()
    assert not page.js_errors


def test_bump_page_and_live_diff_read_as_text(view, live_server, screenshot):
    name, page = view
    rows = json.loads((SAMPLES_DIR / "bump_task2_sample.json").read_text(encoding="utf-8"))
    row = next(r for r in rows if "19-year-old" in r["reference_summary"])
    campaign = create_bump_campaign(uid("bd").lower(), "BUMP Task 2", "bump_free", status=CampaignStatus.RUNNING)
    make_bump_document(campaign, reference=row["reference_summary"], article=row["article"])
    worker = make_worker(f"editor-{name}")
    qualify(worker, campaign)
    live_login(page, live_server, worker.user.username, PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/bump/task/")
    reference = page.inner_text("#reference-summary")
    assert " ." not in reference and not artefacts(reference)
    assignment = Assignment.objects.get(worker=worker)
    page.fill("#checkpoint", assignment.checkpoint.code)
    page.click("#submit-edit")  # the reference exactly as shown: refused
    page.wait_for_selector("#submit-error:not([hidden])")
    assert "same as the original" in page.inner_text("#submit-error")
    edited = page.input_value("#edited-summary").replace("19-year-old", "20-year-old")
    page.fill("#edited-summary", edited)
    diff = page.inner_text("#live-diff")
    assert page.inner_text("#live-diff del") == "19-year-old" and page.inner_text("#live-diff ins") == "20-year-old"
    assert "19 - year" not in diff and " ." not in diff and page.inner_text("#diff-count") == "1"
    screenshot(page, f"presentation-{name}-06-bump-live-diff")
    assert not page.js_errors


def test_every_exit_shows_a_code_to_copy_and_the_way_back(view, live_server, screenshot):
    name, page = view
    campaign = make_campaign(qualification_required=True, qualification_attempts=1,
                             prolific_completion_code=f"DONE{name.upper()}", prolific_screenout_code=f"OUT{name.upper()}")
    make_document(campaign)
    other = make_campaign()
    pid = uid()
    page.goto(live_server.url + prolific_url(campaign, pid))
    assert "/frank/qualification/" in page.url
    # Failed qualification: every answer "yes" fails it (the test has sentences with errors).
    for radio in page.locator("input[type=radio][value=yes]").all():
        radio.check()
    page.click("#submit-qualification")
    page.wait_for_selector("#qualification-failed")
    assert page.inner_text("#screenout-code") == f"OUT{name.upper()}"
    assert page.locator("#screenout-link").get_attribute("href").endswith(f"cc=OUT{name.upper()}")
    page.click(".copy-code")
    page.wait_for_function("() => document.querySelector('.copy-status').textContent.length > 0")
    screenshot(page, f"presentation-{name}-07-failed-qualification-code")
    # A clipboard request that never answers (a page without focus, say) still ends with the code selected.
    page.evaluate("() => { navigator.clipboard.writeText = () => new Promise(() => {}); "
                  "document.querySelector('.copy-status').textContent = ''; window.getSelection().removeAllRanges(); }")
    page.click(".copy-code")
    page.wait_for_function("() => document.querySelector('.copy-status').textContent.length > 0", timeout=5000)
    assert page.evaluate("() => window.getSelection().toString()").strip() == f"OUT{name.upper()}"
    # A crowd identity never sees other campaigns: home is its own study; another campaign is refused.
    page.goto(f"{live_server.url}/")
    assert f"/c/{campaign.slug}/" in page.url and "Campaigns" not in page.inner_text("h1")
    response = page.goto(f"{live_server.url}/c/{other.slug}/")
    assert response.status == 403 and "This study is not yours" in page.inner_text("main")
    screenshot(page, f"presentation-{name}-08-other-study-refused")
    # Completion: the code as text with a copy button.
    Participation.objects.filter(worker__external_id=pid, campaign=campaign).update(
        qualification_status="passed", items_submitted=campaign.completion_min_items,
    )
    page.goto(f"{live_server.url}/c/{campaign.slug}/done/")
    assert page.inner_text("#completion-code") == f"DONE{name.upper()}" and page.locator(".copy-code").is_visible()
    screenshot(page, f"presentation-{name}-09-completion-code")
    # No work left for a newcomer: the screen-out code, never a dead end.
    empty = make_campaign(prolific_completion_code="DONEX", prolific_screenout_code="OUTX")
    newcomer = page.context.browser.new_context(viewport=page.viewport_size).new_page()
    newcomer.goto(live_server.url + prolific_url(empty, uid()))
    newcomer.wait_for_selector("#screenout-code")
    assert "Nothing left to do" in newcomer.inner_text("h1") and newcomer.inner_text("#screenout-code") == "OUTX"
    screenshot(newcomer, f"presentation-{name}-10-no-work-left-code")
    newcomer.context.close()
    assert not page.js_errors


def test_dashboard_labels_are_readable(view, live_server, screenshot):
    from pathlib import Path

    from tests.test_report_support import frank_campaign

    name, page = view
    campaign = frank_campaign(Path(__file__).resolve().parents[2] / "data" / "frank-subset", f"dash-{name}")
    make_worker(f"dash-{name}", staff=True)
    live_login(page, live_server, f"dash-{name}", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/dashboard/")
    page.wait_for_selector("figure[data-chart=errors][data-drawn] svg")
    legend = page.inner_text("figure[data-chart=errors] .legend")
    assert "Relation error (RelE)" in legend and "Entity error (EntE)" in legend
    page.wait_for_selector("figure[data-chart=scatter][data-drawn] svg")
    assert "human factuality" in page.text_content("figure[data-chart=scatter] svg")
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('figure[data-chart=errors] svg')).fontSize)")
    assert size >= 13
    assert "Spearman Spearman" not in page.inner_text("main")
    screenshot(page, f"presentation-{name}-11-dashboard")
    assert not page.js_errors
