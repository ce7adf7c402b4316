"""FRANK end to end in headless Chromium: tutorial, qualification (fail, then pass), annotation with a trap,
bonus, and blocking on a failed reading check. Screenshots go to test-output/screenshots/frank-*.png."""
from __future__ import annotations

import pytest

from annotate.frank import content as frank_content
from annotate.frank.models import EntityAnswer
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Participation,
    PayDecision,
    PayDecisionKind,
    QualificationStatus,
    SentenceJudgement,
    Trap,
    TrapAnswer,
    Worker,
)
from tests.browser import live_login
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.integration.test_frank_protocol import TRAPS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"


def answer_sentence(page, factual: bool, categories: list[str], *, button: str = "#next-sentence") -> None:
    page.check("#answer-yes" if factual else "#answer-no")
    for code in categories:
        page.check(f"#categories input[value={code}]")
    page.click(button)


def test_tutorial_then_qualification_fail_and_pass(browser_page, live_server, screenshot):
    page = browser_page
    campaign = make_campaign(tutorial_required=True, qualification_required=True, qualification_attempts=2)
    make_document(campaign)
    worker = make_worker("ann-tutorial")
    live_login(page, live_server, "ann-tutorial", PASSWORD)
    page.goto(f"{live_server.url}/")
    page.click(f"a[href='/c/{campaign.slug}/']")
    assert "/frank/tutorial/" in page.url
    # A wrong category gets immediate feedback that explains the error.
    box = page.locator(".tutorial-sentence[data-summary='1'][data-index='3']")
    box.locator("input[value=no]").check()
    box.locator("input[value=EntE]").check()
    box.locator("button.check").click()
    page.wait_for_selector(".tutorial-sentence[data-summary='1'][data-index='3'] .feedback.bad")
    assert "'him' has no antecedent" in box.locator(".feedback").inner_text()
    screenshot(page, "frank-01-tutorial-feedback")
    for s, summary in enumerate(frank_content.TUTORIAL.summaries):
        for i, key in enumerate(summary):
            b = page.locator(f".tutorial-sentence[data-summary='{s}'][data-index='{i}']")
            b.locator("input[value=yes]" if key.factual else "input[value=no]").check()
            if not key.factual:
                for c in b.locator(".cats input:checked").all():
                    c.uncheck()
                b.locator(f"input[value={key.category}]").check()
            b.locator("button.check").click()
            page.wait_for_function("(el) => el.textContent.startsWith('Correct')", arg=b.locator(".feedback").element_handle())
    page.click("#finish-tutorial")
    assert "/frank/qualification/" in page.url
    assert Participation.objects.get(worker=worker).tutorial_done

    def take_test(flip: int) -> None:
        from annotate.frank.protocol import qualification_exercise

        k = 0
        # This worker's own draw from the pool for this attempt.
        exercise = qualification_exercise(Participation.objects.get(worker=worker, campaign=campaign))
        for s, summary in enumerate(exercise.summaries):
            for i, key in enumerate(summary):
                factual = key.factual if k >= flip else not key.factual
                page.check(f"input[name=s{s}_{i}_factual][value={'yes' if factual else 'no'}]")
                if not factual:
                    page.check(f"input[name=s{s}_{i}_cat][value={key.category or 'OutE'}]")
                k += 1
        page.click("#submit-qualification")

    take_test(flip=4)  # 9/13 = 69%
    page.wait_for_selector("#qualification-failed")
    # Pass or fail only: no score, and the tutorial stays open for learning.
    assert page.locator("#qualification-score").count() == 0 and "69%" not in page.content()
    assert page.locator("#tutorial-link").count() == 1
    screenshot(page, "frank-02-qualification-failed")
    page.click("text=Try again")
    take_test(flip=0)
    page.wait_for_selector("#qualification-passed")
    screenshot(page, "frank-03-qualification-passed")
    assert Participation.objects.get(worker=worker).qualification_status == QualificationStatus.PASSED
    assert not page.js_errors


def test_annotate_an_item_with_a_trap_and_earn_a_bonus(browser_page, live_server, screenshot):
    page = browser_page
    # One checked answer of each class decides the balanced score: the first item earns its bonus.
    campaign = make_campaign(trap_rate=1.0, redundancy=1, trap_min_count=1, min_seconds_per_sentence=0.0, control_min_per_class=1, bonus_confidence=0.0)
    # Gold sentences in one word-overlap band (the score is balanced within bands): the first item decides. Two of
    # each class, so that whichever the trap takes the place of, one of each is left.
    gold = [(True, []), (False, ["EntE"]), (True, []), (False, ["EntE"])]
    document = make_document(campaign, summaries=[["Greenvale's council approved a budget.", "Greenvale's city council rejected a new budget on Monday.",
                                                   "Greenvale's council approved a budget on Monday.", "Greenvale's city council rejected the budget."]],
                             traps={"F1": TRAPS["F1"]})
    # An admin's gold labels make the summary a control item (it looks like any other).
    from annotate.services.control_items import set_gold_label

    summary = document.summaries.get()
    for index, (factual, categories) in enumerate(gold):
        set_gold_label(summary, index, factual, *categories)
    # Their computed overlaps fall in different bands; one band makes the first item's checks decisive.
    from annotate.models import GoldLabel

    GoldLabel.objects.filter(summary=summary).update(overlap=0.9)
    Trap.objects.filter(document=document).update(overlap=0.9)
    worker = make_worker("ann-main")
    qualify(worker, campaign)
    make_worker("admin-main", staff=True)
    live_login(page, live_server, "ann-main", PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    page.wait_for_selector("#step-read:not([hidden])")
    screenshot(page, "frank-10-read-article")
    page.click("#done-reading")
    page.wait_for_selector("#step-entity:not([hidden])")
    assert page.locator("#read-article").is_hidden()
    assignment = Assignment.objects.get(worker=worker)
    entity = assignment.layout["entity"]
    screenshot(page, "frank-11-entity-question")
    page.check(f"input[name=entity][value='{entity['answer']}']")
    page.click("#entity-submit")
    page.wait_for_selector("#step-annotate:not([hidden])")
    assert page.locator("#annotate-article .relevant").count() >= 1
    screenshot(page, "frank-12-first-sentence")
    # The trap stands in place of one sentence (the one closest to it in length): as many sentences as the summary has.
    from annotate.frank.protocol import task_page_data

    at = assignment.layout["summaries"][0]["trap_at"]
    trap = Trap.objects.get(pk=assignment.layout["summaries"][0]["trap"])
    shown = task_page_data(assignment, campaign.relevant_sentences_k)["summaries"][0]["sentences"]
    assert len(shown) == 4 and shown[at]["text"].rstrip(".").lower() == trap.text.rstrip(".").lower()
    expected = [(trap.expected_factual, [] if trap.expected_factual else [trap.expected_category]) if i == at else gold[i] for i in range(4)]
    # First sentence correct; then reload: the answer and the position survive (localStorage).
    answer_sentence(page, *expected[0])
    page.reload()
    page.wait_for_selector("#step-annotate:not([hidden])")
    assert "sentence 2 of 4" in page.inner_text("#summary-title")
    assert "1 of 4" in page.inner_text("#progress-text")
    page.click("#next-sentence")  # no answer yet: a hint, no move
    assert "Answer Yes or No" in page.inner_text("#answer-hint")
    for i in range(1, 4):
        assert page.inner_text(".summary-sentence.current") == shown[i]["text"]
        if i == at:  # the trap: same markup as the others, written in the summary's style
            assert shown[i]["text"][0].isupper() and len(shown[i]["relevant"]) == len(shown[0]["relevant"])
            page.click("#toggle-instructions")
            assert page.locator("#instructions").is_visible()
            screenshot(page, "frank-14-trap-sentence-with-instructions")
            page.click("#toggle-instructions")
        elif not expected[i][0]:
            page.check("#answer-no")
            screenshot(page, "frank-13-error-categories")
        answer_sentence(page, *expected[i], button="#next-sentence")
    page.wait_for_selector("#step-submit:not([hidden])")
    screenshot(page, "frank-15-ready-to-submit")
    page.click("#submit-answers")
    page.wait_for_url("**/done/**")
    screenshot(page, "frank-16-done")
    assert page.inner_text("#items-submitted") == "1"
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    judgements = SentenceJudgement.objects.filter(assignment=assignment).order_by("sentence_index")
    assert [(j.factual, j.categories) for j in judgements] == [gold[i] for i in range(4) if i != at]
    assert all(j.lead_time_seconds is not None and j.lead_time_seconds > 0 for j in judgements)
    assert TrapAnswer.objects.get(assignment=assignment).correct
    assert BonusEntry.objects.filter(worker=worker, reason__startswith="item").count() == 1
    # The admin sees the worker, their score and the bonus owed.
    page.click("form[action='/accounts/logout/'] button")
    live_login(page, live_server, "admin-main", PASSWORD)
    page.goto(f"{live_server.url}/manage/{campaign.slug}/")
    row = page.locator("#worker-table tr[data-worker='ann-main']")
    assert "100% (1/1)" in row.inner_text() and "$1.00" in row.inner_text()
    assert "1 / 1" in page.inner_text("#items-done")
    screenshot(page, "frank-17-admin-page")
    assert not page.js_errors


def answer_the_reading_check_wrong(page, live_server, username: str, *, failed_before: int = 0) -> Worker:
    """A new worker opens an item, reads, and picks an option the article does mention."""
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker(username)
    live_login(page, live_server, username, PASSWORD)
    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    Participation.objects.filter(worker=worker, campaign=campaign).update(entity_failures=failed_before, entity_checks=failed_before)
    page.click("#done-reading")
    # Answerable without memory recall (Prolific's policy): the article stays on screen during the check.
    assert page.is_visible("#entity-article") and len(page.inner_text("#entity-article")) > 100
    entity = Assignment.objects.get(worker=worker).layout["entity"]
    page.check(f"input[name=entity][value='{(entity['answer'] + 1) % 3}']")
    page.click("#entity-submit")
    return worker


def annotate_and_submit(page) -> None:
    """Answer "yes" to every sentence, then submit (the reading check's answer goes with the answers)."""
    page.wait_for_selector("#step-annotate:not([hidden])")
    while page.locator("#step-annotate").is_visible():
        answer_sentence(page, True, [])
    page.wait_for_selector("#step-submit:not([hidden])")
    page.click("#submit-answers")
    page.wait_for_url("**/done/**")


def test_a_first_failed_reading_check_is_forgiven_with_the_article_in_view(browser_page, live_server, screenshot):
    page = browser_page
    worker = answer_the_reading_check_wrong(page, live_server, "ann-forgiven")
    # Nothing is sent before the submission: a reload keeps the answer given and goes on with the item.
    page.wait_for_selector("#step-annotate:not([hidden])")
    assert not EntityAnswer.objects.exists()
    page.reload()
    annotate_and_submit(page)
    assert "second wrong answer" in page.inner_text("#reading-check-missed")
    screenshot(page, "frank-19-reading-check-forgiven")
    participation = Participation.objects.get(worker=worker)
    assert not participation.is_blocked and (participation.entity_checks, participation.entity_failures) == (1, 1)
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.status == AssignmentStatus.SUBMITTED and not EntityAnswer.objects.get(assignment=assignment).correct
    assert not page.js_errors


def test_a_second_failed_reading_check_blocks_the_worker(browser_page, live_server, screenshot):
    page = browser_page
    worker = answer_the_reading_check_wrong(page, live_server, "ann-blocked", failed_before=1)
    annotate_and_submit(page)
    assert "reading check" in page.inner_text("#blocked-reason")
    assert not page.locator("#reading-check-missed").count() and not page.locator("#next-item").count()
    screenshot(page, "frank-20-blocked")
    assert Participation.objects.get(worker=worker).is_blocked
    # The item's answers are kept, and the item is not paid (the items before it are).
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.status == AssignmentStatus.SUBMITTED and SentenceJudgement.objects.filter(assignment=assignment).exists()
    assert PayDecision.objects.get(assignment=assignment, key=f"blocked:{assignment.pk}").kind == PayDecisionKind.REFUSED
    assert not BonusEntry.objects.filter(worker=worker).exists()
    assert not page.js_errors
