"""BUMP pages through Django's test client: qualification, entry flow, task page, submit API, review, demo setup."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotate.bump import content as bump_content
from annotate.bump.models import Edit
from annotate.bump.protocol import qualification_test
from annotate.bump.review import make_reviewer
from annotate.bump.services import create_bump_campaign
from annotate.models import (
    Assignment,
    Campaign,
    CampaignStatus,
    Item,
    QualificationStatus,
    Summary,
)
from annotate.services.participation import get_participation
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def qualification_answers(campaign, worker, *, wrong: int = 0) -> dict[str, str]:
    """The form answers that the worker's current (drawn) qualification test counts right, the first
    ``wrong`` of them made wrong."""
    test = qualification_test(get_participation(worker, campaign))
    answers: dict[str, str] = {}
    if isinstance(test, bump_content.TaxonomyTest):
        for n, edit in enumerate(test.edits, start=1):
            answers[f"e{n}"] = edit.error_type if n > wrong else next(c for c in bump_content.REQUESTABLE_CODES if c != edit.error_type)
        return answers
    for n, summary in enumerate(test.summaries, start=1):
        right = "yes" if summary.error_type is None else "no"
        answers[f"s{n}"] = right if n > wrong else {"yes": "no", "no": "yes"}[right]
        if answers[f"s{n}"] == "no":
            answers[f"s{n}_type"] = summary.error_type or "coreference"
    return answers


@pytest.fixture
def task1():
    campaign = create_bump_campaign("t1", "Task 1", "bump_taxonomy", status=CampaignStatus.RUNNING, qualification_attempts=2,
                                    shipped_qualification_accepted=True)
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
    n = 7 * bump_content.TAXONOMY_EDITS_PER_TYPE
    assert page.count("<select name=") == n and "Lindqvist Museum" in page
    for code in bump_content.REQUESTABLE_CODES:  # codes appear once per select as options, never tied to an edit
        assert page.count(f'value="{code}"') == n
    assert all(f'name="e{k}"' in page for k in range(1, n + 1)) and "error_type" not in page


def test_taxonomy_qualification_incomplete_then_wrong_then_right(client, task1):
    worker = make_worker()
    _login(client, worker)
    right = qualification_answers(task1, worker)
    partial = client.post("/c/t1/bump/qualification/", {"e1": right["e1"]})
    assert partial.status_code == 400 and "Edit 2: choose its error type." in partial.content.decode()
    assert 'value="{}" selected'.format(right["e1"]) in partial.content.decode()  # the answers stay
    assert get_participation(worker, task1).qualification_attempts == 0
    first = qualification_test(get_participation(worker, task1))
    wrong = client.post("/c/t1/bump/qualification/", qualification_answers(task1, worker, wrong=3))  # 11/14 = 79%
    assert "did not pass" in wrong.content.decode() and "79%" not in wrong.content.decode()  # pass or fail only
    # The second attempt is another draw: the first attempt's answers are no key to it.
    assert qualification_test(get_participation(worker, task1)) != first
    right = client.post("/c/t1/bump/qualification/", qualification_answers(task1, worker))  # BUMP: no mistake allowed
    assert "You passed" in right.content.decode()
    assert get_participation(worker, task1).qualification_status == QualificationStatus.PASSED
    assert client.get("/c/t1/")["Location"] == "/c/t1/bump/task/"


def test_accuracy_qualification_and_the_exclusive_pool(client, task1):
    task2 = create_bump_campaign("t2", "Task 2", "bump_free", status=CampaignStatus.RUNNING, exclusive_with=task1, shipped_qualification_accepted=True,
                                 qualification_attempts=2)
    make_bump_document(task2)
    took_t1, fresh = make_worker(), make_worker()
    _login(client, took_t1)
    client.post("/c/t1/bump/qualification/", qualification_answers(task1, took_t1))
    refused = client.get("/c/t2/")
    assert refused.status_code == 403 and "did not take part in the related taxonomy task" in refused.content.decode()
    assert client.get("/c/t2/bump/qualification/")["Location"] == "/c/t2/"
    _login(client, fresh)
    page = client.get("/c/t2/bump/qualification/").content.decode()
    assert page.count("Is the summary accurate?") == 11 and "Kirkby" in page
    typeless = {k: v for k, v in qualification_answers(task2, fresh).items() if not k.endswith("_type")}
    missing = client.post("/c/t2/bump/qualification/", typeless)
    assert missing.status_code == 400 and "you answered No; choose the error" in missing.content.decode()
    failed = client.post("/c/t2/bump/qualification/", qualification_answers(task2, fresh, wrong=1))  # 10/11: BUMP allows no mistake
    assert "did not pass" in failed.content.decode()
    assert "You passed" in client.post("/c/t2/bump/qualification/", qualification_answers(task2, fresh)).content.decode()
    task_page = client.get("/c/t2/bump/task/").content.decode()
    assert "introduce one factual error of any kind" in task_page and "not-applicable" not in task_page
    assert "Do not write a new summary from scratch" in task_page and "same coverage" in task_page and "grammatical" in task_page


def test_task_page_and_submit_api(client, task1):
    worker = make_worker()
    qualify(worker, task1)
    _login(client, worker)
    page = client.get("/c/t1/bump/task/").content.decode()
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.checkpoint.code in page and "Extrinsic Entity Error" in page
    # Shown detokenised ("vaccine, made by Merck, on Thursday."): readable, and edits are compared on tokens.
    assert ">The FDA approved the first Ebola vaccine, made by Merck, on Thursday.</textarea>" in page
    url = f"/c/t1/bump/task/{assignment.pk}/submit/"
    wrong = client.post(url, {"checkpoint": "NOPE", "edited": BUMP_REFERENCE.replace("Merck", "Pfizer")}, content_type="application/json")
    assert wrong.status_code == 400 and wrong.json()["fields"] == {"checkpoint": "wrong code"}
    bad = client.post(url, "not json", content_type="application/json")
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["detail"]
    other = make_worker()
    _login(client, other)
    assert client.post(url, {"checkpoint": assignment.checkpoint.code}, content_type="application/json").status_code == 404  # like a missing assignment
    _login(client, worker)
    ok = client.post(url, {"checkpoint": assignment.checkpoint.code.lower(), "edited": BUMP_REFERENCE.replace("Merck", "Pfizer"),
                           "submission_key": "abc"}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["next"] == "/c/t1/done/?submitted=1"
    # The shared submit view: the same answer as FRANK's, saying whether the worker is now blocked.
    assert ok.json()["blocked"] is False and ok.json()["detail"] == ""
    again = client.post(url, {"checkpoint": assignment.checkpoint.code, "edited": "x", "submission_key": "abc"}, content_type="application/json")
    assert again.json()["duplicate"] is True and Edit.objects.count() == 1


def test_review_page_is_for_reviewers_and_records_decisions(client, task1):
    worker = make_worker()
    qualify(worker, task1)
    _login(client, worker)
    client.get("/c/t1/bump/task/")
    assignment = Assignment.objects.get(worker=worker)
    client.post(f"/c/t1/bump/task/{assignment.pk}/submit/", {"checkpoint": assignment.checkpoint.code,
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
    assert (task1.kind, task2.kind, task2.exclusive_with) == ("bump_taxonomy", "bump_free", task1)
    assert task1.status == task2.status == CampaignStatus.RUNNING and task1.redundancy == task2.redundancy == 1
    assert task1.qualification_pass_score == task2.qualification_pass_score == 1.0
    assert Item.objects.filter(campaign=task1).count() == 7 and Item.objects.filter(campaign=task2).count() == 8


def test_setup_bump_demo_falls_back_to_the_committed_copy(settings, tmp_path):
    from annotate.bump.management.commands.setup_bump_demo import default_samples_dir

    settings.BASE_DIR = tmp_path / "repo"  # no ../shared next to it
    assert default_samples_dir() == tmp_path / "repo" / "data" / "bump-samples"
    from pathlib import Path

    committed = Path(__file__).resolve().parents[2] / "data" / "bump-samples"
    assert (committed / "LICENSE-bump").read_text().startswith("MIT License")
    call_command("setup_bump_demo", "--samples", str(committed))
    assert json.loads((committed / "bump_task1_sample.json").read_text())[0]["article_id"] == int(
        Campaign.objects.get(slug="bump-task1").documents.get().external_id)


def test_admin_campaign_page_links_to_the_review_queue(client):
    from django.contrib.auth import get_user_model

    from annotate.bump.services import create_bump_campaign

    campaign = create_bump_campaign(slug="bump-admin-link", name="BUMP admin link", kind="bump_taxonomy")
    admin = get_user_model().objects.create_user("bump-admin-link", password="pw-Admin-123", is_staff=True)
    client.force_login(admin)
    page = client.get(f"/manage/{campaign.slug}/")
    assert page.status_code == 200
    assert f'href="/c/{campaign.slug}/bump/review/"' in page.content.decode()


def _task_data(page: str) -> dict:
    import re

    return json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', page, re.S).group(1))


@pytest.mark.parametrize("sample", ["bump_task1_sample.json", "bump_task2_sample.json"])
def test_the_shown_reference_submitted_unchanged_is_refused_on_every_sample_item(client, samples_dir, sample):
    """The edit check compares against the text as the page shows it (quotes, spacing), never the stored one."""
    rows = json.loads((samples_dir / sample).read_text(encoding="utf-8"))
    for number, row in enumerate(rows):
        campaign = create_bump_campaign(f"s{number}", "Sample", "bump_free", status=CampaignStatus.RUNNING)
        make_bump_document(campaign, reference=row["reference_summary"], article=row["article"])
        worker = make_worker()
        qualify(worker, campaign)
        _login(client, worker)
        page = client.get(f"/c/{campaign.slug}/bump/task/").content.decode()
        data = _task_data(page)
        assert " ." not in data["reference"] and "19 - year" not in page
        assignment = Assignment.objects.get(worker=worker)
        response = client.post(f"/c/{campaign.slug}/bump/task/{assignment.pk}/submit/", {
            "checkpoint": assignment.checkpoint.code, "edited": data["reference"], "submission_key": f"k{number}",
        }, content_type="application/json")
        assert response.status_code == 400, (sample, number, data["reference"])
        assert "same as the original" in response.json()["detail"]
    assert Edit.objects.count() == 0
