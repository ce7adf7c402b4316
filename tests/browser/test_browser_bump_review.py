"""The BUMP review page in headless Chromium: the article with the inserted words highlighted,
the worker's pseudonym and history, Enter never submits, a decision stays in place and can be undone."""
from __future__ import annotations

from decimal import Decimal

import pytest

from annotate.bump.models import Edit
from annotate.bump.services import create_bump_campaign
from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import BonusEntry, ReviewStatus
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import worker_total
from tests.browser import live_login
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-factlab-1"


def test_review_page_enter_undo_and_position(browser_page, live_server, screenshot):
    page = browser_page
    # The edits are submitted at once: without the speed rule, or the editor would be held at the third.
    campaign = create_bump_campaign("bump-rv", "BUMP review page (test)", "bump_taxonomy", status="running",
                                    min_seconds_per_sentence=0.0)
    make_bump_document(campaign)
    editor = make_worker("bump-rv-editor")
    qualify(editor, campaign)
    for word in ("Guinea", "Pfizer", "Novartis", "Roche", "Bayer", "Sanofi"):
        assignment = request_assignment(editor, campaign)
        submit_assignment(assignment.pk, editor, {"checkpoint": assignment.checkpoint.code, "edited": BUMP_REFERENCE.replace("Merck", word)})
    edits = list(Edit.objects.order_by("id"))
    make_worker("bump-rv-admin", staff=True)
    live_login(page, live_server, "bump-rv-admin", PASSWORD)
    page.set_viewport_size({"width": 1000, "height": 600})
    page.goto(f"{live_server.url}/c/bump-rv/bump/review/")

    first = page.locator(f"#edit-{edits[0].pk}")
    assert worker_pseudonym(campaign.pk, editor.pk) in first.inner_text() and "6 awaiting review" in first.inner_text()
    first.locator("details.review-article summary").click()
    assert first.locator("details.review-article mark").first.inner_text() == "Guinea."  # intrinsic: found in the article

    # Enter in the comment box (and in the type menu) never submits a decision.
    target = page.locator(f"#edit-{edits[3].pk}")
    target.scroll_into_view_if_needed()
    comment = target.locator("textarea[name=comment]")
    comment.fill("looks fine")
    comment.press("Enter")
    target.locator("select[name=corrected_type]").press("Enter")
    page.wait_for_timeout(500)
    assert Edit.objects.get(pk=edits[3].pk).review_status == ReviewStatus.PENDING
    assert "looks fine\n" in comment.input_value()

    # A decision returns to the same place in the queue, not to the top.
    target.locator("button[value=accept]").click()
    page.wait_for_url("**#queue-3")
    page.wait_for_selector(f"#reviewed-{edits[3].pk}", state="attached")
    assert page.evaluate("window.scrollY") > 200
    top = page.evaluate("document.getElementById('queue-3').getBoundingClientRect().top")
    assert abs(top) < 80
    assert page.locator("#queue-3 + .review-edit").get_attribute("data-edit") == str(edits[4].pk)
    decided = Edit.objects.get(pk=edits[3].pk)
    assert decided.review_status == ReviewStatus.ACCEPTED and decided.review_comment.strip() == "looks fine"
    assert worker_total(editor, campaign) == Decimal("1.00")
    screenshot(page, "bump-06-review-in-place")

    # The decision can be undone: back in the queue, its bonus reversed.
    page.locator(f"#reviewed-{edits[3].pk} button[value=undo]").click()
    page.wait_for_selector(f"#edit-{edits[3].pk}")
    assert Edit.objects.get(pk=edits[3].pk).review_status == ReviewStatus.PENDING
    assert worker_total(editor, campaign) == Decimal("0.00")
    assert BonusEntry.objects.filter(key__startswith=f"edit-bonus:{edits[3].pk}:").count() == 2
