"""A first real study run from the browser by an admin who has never seen FactLab, in headless Chromium.

The admin uploads BUMP's released Task 2 file with the form's default choices; the detected kind is shown for
confirmation before anything is stored; the start is refused until the Prolific exit codes are set on the
campaign's settings page (reached from the readiness checklist); then two Prolific workers edit summaries, one
on a 390 px phone and one with the keyboard alone; the people page shows who is working and invites a reviewer,
who accepts the link and reviews an edit. Screenshots go to test-output/screenshots/first-study-*.png.
"""
from __future__ import annotations

import uuid

import pytest

from annotate.bump.models import Edit
from annotate.models import Assignment, AssignmentStatus, Campaign, CampaignStatus, ReviewStatus
from annotate.providers import study_token
from tests.browser import BROWSER_TIMEOUT_MS, follow, live_login
from tests.factories import make_worker

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SLUG = "first-study"
PHONE = {"width": 390, "height": 844}


def prolific_url(live_server, campaign: Campaign, pid: str) -> str:
    return f"{live_server.url}/c/{campaign.slug}/?study={study_token(campaign)}&PROLIFIC_PID={pid}&STUDY_ID=study-1&SESSION_ID=s-{pid}"


def with_one_word_changed(reference: str) -> str:
    """The reference with its first longer word replaced: a minimal edit that the editing rules accept."""
    words = reference.split(" ")
    k = next(i for i, word in enumerate(words) if i > 0 and word.isalpha() and len(word) >= 4)
    words[k] = "seventeen" if words[k].lower() != "seventeen" else "eighteen"
    return " ".join(words)


def focus_by_tab(page, element_id: str, *, limit: int = 80) -> int:
    """Press Tab until ``element_id`` has the focus (as a keyboard user does); returns how many presses it took."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement && document.activeElement.id") == element_id:
            return presses
    raise AssertionError(f"#{element_id} cannot be reached with Tab ({limit} presses)")


def wait_for_task_or_done(page) -> None:
    page.wait_for_function("() => document.querySelector('#edited-summary') || document.querySelector('#items-submitted')")


def admin_uploads_and_confirms(page, live_server, samples_dir, screenshot) -> None:
    page.goto(f"{live_server.url}/manage/")
    page.click("#new-campaign")
    page.fill("#id_slug", SLUG)
    # The form's defaults: kind and format from the file's content.
    assert page.input_value("#id_campaign_kind") == "" and page.input_value("#id_format") == "auto"
    page.set_input_files("#id_file", files=[{
        "name": "task2_dataset.json", "mimeType": "application/json",
        "buffer": (samples_dir / "bump_task2_sample.json").read_bytes(),
    }])
    page.click("#upload")
    page.wait_for_selector("#detected")
    assert "Task 2" in page.inner_text("#detected-kind") and "BUMP" in page.inner_text("#detected-format")
    assert not Campaign.objects.filter(slug=SLUG).exists()  # nothing stored before the admin confirms
    screenshot(page, "first-study-01-detected-kind")
    page.click("#confirm-import")
    page.wait_for_selector("#import-status[data-status=succeeded]")
    follow(page, "#open-campaign")
    page.wait_for_selector("#readiness")


def admin_sets_the_exits_and_starts(page, live_server, screenshot) -> None:
    assert "needed" in page.inner_text("#ready-exits")
    follow(page, "#action-start")
    assert "Cannot start the campaign yet" in page.inner_text("main") and page.inner_text("#campaign-status") == "Draft"
    screenshot(page, "first-study-02-start-refused")

    follow(page, "#ready-exits a.fix-link")
    page.wait_for_selector("#settings-crowd")
    assert page.url.endswith(f"/manage/{SLUG}/settings/#settings-crowd")
    assert "Copy both from your Prolific study" in page.inner_text("#settings-crowd")
    # Task 2 has no trap or control settings (its edits are checked by review), and the edit rules are there.
    assert page.locator("#id_trap_rate").count() == 0 and page.locator("#id_max_edit_distance").count() == 1
    page.fill("#id_prolific_completion_code", "C1STUDY")
    page.fill("#id_prolific_screenout_code", "C1STUDY")
    page.fill("#id_pay_per_item", "0.40")
    follow(page, "#settings-save")
    assert "must differ from the completion code" in page.inner_text("#error-prolific_screenout_code")
    assert Campaign.objects.get(slug=SLUG).prolific_completion_code == ""  # refused as a whole
    screenshot(page, "first-study-03-settings-refused")

    page.fill("#id_prolific_screenout_code", "S1STUDY")
    # The shipped qualification's answers are public: this admin runs the study without a qualification instead.
    assert page.locator("#open-qualification").count() == 1
    page.uncheck("#id_qualification_required")
    # The test's workers edit at machine speed, which the reading-time rule would count as no work done.
    page.fill("#id_min_seconds_per_sentence", "0")
    follow(page, "#settings-save")
    page.wait_for_selector(".messages li.success")
    assert "Settings saved" in page.inner_text(".messages")
    assert page.locator("#settings-readiness li.missing").count() == 0 and page.locator("#ready-all").count() == 1
    screenshot(page, "first-study-04-settings-saved")
    campaign = Campaign.objects.get(slug=SLUG)
    assert (campaign.prolific_completion_code, campaign.prolific_screenout_code, str(campaign.pay_per_item),
            campaign.qualification_required, campaign.min_seconds_per_sentence) == ("C1STUDY", "S1STUDY", "0.40", False, 0.0)

    page.goto(f"{live_server.url}/manage/{SLUG}/")
    assert page.locator("#readiness li.missing").count() == 0
    follow(page, "#action-start")
    assert page.inner_text("#campaign-status") == "Running"
    screenshot(page, "first-study-05-started")


def worker_edits(page, url: str, items: int, submit_one, open_next) -> None:
    """A Prolific worker edits ``items`` summaries (``submit_one(page, n)`` edits and submits the n-th, then
    ``open_next(page)`` leaves the thank-you page for the next), and gets the completion code."""
    page.goto(url)
    for n in range(1, items + 1):
        page.wait_for_selector("#edited-summary")
        submit_one(page, n)
        page.wait_for_url("**/done/?submitted=1")
        if n < items:
            assert page.inner_text("#next-item") == "Edit another summary"
            open_next(page)
    assert page.inner_text("#completion-code") == "C1STUDY"


def phone_submit(screenshot):
    def submit(page, n: int) -> None:
        # The page fits the phone: nothing wider than the screen.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        page.fill("#edited-summary", with_one_word_changed(page.inner_text("#reference-summary")))
        page.fill("#checkpoint", page.inner_text("#checkpoint-code"))
        page.locator("#submit-edit").scroll_into_view_if_needed()
        # Scrolled to the button, the worker still sees the checkpoint box and (part of) the editor above it.
        assert page.evaluate("() => document.querySelector('#submit-edit').getBoundingClientRect().bottom") <= PHONE["height"]
        assert page.evaluate("() => document.querySelector('#checkpoint').getBoundingClientRect().top") >= 0
        assert page.evaluate("() => document.querySelector('#edited-summary').getBoundingClientRect().bottom") > 0
        if n == 1:
            screenshot(page, "first-study-06-phone-task")
        page.tap("#submit-edit")
    return submit


def keyboard_submit(screenshot):
    def submit(page, n: int) -> None:
        reference = page.inner_text("#reference-summary")
        code = page.inner_text("#checkpoint-code")
        focus_by_tab(page, "edited-summary")
        page.keyboard.press("Control+a")
        page.keyboard.type(with_one_word_changed(reference))
        focus_by_tab(page, "checkpoint")
        page.keyboard.type(code)
        focus_by_tab(page, "submit-edit")
        if n == 1:
            screenshot(page, "first-study-08-keyboard-focus-on-submit")
        page.keyboard.press("Enter" if n == 1 else " ")  # a button takes either key
    return submit


def keyboard_next(page) -> None:
    focus_by_tab(page, "next-item")
    page.keyboard.press("Enter")


def test_a_new_admin_runs_a_bump_task2_study_from_upload_to_review(browser, browser_page, new_page, live_server, samples_dir, screenshot, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_worker("new-admin", staff=True)
    admin = browser_page
    live_login(admin, live_server, "new-admin", "pw-factlab-1")
    admin_uploads_and_confirms(admin, live_server, samples_dir, screenshot)
    campaign = Campaign.objects.get(slug=SLUG)
    assert campaign.kind == "bump_free" and campaign.items.filter(for_experts=False).count() == 8
    admin_sets_the_exits_and_starts(admin, live_server, screenshot)

    phone_context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    phone_context.set_default_timeout(BROWSER_TIMEOUT_MS)
    phone = phone_context.new_page()
    phone_errors: list[str] = []
    phone.on("pageerror", lambda exc: phone_errors.append(str(exc)))
    phone_pid = "P" + uuid.uuid4().hex[:23]
    worker_edits(phone, prolific_url(live_server, campaign, phone_pid), 2, phone_submit(screenshot), lambda page: page.tap("#next-item"))
    screenshot(phone, "first-study-07-phone-done")

    keyboard = new_page()
    keyboard_pid = "K" + uuid.uuid4().hex[:23]
    worker_edits(keyboard, prolific_url(live_server, campaign, keyboard_pid), 2, keyboard_submit(screenshot), keyboard_next)
    edits = Edit.objects.filter(source_summary__document__campaign=campaign)
    assert sorted(edits.values_list("worker__external_id", flat=True)) == sorted([phone_pid] * 2 + [keyboard_pid] * 2)

    # The phone worker opens a third item and stays on it: the people page shows who holds what, since when.
    phone.click("#next-item")
    phone.wait_for_selector("#edited-summary")
    admin.goto(f"{live_server.url}/manage/{SLUG}/")
    follow(admin, "#people-link")
    row = admin.locator(f"#working-table tr[data-worker='{phone_pid}']")
    assert row.count() == 1 and "prolific" in row.inner_text() and "2" in row.inner_text()
    held = Assignment.objects.get(worker__external_id=phone_pid, status=AssignmentStatus.ACTIVE)
    assert held.item.document.external_id in row.inner_text()
    assert keyboard_pid in admin.inner_text("#recently-active")

    admin.check("#invite-form input[name=role][value=reviewer]")
    admin.fill("#id_username", "rita-reviewer")
    admin.fill("#id_email", "rita@example.org")
    follow(admin, "#invite-submit")
    link = admin.input_value("#invitation-link")
    assert "/accounts/invite/" in link and "invited, link not used yet" in admin.inner_text("#access-table")
    screenshot(admin, "first-study-09-people")

    reviewer = new_page()
    reviewer.goto(link)
    reviewer.fill("input[name=password1]", "a-long-pass-phrase-9")
    reviewer.fill("input[name=password2]", "a-long-pass-phrase-9")
    reviewer.click("#set-password")
    reviewer.wait_for_url(f"**/c/{SLUG}/bump/review/")
    edit = edits.filter(worker__external_id=keyboard_pid).order_by("pk").first()
    card = reviewer.locator(f"#edit-{edit.pk}")
    assert "seventeen" in card.locator("ins").first.inner_text() or "eighteen" in card.locator("ins").first.inner_text()
    card.locator("select[name=corrected_type]").select_option("extrinsic_entity")
    screenshot(reviewer, "first-study-10-reviewer-queue")
    card.locator("button[value=correct]").click()
    reviewer.wait_for_selector(f"#reviewed-{edit.pk}")
    edit.refresh_from_db()
    assert edit.review_status == ReviewStatus.CORRECTED and edit.reviewer.username == "rita-reviewer"
    assert edit.corrected_error_type == "extrinsic_entity"
    screenshot(reviewer, "first-study-11-reviewed")
    # Invited for this campaign only: no admin pages.
    assert reviewer.goto(f"{live_server.url}/manage/{SLUG}/").status == 403

    assert Campaign.objects.get(slug=SLUG).status == CampaignStatus.RUNNING
    assert admin.js_errors == [] and keyboard.js_errors == [] and reviewer.js_errors == [] and phone_errors == []
    phone_context.close()
