"""Uploads: every import format through the API, the Celery task, the status report, size limits and atomicity."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotate.models import (
    Campaign,
    Document,
    ImportJob,
    MetricScore,
    SentenceJudgement,
    Summary,
)
from tests.conftest import FRANK_DIR, SAMPLES_DIR
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db

JSONL_DOC = {"id": "d1", "text": "Paris beat Lyon.", "dataset": "cnndm", "split": "test", "summaries": [{"system": "bart", "text": "Lyon won."}]}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _upload(client, capture, name: str, content: bytes, **fields):
    with capture(execute=True):
        return client.post("/api/imports/", {"file": SimpleUploadedFile(name, content), **fields}, format="multipart")


def _frank_subset_zip(n_articles: int = 3) -> bytes:
    records = json.loads((FRANK_DIR / "human_annotations.json").read_text())
    hashes = sorted({r["hash"] for r in records})[:n_articles]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("frank/human_annotations.json", json.dumps([r for r in records if r["hash"] in hashes]))
        for h in hashes:
            archive.write(FRANK_DIR / "articles" / f"{h}.json", f"frank/articles/{h}.json")
    return buffer.getvalue()


def test_jsonl_import_succeeds_with_report(admin_client, django_capture_on_commit_callbacks, settings):
    content = (json.dumps(JSONL_DOC) + "\n").encode()
    response = _upload(admin_client, django_capture_on_commit_callbacks, "docs.jsonl", content, format="jsonl", campaign="uploaded")
    assert response.status_code == 202, response.content
    status = admin_client.get(f"/api/imports/{response.json()['id']}/").json()
    assert status["status"] == "succeeded", status
    assert status["report"]["created"]["documents"] == 1 and status["progress"]["done"] == 1
    assert Document.objects.get(campaign__slug="uploaded").external_id == "d1"
    job = ImportJob.objects.get(pk=status["id"])
    # The upload is deleted once imported (failed ones are kept for the retention time).
    assert not job.file and not [p for p in (settings.MEDIA_ROOT / "imports").rglob("*") if p.is_file()]


def test_bad_record_fails_atomically_with_a_clear_error(admin_client, django_capture_on_commit_callbacks):
    lines = [json.dumps(JSONL_DOC), json.dumps({**JSONL_DOC, "id": "d2", "dataset": "imdb"})]
    response = _upload(admin_client, django_capture_on_commit_callbacks, "bad.jsonl", "\n".join(lines).encode(), format="jsonl", campaign="broken")
    status = admin_client.get(f"/api/imports/{response.json()['id']}/").json()
    assert status["status"] == "failed"
    assert status["error"]["file"] == "bad.jsonl" and status["error"]["record"] == "line 2" and status["error"]["field"] == "dataset"
    assert "unknown dataset 'imdb'" in status["error"]["message"]
    assert not Campaign.objects.filter(slug="broken").exists() and not Document.objects.exists()  # nothing stored


def test_upload_over_the_limit_is_refused_with_413(admin_client, settings):
    settings.FACTLAB_MAX_UPLOAD_BYTES = 100
    response = admin_client.post(
        "/api/imports/", {"file": SimpleUploadedFile("big.jsonl", b"x" * 500), "format": "jsonl", "campaign": "big"}, format="multipart"
    )
    assert response.status_code == 413
    assert "limit is 100 bytes" in response.json()["detail"] and not ImportJob.objects.exists()


def test_declared_length_far_over_the_limit_is_refused_before_parsing(admin_client, settings):
    settings.FACTLAB_MAX_UPLOAD_BYTES = 10
    response = admin_client.generic("POST", "/api/imports/", b"", content_type="multipart/form-data; boundary=x", CONTENT_LENGTH="10000000")
    assert response.status_code == 413 and "FACTLAB_MAX_UPLOAD_BYTES" in response.json()["detail"]


def test_wrong_file_type_or_format_is_refused(admin_client):
    wrong_suffix = admin_client.post("/api/imports/", {"file": SimpleUploadedFile("x.csv", b"a"), "format": "jsonl", "campaign": "c"}, format="multipart")
    assert wrong_suffix.status_code == 400 and ".jsonl" in wrong_suffix.json()["detail"]
    no_scores = admin_client.post(
        "/api/imports/", {"file": SimpleUploadedFile("x.json", b"[]"), "format": "bump", "kind": "scores", "campaign": "c"}, format="multipart"
    )
    assert no_scores.status_code == 400 and "no scores import in format 'bump'" in no_scores.json()["detail"]
    missing = admin_client.post("/api/imports/", {"format": "jsonl"}, format="multipart")
    assert missing.status_code == 400 and {"file", "campaign"} <= set(missing.json())


def test_frank_zip_bump_and_qags_uploads(admin_client, django_capture_on_commit_callbacks):
    frank = _upload(admin_client, django_capture_on_commit_callbacks, "frank.zip", _frank_subset_zip(), format="frank", campaign="frank-up")
    assert admin_client.get(f"/api/imports/{frank.json()['id']}/").json()["status"] == "succeeded"
    assert Document.objects.filter(campaign__slug="frank-up").count() == 3
    assert Summary.objects.filter(document__campaign__slug="frank-up", human_scores__has_key="Factuality").exists()
    bump = _upload(
        admin_client, django_capture_on_commit_callbacks, "b.json", (SAMPLES_DIR / "bump_task1_sample.json").read_bytes(), format="bump", campaign="bump-up"
    )
    assert admin_client.get(f"/api/imports/{bump.json()['id']}/").json()["report"]["records"] == 7
    qags = _upload(
        admin_client, django_capture_on_commit_callbacks, "q.jsonl", (SAMPLES_DIR / "qags_mturk_sample.jsonl").read_bytes(), format="qags", campaign="qags-up"
    )
    assert admin_client.get(f"/api/imports/{qags.json()['id']}/").json()["status"] == "succeeded"
    assert SentenceJudgement.objects.filter(summary__document__campaign__slug="qags-up").exists()


def test_not_a_zip_for_frank_fails_clearly(admin_client, django_capture_on_commit_callbacks):
    response = _upload(admin_client, django_capture_on_commit_callbacks, "frank.zip", b"not a zip", format="frank", campaign="f")
    status = admin_client.get(f"/api/imports/{response.json()['id']}/").json()
    assert status["status"] == "failed" and status["error"]["message"]


def test_metric_score_import(admin_client, django_capture_on_commit_callbacks):
    _upload(admin_client, django_capture_on_commit_callbacks, "docs.jsonl", (json.dumps(JSONL_DOC) + "\n").encode(), format="jsonl", campaign="scored")
    line = json.dumps({"document": "d1", "system": "bart", "metric": "coco_sent", "value": 0.12})
    response = _upload(admin_client, django_capture_on_commit_callbacks, "s.jsonl", line.encode(), format="jsonl", kind="scores", campaign="scored")
    assert admin_client.get(f"/api/imports/{response.json()['id']}/").json()["status"] == "succeeded"
    assert MetricScore.objects.get(metric="coco_sent").value == 0.12
    table = b"document,system,metric,value\nd1,bart,rouge2,0.5\n"
    csv_job = _upload(admin_client, django_capture_on_commit_callbacks, "s.csv", table, format="csv", kind="scores", campaign="scored")
    assert admin_client.get(f"/api/imports/{csv_job.json()['id']}/").json()["status"] == "succeeded"
    assert MetricScore.objects.get(metric="rouge2").value == 0.5
    missing = _upload(admin_client, django_capture_on_commit_callbacks, "s.jsonl", line.encode(), format="jsonl", kind="scores", campaign="nope")
    assert "no campaign with slug 'nope'" in admin_client.get(f"/api/imports/{missing.json()['id']}/").json()["error"]["message"]


def test_annotator_cannot_import(annotator_client):
    response = annotator_client.post("/api/imports/", {"file": SimpleUploadedFile("d.jsonl", b"{}"), "format": "jsonl", "campaign": "x"}, format="multipart")
    assert response.status_code == 403 and not ImportJob.objects.exists()
