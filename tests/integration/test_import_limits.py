"""Import limits: every hostile or broken file is refused while it is read, the refusal names the
file, the record and the field, nothing is stored, and the command line prints one line without a traceback."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.utils import timezone

from annotate.importers.base import ImportFailed
from annotate.models import Campaign, Document, ImportJob, ImportStatus, Summary
from annotate.services.import_jobs import execute_import_job, purge_import_uploads
from annotate.services.imports import import_dataset, import_scores
from tests.celery_helpers import worker_database_url
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.django_db

DOC = {"id": "d1", "text": "Paris beat Lyon on Sunday.", "summaries": [{"system": "bart", "text": "Lyon won."}]}
BUMP = {
    "article_id": "a1", "article": "Paris beat Lyon on Sunday.", "reference_summary": "Paris won.",
    "edited_summary": "Lyon won.", "error_type": "Intrinsic Entity Error",
}


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _refused(fmt: str, path: Path, **kwargs) -> ImportFailed:
    with pytest.raises(ImportFailed) as info:
        import_dataset(fmt, [path], campaign_slug="limits", **kwargs)
    assert not Document.objects.exists() and not Summary.objects.exists()  # nothing stored half-way
    return info.value


def _frank_folder(root: Path, hash_: str = "abc123", article: dict | None = None, **record: object) -> Path:
    (root / "articles").mkdir(parents=True, exist_ok=True)
    annotation = {"hash": hash_, "model_name": "bart", "dataset": "cnndm", "split": "test", "Factuality": 1.0, **record}
    (root / "human_annotations.json").write_text(json.dumps([annotation]))
    if article is not None:
        (root / "articles" / "abc123.json").write_text(json.dumps(article))
    return root


ARTICLE = {"article": "Paris beat Lyon.", "article_lines": ["Paris beat Lyon."], "bart_lines": ["Lyon won."]}


# --- nesting depth


def test_deeply_nested_json_array_is_refused_while_streaming_with_flat_memory(tmp_path):
    path = tmp_path / "deep.json"
    depth = 200_000
    path.write_text("[" + "[" * depth + "]" * depth + "]")
    tracemalloc.start()
    error = _refused("bump", path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "nested deeper than 16 levels" in str(error) and error.record == 0
    assert peak < 20 * 1024 * 1024, f"peak {peak} bytes"  # the old reader needed gigabytes


def test_deeply_nested_json_line_is_refused_naming_the_line(tmp_path):
    path = _jsonl(tmp_path / "deep.jsonl", DOC, '{"id": "d2", "text": "x", "summaries": ' + "[" * 50_000 + "]" * 50_000 + "}")
    error = _refused("jsonl", path)
    assert error.record == "line 2" and "nested deeper" in str(error)


def test_nesting_above_the_configured_depth_names_the_field(tmp_path, settings):
    settings.FACTLAB_IMPORT_LIMITS = {**settings.FACTLAB_IMPORT_LIMITS, "max_depth": 4}
    record = {**BUMP, "scores": {"rouge_reference": [[[0.5]]]}}
    path = tmp_path / "b.json"
    path.write_text(json.dumps([BUMP, record]))
    error = _refused("bump", path)
    assert error.record == 1 and error.field == "scores.rouge_reference" and "deeper than 4" in str(error)


# --- zip archives


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_zip_bomb_is_refused_by_its_ratio_before_it_fills_the_disk(tmp_path):
    path = tmp_path / "bomb.zip"
    path.write_bytes(_zip({"frank/human_annotations.json": b"[]", "frank/articles/x.json": b" " * (64 * 1024 * 1024)}))
    assert path.stat().st_size < 200_000
    error = _refused("frank", path)
    assert "FACTLAB_IMPORT_MAX_ZIP_RATIO" in str(error) and error.field == "frank/articles/x.json"


def test_zip_total_size_and_member_count_are_bounded(tmp_path, settings):
    settings.FACTLAB_IMPORT_LIMITS = {**settings.FACTLAB_IMPORT_LIMITS, "max_zip_bytes": 1000, "max_zip_members": 3}
    many = tmp_path / "many.zip"
    many.write_bytes(_zip({f"frank/articles/{i}.json": b"{}" for i in range(5)}))
    assert "the zip holds 5 members; the limit is 3" in str(_refused("frank", many))
    big = tmp_path / "big.zip"
    big.write_bytes(_zip({"frank/human_annotations.json": os.urandom(2000)}))
    assert "expands beyond 1000 bytes" in str(_refused("frank", big))


def test_zip_member_climbing_out_of_the_folder_is_refused(tmp_path):
    path = tmp_path / "evil.zip"
    path.write_bytes(_zip({"../evil.json": b"[]"}))
    assert "unsafe member name '../evil.json'" in str(_refused("frank", path))


# --- ids used as paths


def test_frank_hash_with_path_segments_cannot_read_other_files(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(ARTICLE))  # a JSON file elsewhere on the disk that the hash points to
    root = _frank_folder(tmp_path / "frank", hash_="../../secret", article=ARTICLE)
    error = _refused("frank", root)
    # The id is never a path: its file name is a slug and a hash of it, which the folder does not hold.
    assert error.field == "hash" and error.record == 0 and "(articles/secret-" in str(error)
    assert Path(error.path).name == "human_annotations.json"


# --- numbers


@pytest.mark.parametrize("value", ["1" + "0" * 400, "1e400", "NaN", "Infinity"])
def test_huge_or_non_finite_numbers_are_refused_in_json_lines(tmp_path, value):
    line = json.dumps({**DOC, "summaries": [{"system": "bart", "text": "Lyon won.", "human_scores": {"Factuality": 0}}]})
    line = line.replace('"Factuality": 0', f'"Factuality": {value}')
    error = _refused("jsonl", _jsonl(tmp_path / "n.jsonl", line))
    assert error.record == "line 1"
    assert "not a finite number" in str(error) or "out of range" in str(error) or "malformed JSON" in str(error)


def test_huge_human_score_in_frank_is_refused_naming_the_record(tmp_path):
    root = _frank_folder(tmp_path / "frank", article=ARTICLE)
    text = (root / "human_annotations.json").read_text().replace('"Factuality": 1.0', '"Factuality": 1' + "0" * 400)
    (root / "human_annotations.json").write_text(text)
    error = _refused("frank", root)
    assert error.record == 0 and "human_annotations.json" in str(error)


def test_number_outside_the_fields_range_is_refused(tmp_path):
    root = _frank_folder(tmp_path / "frank", article=ARTICLE, Factuality=7.0)
    error = _refused("frank", root)
    assert error.field == "Factuality" and "outside [0, 1]" in str(error)


def test_metric_score_out_of_range_is_refused(tmp_path):
    import_dataset("jsonl", [_jsonl(tmp_path / "d.jsonl", DOC)], campaign_slug="limits")
    path = _jsonl(tmp_path / "s.jsonl", {"document": "d1", "system": "bart", "metric": "m", "value": 1e300})
    with pytest.raises(ImportFailed) as info:
        import_scores("jsonl", [path], campaign_slug="limits")
    assert info.value.field == "value" and info.value.record == "line 1"


# --- strings, encodings


def test_over_long_string_is_refused_before_spacy_sees_it(tmp_path):
    path = _jsonl(tmp_path / "long.jsonl", {**DOC, "text": "word " * 300_000})
    error = _refused("jsonl", path)
    assert error.record == "line 1" and error.field == "text" and "FACTLAB_IMPORT_MAX_STRING_CHARS" in str(error)
    assert "E088" not in str(error)


def test_non_utf8_input_names_the_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((json.dumps(DOC) + "\n").encode() + '{"id": "caf\u00e9"}\n'.encode("latin-1"))
    error = _refused("jsonl", path)
    assert error.record == "line 2" and "not valid UTF-8" in str(error) and "0xe9" in str(error)


def test_non_utf8_json_array_names_the_record(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b"[" + json.dumps(BUMP).encode() + b", " + json.dumps({**BUMP, "article_id": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"]")
    error = _refused("bump", path)
    assert error.record == 1 and "not valid UTF-8" in str(error)


def test_file_size_limit(tmp_path, settings):
    settings.FACTLAB_IMPORT_LIMITS = {**settings.FACTLAB_IMPORT_LIMITS, "max_file_bytes": 10}
    assert "FACTLAB_IMPORT_MAX_FILE_BYTES" in str(_refused("jsonl", _jsonl(tmp_path / "d.jsonl", DOC)))


# --- duplicate ids


def test_duplicate_ids_with_different_content_are_refused_naming_both_records(tmp_path):
    path = _jsonl(tmp_path / "dup.jsonl", DOC, {**DOC, "text": "Lyon beat Paris."})
    error = _refused("jsonl", path)
    assert error.record == "line 2" and error.field == "id"
    assert "dup.jsonl, record line 1" in str(error)  # the first record of that id


def test_bump_duplicate_article_id_with_another_article_is_refused(tmp_path):
    path = tmp_path / "bump.json"
    path.write_text(json.dumps([BUMP, {**BUMP, "article": "Something else entirely."}]))
    error = _refused("bump", path)
    assert error.record == 1 and error.field == "article_id" and "record 0" in str(error)


def test_same_id_same_content_stays_idempotent_and_a_changed_text_later_is_refused(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", DOC, DOC)
    import_dataset("jsonl", [path], campaign_slug="limits")
    import_dataset("jsonl", [path], campaign_slug="limits")
    assert Document.objects.count() == 1
    changed = _jsonl(tmp_path / "changed.jsonl", {**DOC, "text": "Another article."})
    with pytest.raises(ImportFailed) as info:
        import_dataset("jsonl", [changed], campaign_slug="limits")
    assert "already in campaign 'limits' with a different text" in str(info.value)
    assert Document.objects.get().text == DOC["text"]


# --- command line


@pytest.mark.parametrize("content", [b'{"id": "caf\xe9"}\n', b'{"id": "d", "text": "x", "summaries": [{"system": "s", "text": "t", "human_scores": {"F": NaN}}]}\n'])
def test_command_line_prints_one_error_line_and_exits_1(tmp_path, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = worker_database_url()  # this test's database
    else:  # SQLite: the test database lives in memory; the command gets its own migrated file
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = str(tmp_path / "cli.sqlite3")
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO_ROOT, env=env, check=True, timeout=300)
    proc = subprocess.run(
        [sys.executable, "manage.py", "import_dataset", "jsonl", str(path), "--campaign", "cli-limits", "--no-progress"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("CommandError: import failed, nothing was stored: bad.jsonl, record line 1")


# --- import jobs: attempt cap, uploaded files


def _job(tmp_path, settings, content: bytes, name: str = "docs.jsonl", **fields) -> ImportJob:
    settings.MEDIA_ROOT = tmp_path / "media"
    job = ImportJob(format="jsonl", campaign_slug="jobs", original_name=name, **fields)
    job.file.save(name, ContentFile(content), save=False)
    job.save()
    return job


def test_import_job_gives_up_after_the_attempt_cap(tmp_path, settings):
    settings.FACTLAB_IMPORT_MAX_ATTEMPTS = 3
    # A job whose worker died three times (e.g. out of memory) is "running" with three attempts.
    job = _job(tmp_path, settings, (json.dumps(DOC) + "\n").encode(), status=ImportStatus.RUNNING, attempts=3)
    job = execute_import_job(job.pk)
    assert job.status == ImportStatus.FAILED and "gave up after 3 attempts" in job.error["message"]
    assert not Campaign.objects.filter(slug="jobs").exists()


def test_each_start_counts_as_an_attempt(tmp_path, settings):
    job = _job(tmp_path, settings, (json.dumps(DOC) + "\n").encode())
    job = execute_import_job(job.pk)
    assert job.status == ImportStatus.SUCCEEDED and job.attempts == 1


def test_uploads_are_deleted_after_success_and_failed_ones_after_the_retention(tmp_path, settings):
    settings.FACTLAB_IMPORT_FAILED_RETENTION_HOURS = 24
    good = _job(tmp_path, settings, (json.dumps(DOC) + "\n").encode())
    bad = _job(tmp_path, settings, b'{"id": 1}\n', name="bad.jsonl")
    good_path, bad_path = Path(good.file.path), Path(bad.file.path)
    assert execute_import_job(good.pk).status == ImportStatus.SUCCEEDED
    assert execute_import_job(bad.pk).status == ImportStatus.FAILED
    assert not good_path.exists() and bad_path.exists()  # the failed file stays for inspection
    assert purge_import_uploads() == 0 and bad_path.exists()
    assert purge_import_uploads(now=timezone.now() + timedelta(hours=25)) == 1
    assert not bad_path.exists() and ImportJob.objects.get(pk=bad.pk).file.name == ""


# --- every wrong record named in one run


def test_one_run_names_every_wrong_record_and_stores_nothing(tmp_path, settings, client):
    good = lambda k: {**DOC, "id": f"d{k}"}
    lines = [
        good(1),
        {"id": "d2", "summaries": []},  # no text
        good(3),
        {**DOC, "id": "d4", "summaries": [{"system": "bart", "text": "Lyon won.", "human_scores": {"Factuality": "high"}}]},
        {**DOC, "id": "d5", "summaries": "Lyon won."},
    ]
    error = _refused("jsonl", _jsonl(tmp_path / "three.jsonl", *lines))
    assert [p["record"] for p in error.problems] == ["line 2", "line 4, summary 0", "line 5"]
    assert (error.record, error.field) == ("line 2", "text") and "3 records are wrong" in str(error)
    assert all(p["file"].endswith("three.jsonl") and p["message"] for p in error.problems)
    # A file of the wrong kind is not read to its end: the run stops at the 20th wrong record.
    many = _refused("jsonl", _jsonl(tmp_path / "many.jsonl", *[{"id": f"x{k}"} for k in range(50)]))
    assert len(many.problems) == 20 and "stopped at the first 20" in str(many)
    # The import page lists them.
    job = _job(tmp_path, settings, _jsonl(tmp_path / "page.jsonl", *lines).read_bytes(), name="page.jsonl")
    job = execute_import_job(job.pk)
    assert job.status == ImportStatus.FAILED and len(job.error["problems"]) == 3
    from tests.factories import make_worker

    client.force_login(make_worker(staff=True).user)
    page = client.get(f"/manage/imports/{job.pk}/").content.decode()
    assert 'id="error-problems"' in page and page.count("<li>page.jsonl, record line") == 3
