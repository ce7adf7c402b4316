"""The task-page kit in headless Chromium: a FRANK item done with the keyboard alone (shortcuts written on the
page, focus following each step, progress told to assistive technology), a FRANK item on a 390 px phone (each
sentence and its Yes/No on screen together after "Next sentence"), and BUMP's editor on the phone (brought up
above where an on-screen keyboard opens). Screenshots go to test-output/screenshots/kit-*.png."""
from __future__ import annotations

import pytest

from annotate.bump.services import create_bump_campaign
from annotate.models import Assignment, AssignmentStatus, SentenceJudgement
from tests.browser import BROWSER_TIMEOUT_MS, live_login
from tests.factories import make_bump_document, make_campaign, make_document, make_worker, qualify

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"
PHONE = {"width": 390, "height": 844}
SUMMARIES = [
    ["Greenvale's city council approved a new budget on Monday after a long debate about the town's finances.",
     "Mayor Helen Carter said the budget includes money for three new schools and a bridge over the river.",
     "Councillors Smith and Jones voted against the plan, saying that taxes would rise next year.",
     "The vote was seven to two, and the councillors who lost said they would ask the county to review the plan.",
     "Construction of the first of the three schools will begin in April on land near the river, the mayor said."],
    ["The council of Greenvale approved a budget that funds new schools, which Carter expects to open in 2026."],
]
SENTENCES = sum(len(s) for s in SUMMARIES)


def active_id(page) -> str:
    return page.evaluate("() => document.activeElement && document.activeElement.id")


def phone_page(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    return page


def open_task(page, live_server, campaign, username: str):
    """A qualified worker signed in on ``page`` and sent to the campaign's task page; returns the worker."""
    worker = make_worker(username)
    qualify(worker, campaign)
    live_login(page, live_server, username, PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    return worker


def viewport_screenshot(page, screenshot, name: str) -> None:
    """The whole page, then what the phone's screen shows (a full-page screenshot moves the window: put back)."""
    shown = page.evaluate("() => window.scrollY")
    path = screenshot(page, name)
    page.evaluate(f"() => window.scrollTo(0, {shown})")
    page.wait_for_function(f"() => window.scrollY === {shown}")
    page.screenshot(path=str(path.with_name(f"{name}-screen.png")))


def test_a_frank_item_with_the_keyboard_alone(browser_page, live_server, screenshot):
    page = browser_page
    campaign = make_campaign()
    make_document(campaign, summaries=SUMMARIES, negative_entity="Barcelona")
    worker = open_task(page, live_server, campaign, "kit-keys")
    page.wait_for_selector("#step-read:not([hidden])")
    # The shortcuts are written on the page; the focus is on the step's heading.
    legend = page.inner_text("[data-shortcuts]")
    assert all(word in legend for word in ("Keyboard:", "Y", "yes", "N", "no", "kind of error", "Enter", "previous sentence"))
    assert page.evaluate("() => document.activeElement.textContent").startswith("Step 1")
    bar = page.locator(".progress[role=progressbar]")
    assert bar.get_attribute("aria-valuetext") == "Step 1 of 3: read the article"
    screenshot(page, "kit-01-keyboard-read")
    page.keyboard.press("Enter")
    page.wait_for_selector("#step-entity:not([hidden])")
    assert page.evaluate("() => document.activeElement.textContent") == "Step 2: reading check"
    answer = Assignment.objects.get(worker=worker).layout["entity"]["answer"]
    page.keyboard.press(str(answer + 1))
    assert page.is_checked(f"input[name=entity][value='{answer}']")
    page.keyboard.press("Enter")
    page.wait_for_selector("#step-annotate:not([hidden])")
    categories = page.eval_on_selector_all("#categories input", "boxes => boxes.map(b => b.value)")
    total = int(bar.get_attribute("aria-valuemax"))
    assert total == SENTENCES
    for k in range(total):
        # Each sentence begins with the focus on its heading and the progress told.
        page.wait_for_function(f"() => document.querySelector('.progress').getAttribute('aria-valuenow') === '{k}'")
        assert active_id(page) == "summary-title"
        assert page.inner_text("#progress-live") == f"{k} of {total} sentences answered"
        if k == 1:
            page.keyboard.press("n")
            page.keyboard.press("2")
            assert page.is_checked("#answer-no") and page.is_checked(f"#categories input[value={categories[1]}]")
            screenshot(page, "kit-02-keyboard-no-and-category")
            # Back and forth with Enter and the arrow key: the answer is kept.
            title = page.inner_text("#summary-title")
            page.keyboard.press("Enter")
            page.wait_for_function("(t) => document.querySelector('#summary-title').textContent !== t", arg=title)
            page.keyboard.press("ArrowLeft")
            page.wait_for_function("(t) => document.querySelector('#summary-title').textContent === t", arg=title)
            assert page.is_checked("#answer-no") and active_id(page) == "summary-title"
        else:
            page.keyboard.press("y")
        page.keyboard.press("Enter")
    page.wait_for_selector("#step-submit:not([hidden])")
    assert page.evaluate("() => document.activeElement.textContent") == "All sentences answered"
    assert page.inner_text("#progress-live") == f"{total} of {total} sentences answered"
    screenshot(page, "kit-03-keyboard-ready-to-submit")
    page.keyboard.press("Enter")
    page.wait_for_url("**/done/**")
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.status == AssignmentStatus.SUBMITTED
    answers = sorted((j.factual, j.categories) for j in SentenceJudgement.objects.filter(assignment=assignment))
    assert answers == [(False, [categories[1]])] + [(True, [])] * (total - 1)
    assert not page.js_errors


def test_a_frank_item_on_a_phone_keeps_each_sentence_with_its_answers(browser, live_server, screenshot):
    campaign = make_campaign()
    make_document(campaign, summaries=SUMMARIES, negative_entity="Barcelona")
    page = phone_page(browser)
    worker = open_task(page, live_server, campaign, "kit-phone")
    page.wait_for_selector("#step-read:not([hidden])")
    page.tap("#done-reading")
    page.wait_for_selector("#step-entity:not([hidden])")
    answer = Assignment.objects.get(worker=worker).layout["entity"]["answer"]
    page.tap(f"input[name=entity][value='{answer}']")
    page.tap("#entity-submit")
    page.wait_for_selector("#step-annotate:not([hidden])")
    # No shortcut legend on a phone.
    assert page.locator("[data-shortcuts]").is_hidden()

    def on_screen(selector: str) -> bool:
        box = page.evaluate(f"() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect(); return [r.top, r.bottom]; }}")
        return box[0] >= 0 and box[1] <= PHONE["height"]

    for k in range(SENTENCES):
        # The sentence being judged and its Yes/No are on screen together.
        assert on_screen(".summary-sentence.current") and on_screen("#answer-yes") and on_screen("#answer-no"), f"sentence {k + 1}"
        if k == 1:
            viewport_screenshot(page, screenshot, "kit-04-phone-second-sentence")
        page.tap("#answer-yes")
        # The worker scrolls down to the end of the page (as one does to reach the button), then taps Next.
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        title = page.inner_text("#summary-title")
        page.tap("#next-sentence")
        if k < SENTENCES - 1:
            page.wait_for_function("(t) => document.querySelector('#summary-title').textContent !== t", arg=title)
            # A tap on "Next sentence" leaves the focus on the new sentence's heading, not on the button.
            assert active_id(page) == "summary-title"
    page.wait_for_selector("#step-submit:not([hidden])")
    page.tap("#submit-answers")
    page.wait_for_url("**/done/**")
    assert Assignment.objects.get(worker=worker).status == AssignmentStatus.SUBMITTED
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    assert not page.js_errors


def test_the_bump_editor_on_a_phone_comes_up_above_the_keyboard(browser, live_server, screenshot):
    campaign = create_bump_campaign("kit-bump", "BUMP kit (test)", "bump_free", status="running", shipped_qualification_accepted=True)
    make_bump_document(campaign)
    page = phone_page(browser)
    open_task(page, live_server, campaign, "kit-editor")
    page.wait_for_selector("#edited-summary")
    page.evaluate("() => window.scrollTo(0, 0)")
    top = page.evaluate("() => document.querySelector('#edited-summary').getBoundingClientRect().top")
    assert top > PHONE["height"] / 3  # below the article: an on-screen keyboard would cover it
    page.tap("#edited-summary")
    # Brought up to the top third of the screen, above where the keyboard opens; it stays there while typing.
    page.wait_for_function(f"() => {{ const t = document.querySelector('#edited-summary').getBoundingClientRect().top; return t >= 0 && t <= {PHONE['height'] / 3}; }}")
    page.keyboard.press("End")
    page.keyboard.type(" Experts disagree.")
    box = page.evaluate("() => { const r = document.querySelector('#edited-summary').getBoundingClientRect(); return [r.top, r.bottom]; }")
    assert 0 <= box[0] <= PHONE["height"] / 3 and box[1] <= PHONE["height"]
    assert "Experts disagree" in page.inner_text("#live-diff")
    viewport_screenshot(page, screenshot, "kit-05-phone-editor")
    assert not page.js_errors


def test_bump_submits_with_ctrl_enter_from_the_editor(browser_page, live_server, screenshot):
    page = browser_page
    campaign = create_bump_campaign("kit-bump-keys", "BUMP kit keys (test)", "bump_free", status="running",
                                    shipped_qualification_accepted=True)
    make_bump_document(campaign)
    open_task(page, live_server, campaign, "kit-bump-keys")
    page.wait_for_selector("#edited-summary")
    assert "Ctrl + Enter" in page.inner_text("[data-shortcuts]") and "submit" in page.inner_text("[data-shortcuts]")
    page.focus("#edited-summary")
    # Without the checkpoint code the submit is refused, with the message in the alert box.
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#submit-error:not([hidden])")
    assert "checkpoint" in page.inner_text("#submit-error").lower()
    screenshot(page, "kit-06-bump-ctrl-enter-refused")
    assert not page.js_errors
