"""Export formats through the API: format/kind fit, imported BUMP pairs in jsonl/csv, Parquet
in a Hugging Face datasets layout, and the QAGS dataset taken from the data or an option."""
from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotate.models import (
    Campaign,
    Document,
    MetricScore,
    SentenceJudgement,
)
from annotate.services.imports import import_dataset
from tests.conftest import SAMPLES_DIR
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db

C = "/api/campaigns/frank-api"


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


@pytest.fixture
def bump_campaign(researcher):
    import_dataset("bump", [SAMPLES_DIR / "bump_task1_sample.json"], campaign_slug="bump-t1")
    campaign = Campaign.objects.get(slug="bump-t1")
    campaign.researchers.add(researcher)
    return campaign


def test_a_format_that_does_not_fit_the_campaign_kind_is_400_with_the_reason(campaign, bump_campaign, researcher_client):
    bump_on_frank = researcher_client.get(f"{C}/export/?format=bump")
    assert bump_on_frank.status_code == 400
    reason = bump_on_frank.json()["format"][0]
    assert "format=bump" in reason and "frank campaign" in reason and "jsonl" in reason
    frank_on_bump = researcher_client.get("/api/campaigns/bump-t1/export/?format=frank")
    assert frank_on_bump.status_code == 400 and "bump_taxonomy campaign" in frank_on_bump.json()["format"][0]
    for fmt in ("jsonl", "csv", "parquet"):
        assert researcher_client.get(f"{C}/export/?format={fmt}").status_code == 200
        assert researcher_client.get(f"/api/campaigns/bump-t1/export/?format={fmt}").status_code == 200


def test_jsonl_and_csv_exports_include_imported_pairs(bump_campaign, researcher_client):
    source = json.loads((SAMPLES_DIR / "bump_task1_sample.json").read_text())
    lines = _body(researcher_client.get("/api/campaigns/bump-t1/export/?format=jsonl&rows=edits")).decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == len(source) == 7
    assert {r["edit_text"] for r in rows} == {r["edited_summary"] for r in source}
    assert all(r["record_type"] == "edit" and r["source"] == "imported" and r["worker"] is None for r in rows)
    assert {r["requested_error_type"] for r in rows} >= {"extrinsic_circumstance", "coreference"}
    text = _body(researcher_client.get("/api/campaigns/bump-t1/export/?format=csv")).decode()
    kinds = [row["record_type"] for row in csv.DictReader(io.StringIO(text))]
    assert kinds.count("edit") == 7 and kinds.count("score") == MetricScore.objects.filter(summary__document__campaign=bump_campaign).count()
    # Filters apply to them too: no worker made them, so worker_status=blocked leaves none.
    assert _body(researcher_client.get("/api/campaigns/bump-t1/export/?format=jsonl&rows=edits&worker_status=blocked")) == b""


def _unzip(response, tmp_path):
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    folder = tmp_path / "dataset"
    with zipfile.ZipFile(io.BytesIO(_body(response))) as archive:
        archive.extractall(folder)
    return folder


def _load(folder, config: str, tmp_path):
    from datasets import load_dataset

    return load_dataset(str(folder), config, cache_dir=str(tmp_path / "hf-cache"))["train"]


def test_parquet_export_loads_with_datasets_and_carries_the_license(campaign, researcher_client, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    Campaign.objects.filter(pk=campaign.pk).update(license="cc-by-4.0")
    folder = _unzip(researcher_client.get(f"{C}/export/?format=parquet"), tmp_path)
    card = (folder / "README.md").read_text()
    header = card.split("---")[1]
    assert 'license: "cc-by-4.0"' in header and "config_name: judgements" in header and "config_name: summaries" in header
    assert header.index("config_name: judgements") < header.index("default: true") < header.index("config_name: edits")
    judgements = _load(folder, "judgements", tmp_path)
    assert len(judgements) == SentenceJudgement.objects.filter(summary__document__campaign=campaign).count()
    assert set(judgements.column_names) >= {"summary_id", "worker", "factual", "categories"}
    assert all(w.startswith("w") for w in judgements["worker"])  # pseudonyms, as in jsonl
    jsonl = [json.loads(x) for x in _body(researcher_client.get(f"{C}/export/?format=jsonl&rows=judgements")).decode().splitlines()]
    assert sorted(judgements["factual"]) == sorted(r["factual"] for r in jsonl)
    scores = _load(folder, "scores", tmp_path)
    assert len(scores) == MetricScore.objects.filter(summary__document__campaign=campaign).count()
    human_annotations = _load(folder, "human_annotations", tmp_path)
    frank = json.loads(_body(researcher_client.get(f"{C}/export/?format=frank&file=summaries")))
    assert sorted(human_annotations["Factuality"]) == sorted(r["Factuality"] for r in frank)
    # One name per corpus and one summary id across the tables.
    summaries = _load(folder, "summaries", tmp_path)
    assert set(human_annotations["summary_id"]) <= set(summaries["summary_id"]) and set(scores["summary_id"]) <= set(summaries["summary_id"])
    assert set(human_annotations["dataset"]) <= set(summaries["dataset"]) and "bbc" not in set(human_annotations["dataset"])
    other = _unzip(researcher_client.get(f"{C}/export/?format=parquet&rows=scores&license=mit"), tmp_path / "b")
    assert 'license: "mit"' in (other / "README.md").read_text() and sorted(p.name for p in (other / "data").iterdir()) == ["human_annotations.parquet", "scores.parquet"]
    assert researcher_client.get(f"{C}/export/?format=parquet&license=not%20a%20license").status_code == 400


def test_parquet_export_of_bump_pairs_keeps_ids_and_labels(bump_campaign, researcher_client, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    folder = _unzip(researcher_client.get("/api/campaigns/bump-t1/export/?format=parquet"), tmp_path)
    card = (folder / "README.md").read_text()
    assert 'license: "unknown"' in card and "Empty, hence left out: judgements" in card and "config_name: judgements" not in card
    pairs = _load(folder, "pairs", tmp_path)
    source = sorted(json.loads((SAMPLES_DIR / "bump_task1_sample.json").read_text()), key=lambda r: r["id"])
    rows = sorted(pairs.to_list(), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == [r["id"] for r in source]
    assert [(r["error_type"], r["corrected_error_type"]) for r in rows] == [(r["error_type"], r["corrected_error_type"]) for r in source]
    first_metric = next(iter(source[0]["scores"]))
    assert rows[0][first_metric] == source[0]["scores"][first_metric]
    assert len(_load(folder, "edits", tmp_path)) == 7


@pytest.mark.parametrize(("name", "option", "expected"), [
    ("qags_mturk_sample.jsonl", None, "other"),
    ("mturk_xsum.jsonl", None, "xsum"),
    ("mturk_cnndm.jsonl", None, "cnndm"),
    ("qags_mturk_sample.jsonl", "xsum", "xsum"),
])
def test_qags_dataset_from_the_file_name_or_the_option(tmp_path, name, option, expected):
    path = tmp_path / name
    path.write_bytes((SAMPLES_DIR / "qags_mturk_sample.jsonl").read_bytes())
    import_dataset("qags", [path], campaign_slug="q", dataset=option)
    assert set(Document.objects.filter(campaign__slug="q").values_list("dataset", flat=True)) == {expected}


def test_qags_dataset_from_the_record_and_through_the_api(tmp_path, admin_client, settings, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    lines = [json.loads(x) for x in (SAMPLES_DIR / "qags_mturk_sample.jsonl").read_text().splitlines() if x.strip()]
    lines[0]["dataset"] = "bbc"  # FRANK's name for XSum
    content = "\n".join(json.dumps(x) for x in lines).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/api/imports/", {"file": SimpleUploadedFile("q.jsonl", content), "format": "qags", "campaign": "qa", "dataset": "cnndm"},
            format="multipart",
        )
    options = response.json()["options"]
    assert response.status_code == 202 and options["dataset"] == "cnndm" and options["detected"].startswith("qags: ")
    assert admin_client.get(f"/api/imports/{response.json()['id']}/").json()["status"] == "succeeded"
    datasets = list(Document.objects.filter(campaign__slug="qa").order_by("id").values_list("dataset", flat=True))
    assert datasets[0] == "xsum" and set(datasets[1:]) == {"cnndm"}
    lines[1]["dataset"] = "imdb"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(x) for x in lines))
    from annotate.importers.base import ImportFailed

    with pytest.raises(ImportFailed, match="unknown dataset 'imdb'"):
        import_dataset("qags", [bad], campaign_slug="qb")
    assert not Campaign.objects.filter(slug="qb").exists()
    not_qags = admin_client.post(
        "/api/imports/", {"file": SimpleUploadedFile("d.jsonl", b"{}"), "format": "jsonl", "campaign": "x", "dataset": "xsum"}, format="multipart"
    )
    assert not_qags.status_code == 400 and "qags" in not_qags.json()["detail"]
