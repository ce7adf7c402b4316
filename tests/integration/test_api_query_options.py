"""API options that tell the truth: unknown options refused by name, dataset names as the platform exports
them, import reports that tell re-imports from repeats, report counts that follow the filters, an
aggregation that cannot apply named as such, and an import form whose default example works."""
from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from annotate.models import Campaign, Dataset, Document
from annotate.services.imports import import_dataset
from tests.factories import make_campaign, make_document


@pytest.fixture
def api(django_user_model) -> APIClient:
    admin = django_user_model.objects.create_user("options-admin", password="x", is_staff=True, is_superuser=True)
    client = APIClient()
    client.force_authenticate(admin)
    return client


@pytest.fixture
def campaign() -> Campaign:
    campaign = make_campaign()
    for dataset in (Dataset.CNNDM, Dataset.CNNDM, Dataset.XSUM):
        Document.objects.filter(pk=make_document(campaign).pk).update(dataset=dataset)
    return campaign


@pytest.mark.django_db
def test_an_unknown_query_option_is_refused_naming_it(api, campaign):
    answer = api.get(f"/api/campaigns/{campaign.slug}/report/?partal=false")
    assert answer.status_code == 400
    assert "'partal'" in answer.json()["detail"] and "partial" in answer.json()["detail"]
    assert answer.json()["unknown_options"] == ["partal"]
    answer = api.get(f"/api/campaigns/{campaign.slug}/summaries/?datset=xsum&page_size=5")
    assert answer.status_code == 400 and answer.json()["unknown_options"] == ["datset"]
    assert api.get(f"/api/campaigns/{campaign.slug}/export/?format=jsonl&rows=documents&colour=red").status_code == 400
    # Known options keep working.
    assert api.get(f"/api/campaigns/{campaign.slug}/summaries/?dataset=xsum&page_size=5").status_code == 200
    assert api.get(f"/api/campaigns/{campaign.slug}/judgements/?reveal_workers=1").status_code == 200
    assert api.get(f"/api/campaigns/{campaign.slug}/report/?partial=false").status_code == 200


@pytest.mark.django_db
def test_bbc_and_xsum_are_one_dataset_in_filters_and_the_report(api, campaign):
    def ids(query: str) -> set[int]:
        answer = api.get(f"/api/campaigns/{campaign.slug}/summaries/?{query}")
        assert answer.status_code == 200, answer.content
        return {row["id"] for row in answer.json()["results"]}

    assert ids("dataset=bbc") == ids("dataset=xsum") and len(ids("dataset=xsum")) == 2
    bbc = api.get(f"/api/campaigns/{campaign.slug}/report/?dataset=bbc").json()
    assert bbc["options"]["dataset"] == "xsum"


@pytest.mark.django_db
def test_report_counts_follow_the_filters(api, campaign):
    everything = api.get(f"/api/campaigns/{campaign.slug}/report/").json()["counts"]
    cnndm = api.get(f"/api/campaigns/{campaign.slug}/report/?dataset=cnndm").json()["counts"]
    system = api.get(f"/api/campaigns/{campaign.slug}/report/?system=system-1").json()["counts"]
    assert (everything["documents"], everything["summaries"]) == (3, 6)
    assert (cnndm["documents"], cnndm["summaries"]) == (2, 4)
    assert (system["summaries"], system["systems"]) == (3, 1)


@pytest.mark.django_db
def test_an_aggregation_without_worker_labels_is_named_as_not_applied(api, campaign):
    report = api.get(f"/api/campaigns/{campaign.slug}/report/?aggregation=mace").json()
    assert report["definitions"]["aggregation"].startswith("mace not applied: no per-worker sentence labels")
    majority = api.get(f"/api/campaigns/{campaign.slug}/report/").json()
    assert "not applied" not in majority["definitions"]["aggregation"]


@pytest.mark.django_db
def test_import_reports_tell_rows_already_in_the_campaign_from_repeats_in_the_file(tmp_path):
    record = {"id": "d1", "text": "A text about a bridge.", "summaries": [{"system": "s", "text": "A bridge."}]}
    other = {**record, "id": "d2"}
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (record, other, record)) + "\n")
    first = import_dataset("jsonl", [path], campaign_slug="repeats").as_dict()
    assert first["created"]["documents"] == 2 and first["repeated"]["documents"] == 1
    assert "documents" not in first["existing"]
    again = import_dataset("jsonl", [path], campaign_slug="repeats").as_dict()
    assert again["existing"]["documents"] == 2 and again["repeated"]["documents"] == 1 and "documents" not in again["created"]


@pytest.mark.django_db
def test_the_import_form_in_the_api_docs_has_a_blank_dataset_that_any_format_accepts(api, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path
    schema = api.get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["ImportJobCreateRequest"]["properties"]
    names = {
        value for ref in body["dataset"]["oneOf"]
        for value in schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]["enum"]
    }
    assert body["dataset"]["default"] == "" and {"", "bbc", "xsum"} <= names
    line = json.dumps({"id": "d1", "text": "A text.", "summaries": [{"system": "s", "text": "S."}]}).encode() + b"\n"
    from django.core.files.uploadedfile import SimpleUploadedFile

    answer = api.post("/api/imports/", {
        "file": SimpleUploadedFile("d.jsonl", line), "format": "jsonl", "kind": "dataset", "campaign": "try-it-out",
        "dataset": body["dataset"]["default"], "campaign_kind": body["campaign_kind"].get("default", ""),
    }, format="multipart")
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "succeeded"  # eager Celery in this test
