"""Hostile files and exports: limits hold on what is written, every CSV is formula-neutral, exports with
hostile document ids re-import, stored values over their field's limit are refused naming field and record,
and an upload declared too large is refused before its body is read."""
from __future__ import annotations

import csv
import io
import json
import socket
import time
import zipfile
import zlib
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotate.importers.base import ImportFailed
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Campaign,
    Document,
    ImportJob,
    MetricScore,
    Participation,
    SentenceJudgement,
    Summary,
)
from annotate.safe_csv import neutralise_cell
from annotate.services.bonuses import ledger_csv
from annotate.services.imports import import_dataset
from tests.factories import make_worker
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
AGGREFACT_SAMPLE = Path(__file__).resolve().parents[1] / "data" / "aggrefact" / "aggrefact_sample.csv"
MiB = 1024 * 1024


def _bytes_written_by_this_process() -> int:
    """Bytes this process handed to write() (the kernel's count, whatever wrote them)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def _refused_zip(path: Path, slug: str) -> tuple[ImportFailed, int]:
    before = _bytes_written_by_this_process()
    with pytest.raises(ImportFailed) as failure:
        import_dataset("frank", [path], campaign_slug=slug)
    written = _bytes_written_by_this_process() - before
    assert not Campaign.objects.filter(slug=slug).exists() and not Document.objects.exists()
    return failure.value, written


# --- 1. zip limits on what is written


@pytest.mark.parametrize("members, setting", [
    (1100, "FACTLAB_IMPORT_MAX_UNZIPPED_BYTES"),  # the attack: its headers declare more than the total limit
    (1000, "FACTLAB_IMPORT_MAX_ZIP_RATIO"),  # declared just under the total limit: the ratio stops what is written
])
def test_zip_of_megabyte_members_of_zeros_is_refused_before_110_mb_are_written(tmp_path, members, setting):
    path = tmp_path / "bomb.zip"
    zeros = b"\0" * MiB
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("frank/human_annotations.json", "[]")
        for index in range(members):
            archive.writestr(f"frank/articles/{index}.json", zeros)
    assert path.stat().st_size < 1_500_000  # about 1.2 MB declaring 1.1 GiB (the attack measured 1.28 MB)
    error, written = _refused_zip(path, "bomb")
    assert written < 110_000_000, f"{written} bytes written before the refusal"
    assert written < 2 * MiB  # refused from the headers, or in the first member after its first chunks
    assert setting in str(error) and "nothing was imported" in str(error)
    if setting == "FACTLAB_IMPORT_MAX_ZIP_RATIO":
        assert error.field == "frank/articles/0.json"


def test_many_small_members_are_bounded_by_the_archive_ratio_while_streaming(tmp_path):
    """Members below the per-member floor (60 KiB of zeros each): the archive's ratio stops the extraction."""
    path = tmp_path / "small.zip"
    chunk = b"\0" * (60 * 1024)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("frank/human_annotations.json", "[]")
        for index in range(3000):
            archive.writestr(f"frank/articles/{index}.json", chunk)
    compressed = path.stat().st_size
    error, written = _refused_zip(path, "small")
    assert "FACTLAB_IMPORT_MAX_ZIP_RATIO" in str(error) and "expands more than" in str(error)
    # At most the ratio limit times the upload (plus one chunk) reached the disk, not the 176 MiB declared.
    assert written <= 100 * compressed + 128 * 1024, (written, compressed)


def test_each_member_size_is_bounded_by_what_it_writes(tmp_path, settings):
    settings.FACTLAB_IMPORT_LIMITS = {**settings.FACTLAB_IMPORT_LIMITS, "max_file_bytes": 300_000}
    path = tmp_path / "big-member.zip"
    noise = zlib.compress(b"x")  # incompressible bytes: no ratio limit applies
    payload = b"".join(noise + index.to_bytes(4, "big") for index in range(60_000))[:600_000]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("frank/human_annotations.json", "[]")
        archive.writestr("frank/articles/a.json", payload)
    error, written = _refused_zip(path, "big-member")
    assert "a member expands beyond 300000 bytes (FACTLAB_IMPORT_MAX_FILE_BYTES)" in str(error)
    assert error.field == "frank/articles/a.json" and written < 400_000


# --- 2. every CSV the platform writes is formula-neutral

HOSTILE = ['=HYPERLINK("http://x","y")', " =1+1", "\n=1", "@SUM(1)"]
FORMULA_LEADS = ("=", "+", "-", "@")


def _formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: a formula lead, possibly after leading whitespace, without the ``'`` guard."""
    found = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith("'"):
                continue
            stripped = cell.lstrip(" \t\r\n")
            try:
                float(stripped)
                continue  # a number such as -0.25
            except ValueError:
                pass
            if cell.startswith(("\t", "\r")) or stripped.startswith(FORMULA_LEADS):
                found.append(cell)
    return found


def _hostile_aggrefact(tmp_path: Path) -> Path:
    """The AggreFact sample with four more detectors whose names are formulas (scores: DAE's, shifted)."""
    with AGGREFACT_SAMPLE.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for n, name in enumerate(HOSTILE):
        for i, row in enumerate(rows):
            row[f"{name}_score"] = f"{float(row['DAE_score']) * (n + 1) + (i % 3) * 0.01:.4f}"
    path = tmp_path / "hostile.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _ready(client, url: str):
    """The answer once the report is computed (202 while a worker computes it)."""
    deadline = time.monotonic() + 120
    while (response := client.get(url)).status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert response.status_code == 200, response.content
    return response


def test_a_formula_in_a_metric_name_or_a_worker_id_is_neutralised_in_every_csv(tmp_path, researcher, researcher_client, admin_user):
    from django.test import Client

    from metrics_service import paper
    from metrics_service.report import build_report

    cache.clear()
    import_dataset("aggrefact", [_hostile_aggrefact(tmp_path)], campaign_slug="hostile-csv")
    campaign = Campaign.objects.get(slug="hostile-csv")
    campaign.researchers.add(researcher)
    assert set(HOSTILE) <= set(MetricScore.objects.filter(summary__document__campaign=campaign).values_list("metric", flat=True))
    # A crowd worker whose platform id and block reason are formulas, with a judgement, pay and a bonus.
    worker = make_worker(HOSTILE[3], provider="mturk", external_id=HOSTILE[0])
    item = campaign.items.first()
    summary = Summary.objects.filter(document=item.document, is_reference=False).first()
    assignment = Assignment.objects.create(
        item=item, worker=worker, status=AssignmentStatus.SUBMITTED, expires_at=timezone.now() + timedelta(hours=1),
        external_assignment_id=HOSTILE[3],
    )
    Participation.objects.create(worker=worker, campaign=campaign, items_submitted=1, is_blocked=True, blocked_reason=HOSTILE[2])
    BonusEntry.objects.create(key=f"b:{assignment.pk}", worker=worker, campaign=campaign, assignment=assignment, amount=Decimal("1.00"), reason="bonus")
    SentenceJudgement.objects.create(summary=summary, sentence_index=0, worker=worker, assignment=assignment, factual=True)

    outputs: dict[str, str] = {}
    # Report tables over the API: every table the listing names.
    listing = _ready(researcher_client, f"/api/campaigns/{campaign.slug}/report/outputs/")
    tables = [name for name in listing.json()["tables"] if name.endswith(".csv")]
    assert len(tables) >= 4
    for name in tables:
        response = _ready(researcher_client, f"/api/campaigns/{campaign.slug}/report/outputs/{name}")
        assert response["Content-Type"].startswith("text/csv")
        outputs[f"report/{name}"] = response.content.decode()
    # The same tables as `manage.py report --outputs DIR` writes them.
    report = build_report(campaign)
    frame, metrics = paper.analysis_frame(campaign, {})
    for path in paper.write_outputs(tmp_path / "outputs", report, frame, metrics, table_formats=("csv",), figure_formats=()):
        outputs[f"command/{path.name}"] = path.read_text(encoding="utf-8")
    # Row exports (scores and judgements).
    export = researcher_client.get(f"/api/campaigns/{campaign.slug}/export/", {"format": "csv"})
    assert export.status_code == 200
    outputs["export.csv"] = b"".join(export.streaming_content).decode()
    # The campaign page's CSVs and the payment files (the admin's browser session).
    admin_client = Client()
    admin_client.force_login(admin_user)
    for name, query in (("workers", ""), ("judgements", ""), ("bonuses", ""), ("bonuses", "?format=prolific"), ("bonuses", "?format=mturk")):
        response = admin_client.get(reverse(f"annotate:manage-{name}-csv", args=[campaign.slug]) + query)
        assert response.status_code == 200
        outputs[f"manage/{name}{query}"] = response.content.decode()
    outputs["ledger mturk"] = ledger_csv(campaign, fmt="mturk")

    for name, text in outputs.items():
        assert not _formula_cells(text), (name, _formula_cells(text))
    # Each output carried a hostile value, neutralised (else this test would prove nothing about it).
    guarded = {neutralise_cell(value) for value in HOSTILE}
    assert all("'" in value for value in guarded)
    carried = {name for name, text in outputs.items() if any(cell in guarded for row in csv.reader(io.StringIO(text)) for cell in row)}
    assert {"export.csv", "manage/workers", "manage/judgements", "manage/bonuses?format=mturk", "ledger mturk"} <= carried
    assert len([n for n in carried if n.startswith("report/")]) >= 4  # the issue found formulas in 4 tables
    assert {n.replace("report/", "command/") for n in carried if n.startswith("report/")} <= carried
    # A reader still gets the names back: the guard is one leading quote.
    rows = list(csv.reader(io.StringIO(outputs["report/correlations.csv"])))
    assert guarded <= {row[0] for row in rows}


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_no_cell_starts_a_formula_whatever_separator_a_spreadsheet_splits_on(delimiter):
    """Spreadsheets of other locales split on ';' or tab: a cell holding one is quoted, so no part becomes a cell."""
    from annotate.safe_csv import csv_text

    cells = [*HOSTILE, "a;=1+1", "b\t@SUM(1)", "c,+1+cmd", 'd";=1', "-0.25", 3.5, None]
    text = csv_text([cells, ["plain", *cells]])
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):  # quotes that are not at a field's start are text
        for cell in row:
            stripped = cell.lstrip(" \t\r\n\"")
            assert not stripped.startswith(FORMULA_LEADS) or stripped == "-0.25", (delimiter, cell)
    assert next(csv.reader(io.StringIO(text))) == [
        "'" + HOSTILE[0], "' =1+1", "\n'=1", "'@SUM(1)", "a;'=1+1", "b\t'@SUM(1)", "c,'+1+cmd", "d\";'=1", "-0.25", "3.5", "",
    ]


# --- 3. exports with hostile document ids re-import

HOSTILE_IDS = ["../../../tmp/x", "a/b", "con", "Zürich–北京 ☃", "x" * 200, "..", "doc-1"]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


def _documents(slug: str) -> dict:
    return {
        d.external_id: (d.text, tuple(d.sentences), tuple(sorted(
            (s.system, s.text, tuple(s.sentences)) for s in d.summaries.filter(edited_from=None)
        )))
        for d in Document.objects.filter(campaign__slug=slug).prefetch_related("summaries")
    }


def _download(client, slug: str, **params) -> bytes:
    response = client.get(f"/api/campaigns/{slug}/export/", params)
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def test_frank_export_with_hostile_document_ids_has_safe_names_and_reimports(tmp_path, admin_client):
    records = [
        {"id": doc_id, "text": f"Article {n} says the council met.", "sentences": [f"Article {n} says the council met."],
         "summaries": [{"system": "bart", "text": f"Council {n} met.", "sentences": [f"Council {n} met."], "human_scores": {"Factuality": 1.0}}]}
        for n, doc_id in enumerate(HOSTILE_IDS)
    ]
    import_dataset("jsonl", [_jsonl(tmp_path / "hostile.jsonl", records)], campaign_slug="ids-a", campaign_kind="frank")
    archive_bytes = _download(admin_client, "ids-a", format="frank")
    names = zipfile.ZipFile(io.BytesIO(archive_bytes)).namelist()
    articles = [n for n in names if n.startswith("articles/")]
    assert len(articles) == len(HOSTILE_IDS) == len(set(articles))
    for name in articles:
        stem = name.removeprefix("articles/").removesuffix(".json")
        assert "/" not in stem and ".." not in stem and stem.isascii() and len(stem) <= 70, name
        assert stem.upper() not in {"CON", "PRN", "AUX", "NUL"}
    assert "articles/doc-1.json" in names  # an id that is a safe name keeps it (FRANK's own hashes)
    path = tmp_path / "export.zip"
    path.write_bytes(archive_bytes)
    import_dataset("frank", [path], campaign_slug="ids-b")
    assert _documents("ids-b") == _documents("ids-a") and set(_documents("ids-b")) == set(HOSTILE_IDS)
    assert not Path("/tmp/x.json").exists()


def test_bump_export_with_hostile_article_ids_reimports(tmp_path, admin_client):
    pairs = [
        {"id": f"p{n}", "article_id": doc_id, "article": f"Paris beat Lyon {n} to nil.", "reference_summary": "Paris won.",
         "edited_summary": "Lyon won.", "error_type": "Intrinsic Entity Error"}
        for n, doc_id in enumerate(HOSTILE_IDS)
    ]
    source = tmp_path / "pairs.json"
    source.write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    import_dataset("bump", [source], campaign_slug="bump-ids-a", campaign_kind="bump_taxonomy")
    exported = tmp_path / "bump.json"
    exported.write_bytes(_download(admin_client, "bump-ids-a", format="bump"))
    import_dataset("bump", [exported], campaign_slug="bump-ids-b", campaign_kind="bump_taxonomy")
    assert set(_documents("bump-ids-b")) == set(HOSTILE_IDS) and _documents("bump-ids-b") == _documents("bump-ids-a")


# --- 4. values over their field's limit name the field and the record, all of them, storing nothing


def test_over_long_values_name_field_and_record_in_one_run_and_store_nothing(tmp_path):
    good = {"id": "d1", "text": "Paris beat Lyon.", "sentences": ["Paris beat Lyon."], "summaries": [{"system": "bart", "text": "Lyon won.", "sentences": ["Lyon won."]}]}
    lines = [
        good,
        {**good, "id": "x" * 300},
        {**good, "id": "d3", "summaries": [{"system": "s" * 150, "text": "Lyon won.", "sentences": ["Lyon won."]}]},
        {**good, "id": "d4", "negative_entity": "n" * 250},
    ]
    started = time.monotonic()
    with pytest.raises(ImportFailed) as failure:
        import_dataset("jsonl", [_jsonl(tmp_path / "long.jsonl", lines)], campaign_slug="too-long")
    assert time.monotonic() - started < 10
    error = failure.value
    assert error.record == "line 2" and error.field == "id" and "300 characters; at most 200" in str(error)
    problems = {(p["record"], p["field"]) for p in error.problems}
    assert problems == {("line 2", "id"), ("line 3", "summaries[0].system"), ("line 4", "negative_entity")}
    assert "internal error" not in str(error) and "value too long" not in str(error)
    assert not Campaign.objects.filter(slug="too-long").exists() and not Document.objects.exists()


def test_over_long_ids_in_frank_and_bump_files_name_field_and_record(tmp_path):
    root = tmp_path / "frank"
    (root / "articles").mkdir(parents=True)
    long_id = "h" * 300
    (root / "human_annotations.json").write_text(json.dumps([{"hash": long_id, "model_name": "bart", "dataset": "cnndm", "Factuality": 1.0}]))
    from annotate.frank.article_files import article_member

    (root / article_member(long_id)).write_text(json.dumps({"article": "A.", "article_lines": ["A."], "bart_lines": ["S."]}))
    with pytest.raises(ImportFailed) as failure:
        import_dataset("frank", [root], campaign_slug="frank-long")
    assert (failure.value.record, failure.value.field) == (0, "hash") and "at most 200" in str(failure.value)
    pair = {"article_id": "a1", "article": "Paris beat Lyon.", "reference_summary": "Paris won.", "edited_summary": "Lyon won.",
            "error_type": "Intrinsic Entity Error"}
    bump = tmp_path / "bump.json"
    bump.write_text(json.dumps([{**pair, "article_id": long_id}, pair, {**pair, "scores": {("m" * 120) + "_edited": 0.5}}]))
    with pytest.raises(ImportFailed) as failure:
        import_dataset("bump", [bump], campaign_slug="bump-long")
    assert (failure.value.record, failure.value.field) == (0, "article_id")
    assert [(p["record"], p["field"]) for p in failure.value.problems] == [(0, "article_id"), (2, "scores." + "m" * 120 + "_edited")]
    assert not Document.objects.exists()


HUGE = "1" * 5000
LEAKS = ("int_max_str_digits", "Traceback", "sys.", "4300")


@pytest.mark.parametrize("fmt, name, body", [
    ("jsonl", "huge.jsonl", '{"id": "d1", "text": "A.", "summaries": [{"system": "s", "text": "B.", "human_scores": {"Factuality": ' + HUGE + "}}]}\n"),
    ("bump", "huge.json", '[{"article_id": "a", "article": "A.", "reference_summary": "B.", "edited_summary": "C.", '
                          '"error_type": "Intrinsic Entity Error", "scores": {"m_edited": ' + HUGE + "}}]"),
    ("qags", "huge.jsonl", '{"article": "A.", "summary_sentences": [{"sentence": "B.", "responses": [{"worker_id": ' + HUGE + ', "response": "yes"}]}]}\n'),
])
def test_a_5000_digit_number_is_refused_with_a_clean_message(tmp_path, fmt, name, body):
    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(ImportFailed) as failure:
        import_dataset(fmt, [path], campaign_slug="huge")
    message = str(failure.value)
    assert failure.value.record in ("line 1", 0) and "out of range" in message
    assert not any(leak in message for leak in LEAKS), message
    assert not Document.objects.exists()


def test_a_5000_digit_number_in_an_api_body_is_refused_cleanly(admin_client, campaign):
    response = admin_client.generic("PATCH", f"/api/campaigns/{campaign.slug}/", '{"redundancy": ' + HUGE + "}", content_type="application/json")
    assert response.status_code == 400 and "out of range" in response.json()["detail"]
    assert not any(leak in response.content.decode() for leak in LEAKS)


# --- 5. an upload declared too large is refused from its headers


def _read_response(conn: socket.socket) -> bytes:
    """One HTTP response: its headers, then as many body bytes as its Content-Length says."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = conn.recv(65536)
        if not chunk:
            return answer
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.django_db(transaction=True)
def test_upload_form_declared_too_large_is_refused_before_the_body_is_sent(live_server, admin_user, settings):
    from django.test import Client

    settings.FACTLAB_MAX_UPLOAD_BYTES = 1_000_000
    browser = Client()
    browser.force_login(admin_user)
    session = browser.cookies[settings.SESSION_COOKIE_NAME].value
    host, port = live_server.url.removeprefix("http://").split(":")
    declared = 60 * 1000 * 1000
    for path, accept in (("/manage/new/", "text/html"), ("/api/imports/", "application/json")):
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall((
                f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {settings.SESSION_COOKIE_NAME}={session}\r\n"
                f"Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: {declared}\r\nAccept: {accept}\r\n\r\n"
            ).encode())
            started = time.monotonic()
            answer = _read_response(conn)  # no body was sent: the server answers from the headers alone
            assert time.monotonic() - started < 5
        assert answer.split(b"\r\n", 1)[0].split()[1] == b"413", answer[:500]
        if accept == "text/html":
            assert b"The file is too large" in answer and b"60.0 MB" in answer and b"FACTLAB_MAX_UPLOAD_BYTES" in answer
        else:
            assert b"FACTLAB_MAX_UPLOAD_BYTES" in answer and b"limit is 1000000 bytes" in answer
    assert not ImportJob.objects.exists()
