"""The admin's study path on /manage/ without a browser: a campaign from an upload (errors per record,
nothing stored), metric scores for it, and cancel/retry of its jobs through the page's forms."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotate.models import Campaign, ImportJob, ImportStatus, PagePreparation
from tests.factories import make_worker

RECORD = {
    "id": "d1", "text": "The council met on Monday. It approved the budget.",
    "sentences": ["The council met on Monday.", "It approved the budget."],
    "summaries": [{"system": "s1", "text": "The council approved the budget.", "sentences": ["The council approved the budget."]}],
}


def jsonl(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


@pytest.fixture
def admin_client(client):
    make_worker("study-admin", staff=True)
    client.login(username="study-admin", password="pw-factlab-1")
    return client


@pytest.mark.django_db
def test_a_bad_record_is_shown_by_record_and_field_and_nothing_is_stored(admin_client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    broken = {**RECORD, "id": "d2"}
    del broken["text"]
    answer = admin_client.post("/manage/new/", {
        "slug": "study-bad", "campaign_kind": "frank", "format": "jsonl", "dataset": "",
        "file": SimpleUploadedFile("bad.jsonl", jsonl(RECORD, broken)),
    })
    job = ImportJob.objects.get(campaign_slug="study-bad")
    assert answer.status_code == 302 and answer["Location"] == f"/manage/imports/{job.pk}/"
    page = admin_client.get(answer["Location"]).content.decode()
    assert job.status == ImportStatus.FAILED and "Nothing was stored" in page
    assert '<dd id="error-record">line 2</dd>' in page and '<dd id="error-field">text</dd>' in page
    assert not Campaign.objects.filter(slug="study-bad").exists()


@pytest.mark.django_db
def test_form_refusals_are_shown_in_the_form(admin_client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    answer = admin_client.post("/manage/new/", {
        "slug": "study-qags", "campaign_kind": "", "format": "jsonl", "dataset": "xsum",
        "file": SimpleUploadedFile("d.jsonl", jsonl(RECORD)),
    })
    assert answer.status_code == 400 and "dataset: applies to qags dataset imports only" in answer.content.decode()
    answer = admin_client.post("/manage/new/", {"slug": "new", "format": "jsonl", "file": SimpleUploadedFile("d.zip", b"x")})
    assert answer.status_code == 400 and "names a page of /manage/" in answer.content.decode()
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_a_campaign_from_an_upload_then_scores_and_job_buttons(admin_client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    answer = admin_client.post("/manage/new/", {
        "slug": "study-ok", "name": "Budget study", "campaign_kind": "frank", "format": "jsonl",
        "file": SimpleUploadedFile("d.jsonl", jsonl(RECORD)),
    })
    job = ImportJob.objects.get(campaign_slug="study-ok")
    assert job.status == ImportStatus.SUCCEEDED, job.error
    assert Campaign.objects.get(slug="study-ok").name == "Budget study"
    status = admin_client.get(f"/manage/imports/{job.pk}/status.json").json()
    assert status["finished"] and status["report"]["created"]["documents"] == 1
    page = admin_client.get("/manage/study-ok/").content.decode()
    assert 'id="report-link"' in page and "?format=frank" in page and f"import {job.pk}</a>" in page

    summary_id = Campaign.objects.get(slug="study-ok").documents.get().summaries.get().pk
    scores = f"summary_id,metric,value\n{summary_id},my_metric,0.5\n".encode()
    answer = admin_client.post("/manage/study-ok/upload/scores/", {"format": "csv", "file": SimpleUploadedFile("s.csv", scores)})
    scores_job = ImportJob.objects.get(kind="scores")
    assert answer["Location"] == f"/manage/imports/{scores_job.pk}/" and scores_job.status == ImportStatus.SUCCEEDED, scores_job.error

    run = PagePreparation.objects.create(campaign=Campaign.objects.get(slug="study-ok"))
    assert admin_client.post(f"/manage/study-ok/jobs/preparation/{run.pk}/cancel/").status_code == 302
    run.refresh_from_db()
    assert run.status == ImportStatus.CANCELLED
    jobs = admin_client.get("/manage/study-ok/jobs/").content.decode()
    assert f'data-kind="preparation" data-id="{run.pk}" data-status="cancelled"' in jobs and "job-retry" in jobs
    answer = admin_client.post(f"/manage/study-ok/jobs/import/{job.pk}/retry/", follow=True)
    assert "only a failed or cancelled import can be retried" in answer.content.decode()


@pytest.mark.django_db
def test_a_scoring_job_is_cancelled_from_its_own_campaign_page_only(admin_client):
    # The page reaches the metrics service's jobs through annotate.metrics_port: another campaign's job is a 404.
    from metrics_service.models import JobStatus, ScoringJob
    from tests.factories import make_campaign

    campaign, other = make_campaign(), make_campaign()
    job = ScoringJob.objects.create(campaign=campaign, metric="rouge", config_key="default", total=1)
    assert admin_client.post(f"/manage/{other.slug}/jobs/scoring/{job.pk}/cancel/").status_code == 404
    job.refresh_from_db()
    assert job.status == JobStatus.PENDING
    assert admin_client.post(f"/manage/{campaign.slug}/jobs/scoring/{job.pk}/cancel/").status_code == 302
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
    jobs = admin_client.get(f"/manage/{campaign.slug}/jobs/").content.decode()
    assert f'data-kind="scoring" data-id="{job.pk}" data-status="cancelled"' in jobs
    answer = admin_client.post(f"/manage/{campaign.slug}/jobs/scoring/{job.pk}/cancel/", follow=True)
    assert answer.status_code == 200 and "Scoring job" in answer.content.decode()
