"""Importing released span annotations: per-summary unified types equal the types in the records; a span that
cannot be found names its record and text and stores nothing; the span export imports again as it was."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.importers.errors import ImportFailed
from annotate.models import Campaign, Document, Summary
from annotate.services.imports import import_dataset
from annotate.spans import taxonomy
from annotate.spans.models import GoldSpans, SpanAnswer
from annotate.spans.protocol import SpansProtocol
from metrics_service.stats.spans import summary_types
from taxonomies.unified import UNIFIED_TYPES

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"


def _read(path: Path) -> list[dict]:
    text = path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else json.loads(text)


def _types_in_records(path: Path) -> dict[str, tuple[str, ...]]:
    """Per summary text, the types the records give it, read straight from the file: aggregated records their
    own types, per-annotator ones the types at least two annotators gave (AggreFact's rule)."""
    by_summary: dict[str, dict[str, set]] = {}
    for record in _read(path):
        annotator = record.get("annotator") or record.get("worker_id") or ""
        entries = record.get("errors") or record.get("annotations") or record.get("spans") or []
        if "hallucinated_span" in record:
            entries = [{"type": record["hallucination_type"]}] if record["hallucinated_span"] else []
        marked = by_summary.setdefault(record["summary"], {})
        marked.setdefault(annotator, set())
        for entry in entries:
            marked[annotator].add(taxonomy.normalize(entry.get("type") or entry.get("label")))
    out = {}
    for summary, marked in by_summary.items():
        need = 1 if list(marked) == [""] else 2
        counts = {t: sum(t in types for types in marked.values()) for t in UNIFIED_TYPES}
        out[summary] = tuple(t for t in UNIFIED_TYPES if counts[t] >= need)
    return out


@pytest.mark.parametrize(("fmt", "name"), [
    ("span_records", "goyal_style.json"), ("span_records", "cliff_style.jsonl"), ("span_records", "xsumfaith_style.json"),
    ("span_offsets", "offsets.jsonl"),
])
def test_imported_summaries_get_the_unified_types_of_their_records(fmt, name):
    path = SAMPLES / name
    import_dataset(fmt, [path], campaign_slug="spans-" + name.split(".")[0].replace("_", "-"), campaign_kind="spans")
    expected = _types_in_records(path)
    found = {}
    for summary in Summary.objects.filter(document__campaign__kind="spans"):
        answers = [[tuple(s) for s in a.spans] for a in summary.span_answers.all()]
        aggregated = [a.annotator for a in summary.span_answers.all()] == [""]
        found[summary.text] = summary_types(answers, min_annotators=1 if aggregated else 2)
    assert found == expected
    assert any(expected.values())


def test_goyal_style_spans_snap_to_words_and_a_later_occurrence_is_taken_from_its_offset():
    import_dataset("span_records", [SAMPLES / "goyal_style.json"], campaign_slug="goyal", campaign_kind="spans")
    summary = Summary.objects.get(system="bart", document__campaign__slug="goyal")
    first = summary.span_answers.get(annotator="ann1")
    # "council" from character 40 is the second one (word 11), not the first (word 1).
    assert [2, 3, "intrinsic_predicate"] in first.spans and [11, 12, "intrinsic_np"] in first.spans
    assert [1, 2, "intrinsic_np"] not in first.spans
    # Two "no error" answers on the other summary are stored as answers with no span.
    other = Summary.objects.get(system="pegasus", document__campaign__slug="goyal")
    assert [a.spans for a in other.span_answers.all()] == [[], []]
    # The import's annotations become gold by the majority rule: words two annotators marked with one type (the
    # shared import asks every protocol for its gold; asked again, nothing is added).
    SpansProtocol().import_gold(Campaign.objects.get(slug="goyal"))
    gold = GoldSpans.objects.get(summary=summary)
    assert gold.spans == [[2, 3, "intrinsic_predicate"], [7, 8, "extrinsic_np"]]
    assert SpansProtocol().has_gold(Campaign.objects.get(slug="goyal"))


def test_a_span_not_in_its_summary_is_named_and_nothing_is_stored(tmp_path):
    records = _read(SAMPLES / "goyal_style.json")
    records[2]["errors"][1]["span"] = "Saturday"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(records))
    with pytest.raises(ImportFailed) as failed:
        import_dataset("span_records", [bad], campaign_slug="bad-spans", campaign_kind="spans")
    message = str(failed.value)
    assert "record 2" in message and "'Saturday' is not in the summary" in message and "errors[1].span" in message
    assert not Campaign.objects.filter(slug="bad-spans").exists()
    assert not Document.objects.exists() and not SpanAnswer.objects.exists()


def test_offsets_that_do_not_read_the_given_text_and_unknown_types_are_named(tmp_path):
    record = _read(SAMPLES / "offsets.jsonl")[0]
    wrong_text = {**record, "spans": [{"start": 23, "end": 29, "text": "Monday", "type": "extrinsic_np"}]}
    wrong_type = {**record, "spans": [{"start": 23, "end": 29, "type": "made-up"}]}
    path = tmp_path / "wrong.jsonl"
    path.write_text(json.dumps(wrong_text) + "\n" + json.dumps(wrong_type) + "\n")
    with pytest.raises(ImportFailed) as failed:
        import_dataset("span_offsets", [path], campaign_slug="wrong-offsets", campaign_kind="spans")
    message = str(failed.value)
    assert "read 'Friday', not 'Monday'" in message and "unknown error type 'made-up'" in message
    assert not SpanAnswer.objects.exists()


def test_the_span_export_imports_again_with_the_same_answers(tmp_path):
    import_dataset("span_records", [SAMPLES / "goyal_style.json", SAMPLES / "cliff_style.jsonl"], campaign_slug="first", campaign_kind="spans")
    first = Campaign.objects.get(slug="first")
    stream = SpansProtocol().export(first, "spans", None, file="", reveal_workers=False, include_gold=False)
    exported = tmp_path / "exported.jsonl"
    exported.write_bytes(b"".join(stream.chunks))
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {tuple(r["unified_types"]) for r in rows if r["system"] == "bart" and r["dataset"] == "xsum"} == {("intrinsic_predicate", "extrinsic_np")}
    import_dataset("span_offsets", [exported], campaign_slug="again", campaign_kind="spans")

    def answers(slug):
        return sorted((a.summary.document.external_id, a.summary.system, a.annotator, json.dumps(a.spans))
                      for a in SpanAnswer.objects.filter(summary__document__campaign__slug=slug).select_related("summary__document"))

    assert answers("again") == answers("first")
