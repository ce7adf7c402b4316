"""BUMP pages through Django's test client: qualification, entry flow, task page, submit API, review, demo setup."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotate.bump import content as bump_content
from annotate.models import (
    Assignment,
    Campaign,
    CampaignKind,
    CampaignStatus,
    Edit,
    Item,
    QualificationStatus,
    Summary,
)
from annotate.services.campaigns import create_bump_campaign
from annotate.services.participation import get_participation
from annotate.bump.review import make_reviewer
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = pytest.mark.django_db
RIGHT_TYPES = {e.id: e.error_type for e in bump_content.TAXONOMY_EDITS}


@pytest.fixture
def task1():
    campaign = create_bump_campaign("t1", "Task 1", CampaignKind.BUMP_TAXONOMY, status=CampaignStatus.RUNNING, qualification_attempts=2)
    make_bump_document(campaign, types=["extrinsic_entity"])
    return campaign


def _login(client, worker):
    client.force_login(worker.user)


def test_entry_sends_a_new_worker_to_the_qualification_which_hides_the_key(client, task1):
    worker = make_worker()
    _login(client, worker)
    response = client.get("/c/t1/")
    assert response.status_code == 302 and response["Location"] == "/c/t1/bump/qualification/"
    page = client.get("/c/t1/bump/qualification/").content.decode()
    assert page.count("<select name=") == 7 and "Lindqvist Museum" in page
    for code in RIGHT_TYPES.values():  # codes appear once per select as options, never tied to an edit
        assert page.count(f'value="{code}"') == 7


def test_taxonomy_qualification_incomplete_then_wrong_then_right(client, task1):
    worker = make_worker()
    _login(client, worker)
    partial = client.post("/c/t1/bump/qualification/", {"q1": RIGHT_TYPES["q1"]})
    assert partial.status_code == 400 and "Edit 2: choose its error type." in partial.content.decode()
    assert 'value="{}" selected'.format(RIGHT_TYPES["q1"]) in partial.content.decode()  # the answers stay
    assert get_participation(worker, task1).qualification_attempts == 0
    wrong = client.post("/c/t1/bump/qualification/", {**RIGHT_TYPES, "q2": "intrinsic_predicate"})
    assert "did not pass" in wrong.content.decode() and "86%" not in wrong.content.decode()  # pass or fail only
    right = client.post("/c/t1/bump/qualification/", RIGHT_TYPES)
    assert "You passed" in right.content.decode()
    assert get_participation(worker, task1).qualification_status == QualificationStatus.PASSED
    assert client.get("/c/t1/")["Location"] == "/c/t1/bump/task/"


def test_accuracy_qualification_and_the_exclusive_pool(client, task1):
    task2 = create_bump_campaign("t2", "Task 2", CampaignKind.BUMP_FREE, status=CampaignStatus.RUNNING, exclusive_with=task1)
    make_bump_document(task2)
    took_t1, fresh = make_worker(), make_worker()
    _login(client, took_t1)
    client.post("/c/t1/bump/qualification/", RIGHT_TYPES)
    refused = client.get("/c/t2/")
    assert refused.status_code == 403 and "did not take part in the related taxonomy task" in refused.content.decode()
    assert client.get("/c/t2/bump/qualification/")["Location"] == "/c/t2/"
    _login(client, fresh)
    page = client.get("/c/t2/bump/qualification/").content.decode()
    assert page.count("Is the summary accurate?") == 4
    answers = {p.id: "yes" if p.accurate else "no" for p in bump_content.ACCURACY_PAIRS}
    assert "You passed" in client.post("/c/t2/bump/qualification/", answers).content.decode()
    task_page = client.get("/c/t2/bump/task/").content.decode()
    assert "introduce one factual error of any kind" in task_page and "not-applicable" not in task_page
    assert "Do not write a new summary from scratch" in task_page and "same coverage" in task_page and "grammatical" in task_page


def test_task_page_and_submit_api(client, task1):
    worker = make_worker()
    qualify(worker, task1)
    _login(client, worker)
    page = client.get("/c/t1/bump/task/").content.decode()
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.checkpoint_code in page and "Extrinsic Entity Error" in page
    # Shown detokenised ("vaccine, made by Merck, on Thursday."): readable, and edits are compared on tokens.
    assert ">The FDA approved the first Ebola vaccine, made by Merck, on Thursday.</textarea>" in page
    url = f"/c/t1/bump/task/{assignment.pk}/submit/"
    wrong = client.post(url, {"checkpoint": "NOPE", "edited": BUMP_REFERENCE.replace("Merck", "Pfizer")}, content_type="application/json")
    assert wrong.status_code == 400 and wrong.json()["fields"] == {"checkpoint": "wrong code"}
    bad = client.post(url, "not json", content_type="application/json")
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["detail"]
    other = make_worker()
    _login(client, other)
    assert client.post(url, {"checkpoint": assignment.checkpoint_code}, content_type="application/json").status_code == 404  # like a missing assignment
    _login(client, worker)
    ok = client.post(url, {"checkpoint": assignment.checkpoint_code.lower(), "edited": BUMP_REFERENCE.replace("Merck", "Pfizer"),
                           "submission_key": "abc"}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["next"] == "/c/t1/done/?submitted=1"
    again = client.post(url, {"checkpoint": assignment.checkpoint_code, "edited": "x", "submission_key": "abc"}, content_type="application/json")
    assert again.json()["duplicate"] is True and Edit.objects.count() == 1


def test_review_page_is_for_reviewers_and_records_decisions(client, task1):
    worker = make_worker()
    qualify(worker, task1)
    _login(client, worker)
    client.get("/c/t1/bump/task/")
    assignment = Assignment.objects.get(worker=worker)
    client.post(f"/c/t1/bump/task/{assignment.pk}/submit/", {"checkpoint": assignment.checkpoint_code,
                "edited": BUMP_REFERENCE.replace("Merck", "Pfizer")}, content_type="application/json")
    edit = Edit.objects.get()
    assert client.get("/c/t1/bump/review/").status_code == 403
    assert client.post(f"/c/t1/bump/review/edit/{edit.pk}/", {"action": "accept"}).status_code == 403
    reviewer = make_worker("reviewer")
    make_reviewer(reviewer.user)
    _login(client, reviewer)
    page = client.get("/c/t1/bump/review/").content.decode()
    assert "<del>Merck</del>" in page and "<ins>Pfizer</ins>" in page and "likely extrinsic" in page
    missing = client.post(f"/c/t1/bump/review/edit/{edit.pk}/", {"action": "correct"}, follow=True)
    assert "Choose the edit&#x27;s error type" in missing.content.decode()
    client.post(f"/c/t1/bump/review/edit/{edit.pk}/", {"action": "correct", "corrected_type": "extrinsic_predicate"})
    edit.refresh_from_db()
    assert (edit.review_status, edit.corrected_error_type, edit.reviewer) == ("corrected", "extrinsic_predicate", reviewer.user)


def test_review_page_pages_both_lists_and_returns_to_the_page_decided_on(client, task1):
    reference = Summary.objects.get(document__campaign=task1, is_reference=True)
    for k in range(30):
        text = BUMP_REFERENCE.replace("Merck", f"Firm{k}")
        edited = Summary.objects.create(document=reference.document, system="edit", text=text, sentences=[text], edited_from=reference)
        Edit.objects.create(source_summary=reference, edited_summary=edited, requested_error_type="extrinsic_entity", word_distance=1, text=text)
    reviewer = make_worker("reviewer")
    make_reviewer(reviewer.user)
    _login(client, reviewer)
    first = client.get("/c/t1/bump/review/").content.decode()
    assert "Waiting for review (30)" in first and first.count('class="card review-edit"') == 25
    assert "Queue: page 1 of 2" in first and "?page=2&amp;reviewed_page=1" in first
    second = client.get("/c/t1/bump/review/?page=2").content.decode()
    assert second.count('class="card review-edit"') == 5 and "<ins>Firm29</ins>" in second
    last = Edit.objects.order_by("-id").first()
    back = client.post(f"/c/t1/bump/review/edit/{last.pk}/", {"action": "accept", "page": "2", "reviewed_page": "1", "position": "4"})
    # Back where the reviewer was: same pages, scrolled to the queue position decided on.
    assert back.status_code == 302 and back["Location"] == "/c/t1/bump/review/?page=2&reviewed_page=1#queue-4"
    after = client.get(back["Location"]).content.decode()
    assert "Waiting for review (29)" in after and "Reviewed (1)" in after and f'id="reviewed-{last.pk}"' in after
    assert client.get("/c/t1/bump/review/?page=99").status_code == 200  # out of range: the last page, no error


def test_setup_bump_demo_creates_running_exclusive_campaigns_idempotently():
    call_command("setup_bump_demo")
    call_command("setup_bump_demo")
    task1, task2 = Campaign.objects.get(slug="bump-task1"), Campaign.objects.get(slug="bump-task2")
    assert (task1.kind, task2.kind, task2.exclusive_with) == (CampaignKind.BUMP_TAXONOMY, CampaignKind.BUMP_FREE, task1)
    assert task1.status == task2.status == CampaignStatus.RUNNING and task1.redundancy == task2.redundancy == 1
    assert task1.qualification_pass_score == task2.qualification_pass_score == 1.0
    assert Item.objects.filter(campaign=task1).count() == 7 and Item.objects.filter(campaign=task2).count() == 8


def test_setup_bump_demo_falls_back_to_the_committed_copy(settings, tmp_path):
    from annotate.management.commands.setup_bump_demo import default_samples_dir

    settings.BASE_DIR = tmp_path / "repo"  # no ../shared next to it
    assert default_samples_dir() == tmp_path / "repo" / "data" / "bump-samples"
    from pathlib import Path

    committed = Path(__file__).resolve().parent.parent / "data" / "bump-samples"
    assert (committed / "LICENSE-bump").read_text().startswith("MIT License")
    call_command("setup_bump_demo", "--samples", str(committed))
    assert json.loads((committed / "bump_task1_sample.json").read_text())[0]["article_id"] == int(
        Campaign.objects.get(slug="bump-task1").documents.get().external_id)


def test_admin_campaign_page_links_to_the_review_queue(client):
    from django.contrib.auth import get_user_model

    from annotate.services.campaigns import create_bump_campaign

    campaign = create_bump_campaign(slug="bump-admin-link", name="BUMP admin link", kind="bump_taxonomy")
    admin = get_user_model().objects.create_user("bump-admin-link", password="pw-Admin-123", is_staff=True)
    client.force_login(admin)
    page = client.get(f"/manage/{campaign.slug}/")
    assert page.status_code == 200
    assert f'href="/c/{campaign.slug}/bump/review/"' in page.content.decode()
