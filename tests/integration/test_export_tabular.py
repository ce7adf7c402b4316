"""JSONL and CSV exports: columns, row kinds, filters, pseudonyms and streaming."""
from __future__ import annotations

import csv
import io
import json

import pytest

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.exporters.tabular import COLUMNS
from annotate.models import Campaign, SentenceJudgement, Summary
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
C = "/api/campaigns/frank-api/export/"


def _lines(response) -> list[str]:
    assert response.status_code == 200, response.content if not response.streaming else ""
    assert response.streaming  # never materialised by the view
    return b"".join(response.streaming_content).decode().splitlines()


def test_jsonl_has_every_row_kind_with_documented_columns(campaign, researcher_client):
    response = researcher_client.get(C, {"format": "jsonl"})
    assert response["Content-Disposition"] == 'attachment; filename="frank-api.jsonl"'
    rows = [json.loads(line) for line in _lines(response)]
    assert [r["record_type"] for r in rows].count("judgement") == 24
    assert [r["record_type"] for r in rows].count("edit") == 1 and [r["record_type"] for r in rows].count("score") == 4
    assert [r["record_type"] for r in rows].count("summary") == Summary.objects.filter(document__campaign=campaign).count()
    assert all(tuple(r) == COLUMNS for r in rows)
    judgement = next(r for r in rows if r["record_type"] == "judgement" and not r["factual"])
    assert judgement["categories"] == ["EntE"] and judgement["worker"].startswith("w") and len(judgement["worker"]) == 13


def test_csv_header_and_cells(campaign, researcher_client):
    rows = list(csv.DictReader(io.StringIO("\n".join(_lines(researcher_client.get(C, {"format": "csv", "rows": "judgements"}))))))
    assert len(rows) == 24 and tuple(rows[0]) == COLUMNS
    wrong = [r for r in rows if r["factual"] == "false"]
    assert wrong and all(r["categories"] == "EntE" for r in wrong) and rows[0]["metric"] == ""


def test_filters_apply_to_exports(campaign, researcher_client):
    blocked = worker_pseudonym(campaign.pk, campaign.workers_for_tests[2].pk)
    active = [json.loads(x) for x in _lines(researcher_client.get(C, {"format": "jsonl", "rows": "judgements", "worker_status": "active"}))]
    assert len(active) == 16 and blocked not in {r["worker"] for r in active}
    test_split = [json.loads(x) for x in _lines(researcher_client.get(C, {"format": "jsonl", "split": "test", "system": "bart"}))]
    assert {(r["split"], r["system"]) for r in test_split} == {("test", "bart")}
    assert {r["record_type"] for r in test_split} == {"judgement", "edit", "score", "summary"}
    SentenceJudgement.objects.filter(worker=campaign.workers_for_tests[0]).update(created_at="2020-01-01T00:00:00Z")
    old = [json.loads(x) for x in _lines(researcher_client.get(C, {"format": "jsonl", "rows": "judgements", "until": "2021-01-01T00:00:00Z"}))]
    assert len(old) == 8 and {r["created_at"][:4] for r in old} == {"2020"}
    since = [json.loads(x) for x in _lines(researcher_client.get(C, {"format": "jsonl", "rows": "judgements", "since": "2021-01-01T00:00:00Z"}))]
    assert len(since) == 16


def test_pseudonyms_are_stable_per_campaign_and_differ_across_campaigns(campaign, researcher_client):
    first = _lines(researcher_client.get(C, {"format": "csv"}))
    assert first == _lines(researcher_client.get(C, {"format": "csv"}))
    worker = campaign.workers_for_tests[0]
    assert worker_pseudonym(campaign.pk, worker.pk) != worker_pseudonym(campaign.pk + 1, worker.pk)
    assert worker_pseudonym(campaign.pk, worker.pk) != worker_pseudonym(campaign.pk, worker.pk, key="another key")


def test_admin_reveal(campaign, admin_client):
    rows = [json.loads(x) for x in _lines(admin_client.get(C, {"format": "jsonl", "rows": "judgements,edits", "reveal_workers": "1"}))]
    assert {r["worker"] for r in rows} == {"prolific:EXT-a", "prolific:EXT-b", "prolific:EXT-c"}


def test_bad_export_parameters(campaign, researcher_client):
    assert researcher_client.get(C, {"format": "xml"}).status_code == 400
    bad_rows = researcher_client.get(C, {"format": "jsonl", "rows": "judgements,traps"})
    assert bad_rows.status_code == 400 and "rows" in bad_rows.json()
    assert researcher_client.get(C, {"format": "csv", "since": "yesterday"}).status_code == 400
    assert researcher_client.get(C, {"format": "frank", "file": "traps"}).status_code == 400


def test_empty_campaign_exports_cleanly(admin_client):
    Campaign.objects.create(slug="empty", name="Empty")
    assert _lines(admin_client.get("/api/campaigns/empty/export/", {"format": "jsonl"})) == []
    assert _lines(admin_client.get("/api/campaigns/empty/export/", {"format": "csv"})) == [",".join(COLUMNS)]
    assert json.loads("".join(_lines(admin_client.get("/api/campaigns/empty/export/", {"format": "frank", "file": "summaries"})))) == []
