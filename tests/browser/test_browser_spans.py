"""The span task in headless Chromium: three workers complete three summaries each, one by mouse (click,
shift-click, drag), one by keyboard only, one on a 390 px phone; what the server stores is the words they chose.
Screenshots go to test-output/screenshots/spans-*.png."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from annotate.services.imports import import_dataset
from annotate.spans.models import GoldSpans, SpanAnswer
from annotate.spans.words import words
from tests.browser import live_login
from tests.factories import make_campaign, make_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"
SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"
WORD = "#span-summary .word"


@pytest.fixture
def campaign():
    campaign = make_campaign(kind="spans", redundancy=3)
    import_dataset("span_records", [SAMPLES / "goyal_style.json", SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    # This test is about the page: without control summaries no quality rule stops a worker half-way.
    GoldSpans.objects.all().delete()
    return campaign


def _open_task(page, live_server, campaign, username):
    make_worker(username)
    live_login(page, live_server, username, PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    page.wait_for_selector(WORD)
    page.wait_for_function("() => document.querySelector('#span-empty') && !document.querySelector('#span-empty').hidden")


def _load_ms(page) -> float:
    """How long the current task page took from the request to its load event (Navigation Timing)."""
    return page.evaluate("() => performance.getEntriesByType('navigation')[0].duration")


def _next_item(page) -> None:
    """From the page after a submit, on to the next summary."""
    page.wait_for_selector("#items-submitted")
    page.click("#next-item")
    page.wait_for_selector(WORD)


def _submit(page) -> None:
    page.click("#submit-spans")
    _next_item(page)


def _crowd_answers(username):
    return list(SpanAnswer.objects.filter(worker__user__username=username).select_related("summary").order_by("pk"))


def test_a_worker_marks_spans_by_mouse(browser_page, live_server, campaign, screenshot, test_output_dir):
    page = browser_page
    _open_task(page, live_server, campaign, "span-mouse")
    words = page.locator(WORD)
    # Item 1: click word 1, shift-click word 3 -> one span of words 1-3 (end exclusive 4).
    words.nth(1).click()
    words.nth(3).click(modifiers=["Shift"])
    assert page.locator(f"{WORD}.selecting").count() == 3
    page.select_option("#span-type", "extrinsic_np")
    page.click("#span-add")
    screenshot(page, "spans-01-mouse-marked")
    assert page.locator("#span-list li").count() == 1 and page.locator(f"{WORD}.marked").count() == 3
    _submit(page)
    # Item 2: drag from word 0 over to word 2, typed as a predicate error.
    box0, box2 = page.locator(WORD).nth(0).bounding_box(), page.locator(WORD).nth(2).bounding_box()
    page.mouse.move(box0["x"] + 2, box0["y"] + box0["height"] / 2)
    page.mouse.down()
    page.mouse.move(box2["x"] + 2, box2["y"] + box2["height"] / 2, steps=5)
    page.mouse.up()
    page.select_option("#span-type", "intrinsic_predicate")
    page.click("#span-add")
    _submit(page)
    # Item 3: "No error"; a submit with nothing chosen is refused first, with the reason on the page.
    page.click("#submit-spans")
    page.wait_for_selector("#submit-error:not([hidden])")
    assert "no error" in page.inner_text("#submit-error").lower()
    page.check("#no-error")
    load_ms = _load_ms(page)
    started = time.perf_counter()
    page.click("#submit-spans")
    page.wait_for_selector("#items-submitted")
    submit_ms = (time.perf_counter() - started) * 1000
    # This machine's figures, for the record (the submit includes loading the page that follows it).
    (test_output_dir / "spans-timings.json").write_text(json.dumps({"task_page_load_ms": round(load_ms), "submit_ms": round(submit_ms)}))
    _next_item(page)
    answers = _crowd_answers("span-mouse")
    assert [a.spans for a in answers] == [[[1, 4, "extrinsic_np"]], [[0, 3, "intrinsic_predicate"]], []]
    assert page.js_errors == []


def test_a_worker_marks_spans_with_the_keyboard_only(browser_page, live_server, campaign, screenshot):
    page = browser_page
    _open_task(page, live_server, campaign, "span-keys")
    for _ in range(3):
        page.locator(WORD).nth(0).focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")  # select word 2
        page.keyboard.press("Shift+ArrowRight")  # extend to word 3
        page.wait_for_function("() => document.querySelectorAll('#span-summary .word.selecting').length === 2")
        page.focus("#span-type")
        page.keyboard.press("ArrowDown")  # the second type: extrinsic noun phrase
        page.focus("#span-add")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelectorAll('#span-list li').length === 1")
        screenshot(page, "spans-02-keyboard")
        page.focus("#submit-spans")
        page.keyboard.press("Enter")
        page.wait_for_selector("#items-submitted")
        page.focus("#next-item")
        page.keyboard.press("Enter")
        page.wait_for_selector(WORD)
    answers = _crowd_answers("span-keys")
    assert [a.spans for a in answers] == [[[2, 4, "extrinsic_np"]]] * 3
    assert page.js_errors == []


def test_a_worker_marks_spans_on_a_390_px_phone(browser, live_server, campaign, screenshot):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, device_scale_factor=2)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        _open_task(page, live_server, campaign, "span-phone")
        for n in range(3):
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
            # Tap the first word, then the third: a touch screen extends the open selection.
            page.locator(WORD).nth(0).tap()
            page.locator(WORD).nth(2).tap()
            page.wait_for_function("() => document.querySelectorAll('#span-summary .word.selecting').length === 3")
            page.select_option("#span-type", "entire_sentence")
            page.locator("#span-add").tap()
            # The page shows the whole sentence the error stands for, as the server stores it.
            first_stop = page.evaluate("() => Array.from(document.querySelectorAll('#span-summary .word')).findIndex(w => w.textContent === '.')")
            assert page.locator(f"{WORD}.marked").count() == first_stop + 1
            if n == 0:
                screenshot(page, "spans-03-phone")
            page.locator("#submit-spans").tap()
            page.wait_for_selector("#items-submitted")
            page.locator("#next-item").tap()
            page.wait_for_selector(WORD)
        answers = _crowd_answers("span-phone")
        assert len(answers) == 3
        # An entire-sentence span covers the whole first sentence of its summary.
        for answer in answers:
            text = answer.summary.text
            start, end, kind = answer.spans[0]
            assert (start, kind) == (0, "entire_sentence") and end == words(text).index(".") + 1
        assert errors == []
    finally:
        context.close()


def test_a_reviewer_sets_a_gold_span_in_the_browser(browser_page, live_server, campaign, screenshot):
    page = browser_page
    make_worker("span-reviewer", staff=True)
    live_login(page, live_server, "span-reviewer", PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/spans/gold/")
    first = page.locator("#gold-summaries a[data-summary]").first
    summary_id = int(first.get_attribute("data-summary"))
    first.click()
    page.wait_for_selector(WORD)
    page.locator(WORD).nth(1).click()
    page.locator(WORD).nth(2).click(modifiers=["Shift"])
    page.select_option("#span-type", "intrinsic_np")
    page.click("#span-add")
    screenshot(page, "spans-04-gold")
    page.click("#submit-spans")
    page.wait_for_selector("#gold-summaries")
    gold = GoldSpans.objects.get(summary_id=summary_id)
    assert (gold.spans, gold.origin, gold.set_by.username) == ([[1, 3, "intrinsic_np"]], "admin", "span-reviewer")
    assert "Set by an admin: 1 span" in page.inner_text("#gold-summaries")
    assert page.js_errors == []


def test_a_worker_passes_the_qualification_in_the_browser_and_reaches_the_task(browser_page, live_server, screenshot):
    from django.conf import settings

    from annotate.spans import qualification

    campaign = make_campaign(kind="spans", qualification_required=True, qualification_pass_score=0.8)
    import_dataset("span_records", [SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    GoldSpans.objects.all().delete()
    page = browser_page
    _open = f"{live_server.url}/c/{campaign.slug}/"
    worker = make_worker("span-qualifier")
    live_login(page, live_server, "span-qualifier", PASSWORD)
    page.goto(_open)
    page.wait_for_selector("#submit-qualification")
    assert page.url.endswith("/spans/qualification/")
    for exercise in qualification.draw_test(settings.SECRET_KEY, campaign.pk, worker.pk, 0):
        for index in range(exercise.start, exercise.end):
            page.click(f"#{exercise.id} input[value='{index}']")
        page.select_option(f"#{exercise.id}_type", exercise.label)
    screenshot(page, "spans-05-qualification")
    page.click("#submit-qualification")
    page.wait_for_selector("#qualification-passed")
    page.goto(_open)
    page.wait_for_selector(WORD)
    assert page.url.endswith("/spans/task/")
    assert page.js_errors == []
