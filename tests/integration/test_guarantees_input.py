"""Guarantee: bad input gets a clear 4xx naming what is wrong, and nothing is stored.

Malformed JSON, wrong types, unknown categories, incomplete answers, HTML/script in imported texts,
negative or absurd campaign settings (model validation and the API), oversized and broken uploads.
"""
from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.frank.models import EntityAnswer
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    ImportJob,
    SentenceJudgement,
    Summary,
)
from annotate.services.assignments import request_assignment
from annotate.services.imports import import_dataset
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.guarantee_support import (
    frank_answers,
)

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('xss')</script>"


@pytest.fixture
def task():
    campaign = make_campaign(entity_check_enabled=False, trap_rate=0.0)
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    url = reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk])
    return {"campaign": campaign, "worker": worker, "assignment": assignment, "client": client, "url": url}


@pytest.fixture
def admin_api():
    user = get_user_model().objects.create_user("input-admin", password="admin-pass-123", is_staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _nothing_stored(assignment) -> None:
    assert SentenceJudgement.objects.filter(assignment=assignment).count() == 0
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('"a string"', "must be a JSON object"),
        (json.dumps({"summaries": "all fine"}), "expected answers for 2 summaries"),
        (json.dumps({"summaries": [{"answers": []}, {"answers": []}]}), "summary 1: answer all"),
        (json.dumps({"submission_key": 12, "summaries": []}), "submission_key must be a string"),
    ],
)
def test_malformed_submissions_are_refused_with_400(task, body, message):
    response = task["client"].post(task["url"], data=body, content_type="application/json")
    assert response.status_code == 400
    assert message in response.json()["detail"]
    _nothing_stored(task["assignment"])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"factual": "yes"}, "factual must be true or false"),
        ({"factual": False, "categories": ["Typo"]}, "unknown error category 'Typo'"),
        ({"factual": False, "categories": "EntE"}, "categories must be a list"),
        ({"factual": False, "categories": []}, "select at least one error category"),
        ({"factual": True, "categories": ["EntE"]}, "a correct sentence takes no error category"),
        ({"factual": True, "seconds": -3}, "seconds must be a non-negative number"),
        ({"factual": True, "seconds": "NaN"}, "seconds must be a non-negative number"),
    ],
)
def test_wrong_types_and_unknown_categories_are_refused(task, answer, message):
    payload = frank_answers(task["assignment"])
    payload["summaries"][-1]["answers"][-1] = answer  # one bad answer among good ones: nothing is kept
    response = task["client"].post(task["url"], data=json.dumps(payload), content_type="application/json")
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert message in detail and re.match(r"summary \d, sentence \d: ", detail)  # names where the bad answer is
    _nothing_stored(task["assignment"])


def test_entity_answer_of_the_wrong_type_is_refused():
    campaign = make_campaign(entity_check_enabled=True, trap_rate=0.0)
    make_document(campaign, negative_entity="Zanzibar Quorn")
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    url = reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk])
    for choice in ("1", 7, True, None):
        response = client.post(url, data=json.dumps({"choice": choice}), content_type="application/json")
        assert response.status_code == 400 and "choice: choose one of the 3 options of the reading check (0 to 2)" in response.json()["detail"]
    assert client.post(url, data="{oops", content_type="application/json").status_code == 400
    assert not EntityAnswer.objects.filter(assignment=assignment).exists()


def test_script_in_imported_texts_is_escaped_on_every_page(tmp_path):
    record = {
        "id": "xss-1", "text": f"The mayor spoke. {SCRIPT} The council listened.",
        "sentences": ["The mayor spoke.", f"{SCRIPT} The council listened."],
        "entities": ["mayor", "council"],
        "summaries": [{"system": f"bart{SCRIPT}", "text": f"The mayor {SCRIPT} spoke.", "sentences": [f"The mayor {SCRIPT} spoke."]}],
    }
    path = tmp_path / "xss.jsonl"
    path.write_text(json.dumps(record) + "\n")
    import_dataset("jsonl", [path], campaign_slug="xss", campaign_name=f"Campaign {SCRIPT}")
    campaign = Campaign.objects.get(slug="xss")
    Campaign.objects.filter(pk=campaign.pk).update(status="running", tutorial_required=False, qualification_required=False, entity_check_enabled=False, trap_rate=0)
    worker = make_worker()
    qualify(worker, campaign)
    client = Client()
    client.force_login(worker.user)
    task_page = client.get(reverse("annotate:frank-task", args=["xss"]))
    assert task_page.status_code == 200
    html = task_page.content.decode()
    assert "alert(" in html  # the text is there...
    assert SCRIPT not in html  # ...but never as markup (json_script escapes < and >)
    admin = make_worker("xss-admin", staff=True)
    get_user_model().objects.filter(pk=admin.user_id).update(is_superuser=True)  # the Django admin checks model permissions
    client.force_login(admin.user)
    document = Document.objects.get(campaign=campaign)
    summary = Summary.objects.get(document=document)
    pages = [
        client.get(reverse("annotate:manage-campaign", args=["xss"])),
        client.get(reverse("annotate:manage")),
        client.get(reverse("admin:annotate_campaign_change", args=[campaign.pk])),
        client.get(reverse("admin:annotate_document_change", args=[document.pk])),
        client.get(reverse("admin:annotate_summary_change", args=[summary.pk])),
        client.get(reverse("admin:annotate_campaign_changelist")),
    ]
    for page in pages:
        assert page.status_code == 200, page
        body = page.content.decode()
        assert SCRIPT not in body
    assert "&lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in pages[0].content.decode()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("redundancy", 0), ("redundancy", 1000), ("assignment_timeout_minutes", 0), ("trap_rate", 1.5), ("trap_rate", -0.1),
        ("bonus_per_item", "-1.00"), ("pay_per_item", "-0.01"), ("min_seconds_per_sentence", -2.0),
        ("qualification_pass_score", 2.0), ("max_edit_distance", 0), ("bonus_streak_size", 0),
    ],
)
def test_absurd_campaign_settings_fail_model_validation(field, value):
    campaign = Campaign(slug="absurd", name="Absurd", **{field: value})
    with pytest.raises(ValidationError) as caught:
        campaign.full_clean()
    assert field in caught.value.message_dict


@pytest.mark.parametrize(
    ("field", "value"),
    [("redundancy", -1), ("redundancy", 0), ("trap_rate", 3), ("assignment_timeout_minutes", 0), ("bonus_per_item", "-5"), ("redundancy", "many")],
)
def test_absurd_campaign_settings_are_refused_by_the_api(admin_api, field, value):
    campaign = make_campaign()
    before = Campaign.objects.filter(pk=campaign.pk).values(field).get()[field]
    response = admin_api.patch(f"/api/campaigns/{campaign.slug}/", {field: value}, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert Campaign.objects.filter(pk=campaign.pk).values(field).get()[field] == before
    created = admin_api.post("/api/campaigns/", {"slug": "new-absurd", "name": "New", field: value}, format="json")
    assert created.status_code == 400 and field in created.json()
    assert not Campaign.objects.filter(slug="new-absurd").exists()


def test_api_refuses_malformed_json_with_400(admin_api):
    campaign = make_campaign()
    response = admin_api.generic("PATCH", f"/api/campaigns/{campaign.slug}/", "{redundancy: 2", content_type="application/json")
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]


def test_oversized_upload_is_refused_and_nothing_is_created(admin_api, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.FACTLAB_MAX_UPLOAD_BYTES = 64
    upload = SimpleUploadedFile("big.jsonl", b'{"id": "x"}\n' * 20)
    response = admin_api.post("/api/imports/", {"file": upload, "format": "jsonl", "campaign": "too-big"}, format="multipart")
    assert response.status_code == 413 and "limit is 64 bytes" in response.json()["detail"]
    assert not ImportJob.objects.exists() and not Campaign.objects.filter(slug="too-big").exists()


def test_failed_upload_into_an_existing_campaign_adds_nothing(admin_api, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    campaign = make_campaign()
    make_document(campaign)
    counts = (Document.objects.count(), Summary.objects.count())
    good = {"id": "fresh-1", "text": "Paris beat Lyon.", "summaries": [{"system": "bart", "text": "Lyon won."}]}
    bad = {"id": "fresh-2", "text": "Paris beat Lyon.", "summaries": []}  # the second record is broken
    content = (json.dumps(good) + "\n" + json.dumps(bad) + "\n").encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_api.post(
            "/api/imports/", {"file": SimpleUploadedFile("half.jsonl", content), "format": "jsonl", "campaign": campaign.slug}, format="multipart"
        )
    assert response.status_code == 202
    job = admin_api.get(f"/api/imports/{response.json()['id']}/").json()
    assert job["status"] == "failed" and job["error"]["record"] == "line 2"
    assert (Document.objects.count(), Summary.objects.count()) == counts
    assert not Document.objects.filter(external_id="fresh-1").exists()
