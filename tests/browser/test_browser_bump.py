"""BUMP end to end in headless Chromium: Task 1 qualification, edits refused (wrong checkpoint, non-minimal) and
accepted, N/A, expert review with a corrected type, the Task 2 exclusive pool, and the export round trip.
Screenshots go to test-output/screenshots/bump-*.png."""
from __future__ import annotations

import json

import pytest

from annotate.bump.models import Edit
from annotate.bump.services import create_bump_campaign
from annotate.models import (
    AssignmentStatus,
    BonusEntry,
    Campaign,
    Item,
    ReviewStatus,
    Summary,
)
from annotate.presentation import detokenize
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.imports import import_dataset
from annotate.services.participation import get_participation, record_qualification
from tests.browser import live_login
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify
from tests.integration.test_bump_views import qualification_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"
NON_MINIMAL = "The EU banned every flu drug , made anywhere , last year for good ."


def _submit_and_wait_for_error(page) -> str:
    page.click("#submit-edit")
    page.wait_for_selector("#submit-error:not([hidden])")
    return page.inner_text("#submit-error")


def test_task1_qualification_edits_refusals_and_na(browser_page, live_server, screenshot):
    page = browser_page
    campaign = create_bump_campaign("bump-e2e", "BUMP Task 1 (test)", "bump_taxonomy", status="running", shipped_qualification_accepted=True)
    make_bump_document(campaign, types=["extrinsic_entity", "coreference"])
    worker = make_worker("bump-editor")
    live_login(page, live_server, "bump-editor", PASSWORD)

    page.goto(f"{live_server.url}/c/bump-e2e/")
    assert page.url.endswith("/bump/qualification/")
    for name, code in qualification_answers(campaign, worker).items():
        page.select_option(f"select[name={name}]", code)
    screenshot(page, "bump-01-qualification")
    page.click("#submit-qualification")
    page.wait_for_selector("#qualification-passed")
    page.click("#start-task")
    page.wait_for_selector("#edited-summary")
    assert page.url.endswith("/bump/task/")

    done_types = []
    for _ in range(2):
        requested = page.inner_text("#requested-type")
        code = page.inner_text("#checkpoint-code").strip()
        assert page.input_value("#edited-summary") == detokenize(BUMP_REFERENCE)  # shown readable
        if requested == "Extrinsic Entity Error":
            # Live diff while typing.
            page.fill("#edited-summary", BUMP_REFERENCE.replace("Merck", "Pfizer"))
            assert page.inner_text("#live-diff del") == "Merck" and page.inner_text("#live-diff ins") == "Pfizer"
            assert page.inner_text("#diff-count") == "1"
            # A wrong code is refused and the edit stays in the box.
            page.fill("#checkpoint", "WRONG9")
            assert "checkpoint code is wrong" in _submit_and_wait_for_error(page)
            assert page.input_value("#edited-summary") == BUMP_REFERENCE.replace("Merck", "Pfizer")
            screenshot(page, "bump-02-wrong-checkpoint")
            # A non-minimal edit is refused with the right code, and stays too.
            page.fill("#edited-summary", NON_MINIMAL)
            page.fill("#checkpoint", code)
            message = _submit_and_wait_for_error(page)
            assert "keep it minimal (at most 6 words changed" in message
            assert page.input_value("#edited-summary") == NON_MINIMAL
            screenshot(page, "bump-03-not-minimal")
            assert not Edit.objects.filter(is_not_applicable=False).exists()
            page.fill("#edited-summary", BUMP_REFERENCE.replace("Merck", "Pfizer"))
            page.click("#submit-edit")
        else:
            assert requested == "Coreference Error"
            page.check("#not-applicable")
            assert page.is_disabled("#edited-summary")
            page.fill("#checkpoint", code.lower())
            page.click("#submit-edit")
        page.wait_for_url("**/done/?submitted=1")
        done_types.append(requested)
        if len(done_types) < 2:
            page.click("#next-item")
            page.wait_for_selector("#edited-summary")
    screenshot(page, "bump-04-done")
    assert sorted(done_types) == ["Coreference Error", "Extrinsic Entity Error"]
    edit = Edit.objects.get(is_not_applicable=False)
    assert (edit.worker, edit.text, edit.hint_likely_kind, edit.assignment.status) == (worker, BUMP_REFERENCE.replace("Merck", "Pfizer"), "extrinsic", AssignmentStatus.SUBMITTED)
    assert Edit.objects.get(is_not_applicable=True).requested_error_type == "coreference"
    assert Item.objects.filter(campaign=campaign, for_experts=True, requested_error_type="coreference").count() == 1
    assert BonusEntry.objects.filter(worker=worker).count() == 0  # no base pay set; edit bonuses wait for review
    assert page.js_errors == []


def test_reviewer_corrects_a_type_and_the_export_round_trips(browser_page, live_server, screenshot, samples_dir, tmp_path):
    page = browser_page
    campaign = create_bump_campaign("bump-review", "BUMP review (test)", "bump_taxonomy", status="running")
    import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="bump-review")  # 7 reviewed pairs
    editor = make_worker("bump-editor2")
    qualify(editor, campaign)
    assignment = request_assignment(editor, campaign)
    reference = assignment.item.summary
    edited_text = reference.text.replace("Saturday Evening Post", "New Yorker", 1)
    submit_assignment(assignment.pk, editor, {"checkpoint": assignment.checkpoint.code, "edited": edited_text})
    edit = Edit.objects.get()
    make_worker("bump-admin", staff=True)
    live_login(page, live_server, "bump-admin", PASSWORD)

    page.goto(f"{live_server.url}/c/bump-review/bump/review/")
    card = page.locator(f"#edit-{edit.pk}")
    assert "New Yorker" in card.locator("ins").first.inner_text()
    card.locator("select[name=corrected_type]").select_option("other")
    screenshot(page, "bump-05-review")
    card.locator("button[value=correct]").click()
    page.wait_for_selector(f"#reviewed-{edit.pk}")
    assert "Type corrected" in page.inner_text(f"#reviewed-{edit.pk}")
    edit.refresh_from_db()
    assert (edit.review_status, edit.corrected_error_type) == (ReviewStatus.CORRECTED, "other")

    response = page.request.get(f"{live_server.url}/api/campaigns/bump-review/export/?format=bump")
    assert response.ok
    records = json.loads(response.body())
    assert len(records) == 8
    mine = next(r for r in records if r["edited_summary"] == edited_text)
    assert mine["corrected_error_type"] == "Other" and mine["reference_summary"] == reference.text

    def pairs(slug):
        return {(s.document.external_id, s.edited_from.text, s.text, s.requested_error_type, s.corrected_error_type,
                 tuple(sorted(s.metric_scores.values_list("metric", "value"))))
                for s in Summary.objects.filter(document__campaign__slug=slug, edited_from__isnull=False).select_related("document", "edited_from")}

    exported = tmp_path / "export.json"
    exported.write_bytes(response.body())
    import_dataset("bump", [exported], campaign_slug="bump-copy")
    assert pairs("bump-copy") == pairs("bump-review") and len(pairs("bump-copy")) == 8
    assert page.js_errors == []


def test_task1_qualifier_is_refused_from_task2(browser_page, live_server, screenshot):
    page = browser_page
    task1 = create_bump_campaign("bump-t1", "BUMP Task 1 (test)", "bump_taxonomy", status="running")
    task2 = create_bump_campaign("bump-t2", "BUMP Task 2 (test)", "bump_free", status="running", exclusive_with=task1)
    make_bump_document(task2)
    took = make_worker("bump-took-t1")
    record_qualification(get_participation(took, task1), score=1.0, passed=True, answers={})
    live_login(page, live_server, "bump-took-t1", PASSWORD)
    page.goto(f"{live_server.url}/c/bump-t2/")
    assert "only open to workers who did not take part in the related taxonomy task" in page.inner_text("main")
    screenshot(page, "bump-06-task2-refused")
    page.goto(f"{live_server.url}/c/bump-t2/bump/task/")
    assert "only open to workers who did not take part" in page.inner_text("main")
    assert not Edit.objects.exists()


def test_task2_demo_campaign_end_to_end(browser_page, live_server, screenshot):
    from django.core.management import call_command

    page = browser_page
    call_command("setup_bump_demo")
    editor = make_worker("bump-free-editor")
    live_login(page, live_server, "bump-free-editor", PASSWORD)
    page.goto(f"{live_server.url}/c/bump-task2/")
    assert page.url.endswith("/bump/qualification/")
    for name, value in qualification_answers(Campaign.objects.get(slug="bump-task2"), editor).items():
        if name.endswith("_type"):
            page.select_option(f"select[name={name}]", value)
        else:
            page.check(f"input[name={name}][value={value}]")
    page.click("#submit-qualification")
    page.wait_for_selector("#qualification-passed")
    page.click("#start-task")
    page.wait_for_selector("#edited-summary")
    assert page.locator("#not-applicable").count() == 0 and "of any kind" in page.inner_text("#instructions")
    reference = page.input_value("#edited-summary")
    words = reference.split()
    words[0] = "Officials"
    page.fill("#edited-summary", " ".join(words))
    page.fill("#checkpoint", page.inner_text("#checkpoint-code"))
    screenshot(page, "bump-07-task2-edit")
    page.click("#submit-edit")
    page.wait_for_url("**/done/?submitted=1")
    edit = Edit.objects.get(worker__user__username="bump-free-editor")
    assert edit.requested_error_type == "" and edit.edited_summary.text == " ".join(words)
    assert edit.source_summary.document.campaign.slug == "bump-task2"
    assert page.js_errors == []
