"""The span protocol through the shared hooks: its answer rows in the jsonl/csv/Parquet exports, its section in
the report API and ``manage.py report``; and the protocol is one package plus one registry line."""
from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.imports import import_dataset
from annotate.spans.models import SpanAnswer
from tests.factories import make_campaign, make_worker
from tests.protocol_ownership import lines_naming, package_files

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "annotate" / "spans" / "testdata"


def _body(response) -> bytes:
    assert response.status_code == 200, response.content[:500]
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


@pytest.mark.django_db
def test_span_answers_reach_the_shared_exports_and_the_report():
    campaign = make_campaign(kind="spans", redundancy=5)
    import_dataset("span_records", [SAMPLES / "goyal_style.json"], campaign_slug=campaign.slug)
    worker = make_worker()
    for _ in range(2):  # answering as the gold says (a worker far from it would be blocked by the control items)
        assignment = request_assignment(worker, campaign)
        gold = assignment.item.summary.gold_spans.spans
        submit_assignment(assignment.pk, worker, {"no_error": not gold, "spans": [{"start": a, "end": b, "type": t} for a, b, t in gold]},
                          submission_key=f"k{assignment.pk}")
    admin = get_user_model().objects.create_superuser("span-admin", "span@example.org", "pw-factlab-1")
    api = APIClient()
    api.force_authenticate(admin)
    export = f"/api/campaigns/{campaign.slug}/export/"
    lines = [json.loads(line) for line in _body(api.get(export, {"format": "jsonl", "rows": "span_answer"})).decode().splitlines()]
    assert len(lines) == SpanAnswer.objects.count() == 7 and {line["record_type"] for line in lines} == {"span_answer"}
    crowd = [line for line in lines if line["source"] == "crowd"]
    gold = {a.summary_id: a.summary.gold_spans.spans for a in SpanAnswer.objects.filter(source="crowd")}
    assert len(crowd) == 2
    for line in crowd:
        assert [x["type"] for x in json.loads(line["spans"])] == [t for *_, t in gold[line["summary_id"]]]
    assert all(line["worker"] and line["worker"] != str(worker.pk) for line in crowd)  # pseudonyms
    assert {line["unified_types"] for line in lines if line["system"] == "bart"} == {"intrinsic_predicate,extrinsic_np"}
    table = _body(api.get(export, {"format": "csv"})).decode().splitlines()
    assert sum(line.startswith("span_answer,") for line in table) == 7
    parquet = zipfile.ZipFile(io.BytesIO(_body(api.get(export, {"format": "parquet"}))))
    rows = pq.read_table(io.BytesIO(parquet.read("data/span_answer.parquet")))
    assert rows.num_rows == 7 and str(rows.schema.field("n_spans").type) == "int64"

    report = api.get(f"/api/campaigns/{campaign.slug}/report/")
    assert report.status_code == 200, report.content[:300]
    section = report.json()["sections"][0]
    assert section["title"] == "Typed error spans" and section["counts"]["answers"] == 7 and section["counts"]["annotators"] == 4
    assert section["agreement"]["statistic"].startswith("Krippendorff's alpha") and -1 <= section["agreement"]["value"] <= 1
    text = io.StringIO()
    call_command("report", "--campaign", campaign.slug, stdout=text)
    assert "Typed error spans" in text.getvalue()


#: What the package owns, and the tests that exercise it from the test lanes.
OWNED = {
    "README.md", "__init__.py", "apps.py", "detectors.py", "exporter.py", "gold.py", "importer.py", "llm.py", "management/__init__.py",
    "management/commands/__init__.py", "management/commands/span_report.py", "migrations/0001_initial.py", "migrations/0002_model_answers.py",
    "migrations/__init__.py",
    "models.py", "protocol.py", "qualification.py", "report.py", "tutorial.py", "services.py", "static/spans/spans.css", "static/spans/task.js", "taxonomy.py",
    "templates/spans/_exercise.html", "templates/spans/_page.html", "templates/spans/_picker.html", "templates/spans/gold_edit.html", "templates/spans/gold_list.html", "templates/spans/qualification.html", "templates/spans/tutorial.html",
    "templates/spans/task.html", "testdata/LICENSE", "testdata/README.md", "testdata/cliff_style.jsonl", "testdata/goyal_style.json",
    "testdata/offsets.jsonl", "testdata/xsumfaith_style.json", "urls.py", "views.py", "words.py",
}
#: Tests of the package kept in the test lanes, and the shared ownership helper's example.
TESTS = re.compile(r"tests/\w+/test_(browser_)?spans\w*\.py$|tests/protocol_ownership\.py$")
# Names only the span protocol uses: its package, classes, URL names and import formats.
NAMES = re.compile(r"annotate[./]spans|SpansProtocol|SpansConfig|spans-(task|submit|gold)|span_records|span_offsets")


def test_the_span_protocol_is_one_package_and_one_registry_line():
    assert package_files("annotate/spans") == OWNED
    assert lines_naming(NAMES, "annotate/spans", skip=TESTS) == ['factlab/settings.py: "annotate.spans",']
