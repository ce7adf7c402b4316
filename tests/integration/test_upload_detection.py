"""Files tell what they are: an upload's format and campaign kind come from its content, the admin confirms
them before anything is imported, and a file that fits no format (or not the one chosen) says what it looks like."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Campaign, ImportJob, ImportStatus
from annotate.services.import_jobs import resolve_detection
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def bump_records(task: int) -> bytes:
    base = {"id": "0", "article_id": "1", "article": "The council met on Monday.", "reference_summary": "The council met.",
            "edited_summary": "The board met."}
    if task == 1:
        return json.dumps([{**base, "error_type": "Extrinsic Entity Error", "corrected_error_type": "Extrinsic Entity Error"}]).encode()
    return json.dumps([{**base, "error_type": "Extrinsic Entity"}]).encode()


def test_bump_task_files_are_told_apart_and_a_kind_the_file_contradicts_is_refused(samples_dir):
    for task, kind in ((1, "bump_taxonomy"), (2, "bump_free")):
        fmt, detected_kind, why = resolve_detection(upload(f"anything{task}.json", bump_records(task)), fmt="auto", campaign_kind="")
        assert (fmt, detected_kind) == ("bump", kind) and "BUMP Task" in why
    real = (samples_dir / "bump_task2_sample.json").read_bytes()
    assert resolve_detection(upload("task2_dataset.json", real), fmt="bump", campaign_kind="")[1] == "bump_free"
    with pytest.raises(ValueError, match="campaign_kind: the kind chosen is 'bump_taxonomy', but 'task2_dataset.json' is .*Task 2"):
        resolve_detection(upload("task2_dataset.json", real), fmt="bump", campaign_kind="bump_taxonomy")
    with pytest.raises(ValueError, match="campaign_kind: the campaign is 'bump_taxonomy'"):
        resolve_detection(upload("task2_dataset.json", real), fmt="auto", campaign_kind="", existing_kind="bump_taxonomy")


def test_a_qags_file_read_as_factlab_jsonl_is_refused_naming_qags(samples_dir):
    qags = (samples_dir / "qags_mturk_sample.jsonl").read_bytes()
    with pytest.raises(ValueError, match="format: 'jsonl' was chosen, but 'mturk_xsum.jsonl' looks like qags: .*summary_sentences"):
        resolve_detection(upload("mturk_xsum.jsonl", qags), fmt="jsonl", campaign_kind="")
    assert resolve_detection(upload("mturk_xsum.jsonl", qags), fmt="auto", campaign_kind="")[0] == "qags"


def test_a_file_that_fits_no_format_says_what_it_looks_like():
    with pytest.raises(ValueError, match=r"format: 'notes.jsonl' fits no dataset format .* JSON lines of records with the fields body, title"):
        resolve_detection(upload("notes.jsonl", b'{"title": "a", "body": "b"}\n'), fmt="auto", campaign_kind="")
    with pytest.raises(ValueError, match="a CSV file with the columns x, y"):
        resolve_detection(upload("t.csv", b"x,y\n1,2\n"), fmt="auto", campaign_kind="")


def test_aggrefact_and_frank_zip_are_recognised(frank_dir, tmp_path):
    import zipfile

    csv = b"dataset,origin,id,doc,summary,model_name,label,cut,dae_score\nFRANK,cnndm,1,An article.,A summary.,bart,1,val,0.5\n"
    assert resolve_detection(upload("aggre.csv", csv), fmt="auto", campaign_kind="")[0] == "aggrefact"
    archive = tmp_path / "frank.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(frank_dir / "human_annotations.json", "frank/human_annotations.json")
    assert resolve_detection(upload("frank.zip", archive.read_bytes()), fmt="auto", campaign_kind="")[0] == "frank"


def test_the_new_campaign_page_shows_what_was_detected_and_imports_only_once_confirmed(client, samples_dir, settings):
    client.force_login(make_worker(staff=True).user)
    real = (samples_dir / "bump_task2_sample.json").read_bytes()
    answer = client.post(reverse("annotate:manage-new"), {"slug": "bump-two", "format": "auto", "campaign_kind": "",
                                                          "file": upload("task2_dataset.json", real)})
    assert answer.status_code == 302
    job = ImportJob.objects.get(campaign_slug="bump-two")
    assert job.status == ImportStatus.DETECTED and job.campaign_kind == "bump_free"
    assert not Campaign.objects.filter(slug="bump-two").exists()  # nothing imported before the confirmation
    page = client.get(reverse("annotate:manage-import", args=[job.pk])).content.decode()
    assert 'id="detected"' in page and "BUMP Task 2" in page and "cannot change later" in page
    client.post(reverse("annotate:manage-import-confirm", args=[job.pk]), {"answer": "import"})
    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error  # Celery runs eagerly in tests
    assert Campaign.objects.get(slug="bump-two").kind == "bump_free"


def test_a_discarded_detection_stores_nothing(client, samples_dir):
    client.force_login(make_worker(staff=True).user)
    real = (samples_dir / "bump_task1_sample.json").read_bytes()
    client.post(reverse("annotate:manage-new"), {"slug": "bump-one", "format": "auto", "campaign_kind": "", "file": upload("t1.json", real)})
    job = ImportJob.objects.get(campaign_slug="bump-one")
    assert job.campaign_kind == "bump_taxonomy"
    client.post(reverse("annotate:manage-import-confirm", args=[job.pk]), {"answer": "discard"})
    assert not ImportJob.objects.filter(pk=job.pk).exists() and not Campaign.objects.filter(slug="bump-one").exists()


def test_an_api_upload_in_auto_imports_what_it_detected(samples_dir):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(make_worker(staff=True).user)
    kept = make_campaign(kind="bump_free")
    real = (samples_dir / "bump_task1_sample.json").read_bytes()
    refused = api.post("/api/imports/", {"file": upload("t1.json", real), "format": "auto", "campaign": kept.slug}, format="multipart")
    assert refused.status_code == 400 and "campaign_kind: the campaign is 'bump_free'" in json.dumps(refused.json())
    created = api.post("/api/imports/", {"file": upload("t1.json", real), "format": "auto", "campaign": "new-bump"}, format="multipart")
    assert created.status_code == 202, created.content
    job = ImportJob.objects.get(pk=created.json()["id"])
    assert job.status == ImportStatus.SUCCEEDED and job.format == "bump" and "Task 1" in job.options["detected"]
    assert Campaign.objects.get(slug="new-bump").kind == "bump_taxonomy"
