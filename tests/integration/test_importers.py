"""Importers on the shared data and samples: counts, idempotency, atomic failure with precise errors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.importers.base import ImportFailed
from annotate.models import (
    Campaign,
    Document,
    Item,
    MetricScore,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)
from annotate.services.imports import import_dataset, import_scores

pytestmark = pytest.mark.django_db


def _counts(slug: str) -> dict[str, int]:
    return {
        "documents": Document.objects.filter(campaign__slug=slug).count(),
        "summaries": Summary.objects.filter(document__campaign__slug=slug).count(),
        "traps": Trap.objects.filter(document__campaign__slug=slug).count(),
        "items": Item.objects.filter(campaign__slug=slug).count(),
        "scores": MetricScore.objects.filter(summary__document__campaign__slug=slug).count(),
        "judgements": SentenceJudgement.objects.filter(summary__document__campaign__slug=slug).count(),
    }


def test_frank_import_full_benchmark_and_idempotent(frank_dir):
    report = import_dataset("frank", [frank_dir], campaign_slug="frank")
    annotated = Summary.objects.filter(document__campaign__slug="frank", is_reference=False)
    assert annotated.count() == 2246
    assert annotated.values("system").distinct().count() == 9
    assert set(annotated.values_list("document__dataset", flat=True).distinct()) == {"cnndm", "xsum"}
    assert set(Document.objects.filter(campaign__slug="frank").values_list("split", flat=True).distinct()) == {"valid", "test"}
    assert report.created["documents"] == 499
    # Human scores travel with each summary, e.g. the first record of human_annotations.json.
    first = json.loads((frank_dir / "human_annotations.json").read_text())[0]
    summary = Summary.objects.get(document__campaign__slug="frank", document__external_id=first["hash"], system=first["model_name"])
    assert summary.human_scores["Factuality"] == pytest.approx(first["Factuality"])
    assert summary.sentences and all(isinstance(s, str) for s in summary.sentences)
    # Every annotated article has its reference, its traps with gold labels, and one item.
    doc = summary.document
    assert doc.summaries.filter(is_reference=True).count() == 1
    assert doc.traps.exists() and doc.negative_entity
    assert Item.objects.filter(campaign__slug="frank").count() == 499
    negation = Trap.objects.filter(document__campaign__slug="frank", code="F1").first()
    assert negation.expected_factual is False and negation.expected_category == "RelE"

    before = _counts("frank")
    again = import_dataset("frank", [frank_dir], campaign_slug="frank")
    assert _counts("frank") == before
    assert sum(again.created.values()) == 0


def test_bump_samples_import_pairs_and_scores(samples_dir):
    import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="bump1")
    records = json.loads((samples_dir / "bump_task1_sample.json").read_text())
    edited = Summary.objects.filter(document__campaign__slug="bump1", edited_from__isnull=False)
    assert edited.count() == len(records)
    # Error types are normalised to taxonomy codes; corrected types are kept.
    pair = edited.get(external_id=f"bump:{records[0]['id']}")
    from taxonomies import bump as bump_taxonomy

    assert pair.requested_error_type == bump_taxonomy.normalize(records[0]["error_type"])
    assert all(e.edited_from.is_reference for e in edited)
    corrected = [r for r in records if r.get("corrected_error_type")]
    assert edited.exclude(corrected_error_type="").count() == len(corrected)
    # Scores: <Metric>_reference on the reference, <Metric>_edited on the edit.
    rec = records[0]
    ref_value = MetricScore.objects.get(summary=pair.edited_from, metric="CoCo").value
    edit_value = MetricScore.objects.get(summary=pair, metric="CoCo").value
    assert ref_value == pytest.approx(rec["scores"]["CoCo_reference"])
    assert edit_value == pytest.approx(rec["scores"]["CoCo_edited"])
    # Task 1 campaigns get one item per requestable type per reference.
    references = Summary.objects.filter(document__campaign__slug="bump1", is_reference=True).count()
    assert Item.objects.filter(campaign__slug="bump1").count() == references * 7


def test_bump_task2_names_without_error_suffix(samples_dir):
    import_dataset("bump", [samples_dir / "bump_task2_sample.json"], campaign_slug="bump2", campaign_kind="bump_free")
    types = set(Summary.objects.filter(document__campaign__slug="bump2", edited_from__isnull=False).values_list("requested_error_type", flat=True))
    assert {"extrinsic_entity", "coreference", "other"} <= types
    assert Campaign.objects.get(slug="bump2").kind == "bump_free"


def test_qags_import_creates_workers_and_judgements(samples_dir):
    import_dataset("qags", [samples_dir / "qags_mturk_sample.jsonl"], campaign_slug="qags")
    lines = [json.loads(x) for x in (samples_dir / "qags_mturk_sample.jsonl").read_text().splitlines() if x.strip()]
    expected = sum(len(s["responses"]) for rec in lines for s in rec["summary_sentences"])
    assert SentenceJudgement.objects.filter(summary__document__campaign__slug="qags", source="imported").count() == expected
    worker_ids = {str(r["worker_id"]) for rec in lines for s in rec["summary_sentences"] for r in s["responses"]}
    assert set(Worker.objects.filter(provider="qags").values_list("external_id", flat=True)) == worker_ids
    first = lines[0]["summary_sentences"][0]["responses"][1]
    judgement = SentenceJudgement.objects.get(
        summary__document__campaign__slug="qags", sentence_index=0, worker__external_id=str(first["worker_id"]),
        summary__text__startswith=lines[0]["summary_sentences"][0]["sentence"][:20],
    )
    assert judgement.factual is (first["response"] == "yes")
    # Idempotent, including the workers.
    import_dataset("qags", [samples_dir / "qags_mturk_sample.jsonl"], campaign_slug="qags")
    assert Worker.objects.filter(provider="qags").count() == len(worker_ids)


def test_jsonl_own_format(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        json.dumps({
            "id": "d1", "text": "Paris beat Lyon 3-1 on Sunday. Lopez scored twice.", "dataset": "cnndm", "split": "test",
            "entities": ["Paris", "Lyon"], "negative_entity": "Madrid",
            "traps": [{"code": "F1", "text": "Paris did not beat Lyon."}],
            "summaries": [
                {"system": "reference", "text": "Paris beat Lyon.", "is_reference": True},
                {"system": "bart", "text": "Lopez scored twice as Paris won. Lyon lost on Sunday."},
            ],
        })
        + "\n\n"
    )
    import_dataset("jsonl", [path], campaign_slug="own")
    doc = Document.objects.get(campaign__slug="own", external_id="d1")
    assert doc.sentences == ["Paris beat Lyon 3-1 on Sunday.", "Lopez scored twice."]
    bart = doc.summaries.get(system="bart")
    assert bart.sentences == ["Lopez scored twice as Paris won.", "Lyon lost on Sunday."]
    assert doc.traps.get().expected_category == "RelE"
    assert Item.objects.filter(campaign__slug="own").count() == 1


def test_score_imports(tmp_path, frank_dir):
    subset = tmp_path / "frank"
    (subset / "articles").mkdir(parents=True)
    records = json.loads((frank_dir / "human_annotations.json").read_text())[:6]
    (subset / "human_annotations.json").write_text(json.dumps(records))
    for h in {r["hash"] for r in records}:
        shutil.copy(frank_dir / "articles" / f"{h}.json", subset / "articles" / f"{h}.json")
    import_dataset("frank", [subset], campaign_slug="fs")
    outputs = tmp_path / "baseline.json"
    outputs.write_text(json.dumps([{"hash": r["hash"], "model_name": r["model_name"], "FactCC": 0.5 + i / 100, "BLEU": 1.0} for i, r in enumerate(records)]))
    report = import_scores("frank", [outputs], campaign_slug="fs")
    assert report.created["metric scores"] == 12
    summary = Summary.objects.get(document__external_id=records[2]["hash"], system=records[2]["model_name"], document__campaign__slug="fs")
    assert MetricScore.objects.get(summary=summary, metric="FactCC").value == pytest.approx(0.52)

    lines = tmp_path / "scores.jsonl"
    lines.write_text(
        json.dumps({"summary_id": summary.pk, "metric": "coco_sent", "value": 0.25}) + "\n"
        + json.dumps({"document": records[0]["hash"], "system": records[0]["model_name"], "metric": "coco_sent", "value": 0.75}) + "\n"
    )
    import_scores("jsonl", [lines], campaign_slug="fs")
    assert MetricScore.objects.filter(metric="coco_sent").count() == 2
    # Re-import updates in place: no duplicates.
    import_scores("jsonl", [lines], campaign_slug="fs")
    assert MetricScore.objects.filter(metric="coco_sent").count() == 2


def test_truncated_json_imports_nothing_and_names_the_file(tmp_path, samples_dir):
    text = (samples_dir / "bump_task1_sample.json").read_text()
    bad = tmp_path / "truncated.json"
    bad.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(ImportFailed) as info:
        import_dataset("bump", [bad], campaign_slug="trunc")
    assert "truncated.json" in str(info.value) and "malformed JSON" in str(info.value)
    # Atomic: not even the campaign or the records before the damage were stored.
    assert not Campaign.objects.filter(slug="trunc").exists()
    assert Document.objects.count() == 0 and Summary.objects.count() == 0


def test_missing_field_names_record_and_field(tmp_path, samples_dir):
    records = json.loads((samples_dir / "bump_task1_sample.json").read_text())
    del records[3]["edited_summary"]
    bad = tmp_path / "missing.json"
    bad.write_text(json.dumps(records))
    with pytest.raises(ImportFailed) as info:
        import_dataset("bump", [bad], campaign_slug="missing")
    assert info.value.record == 3 and info.value.field == "edited_summary"
    assert str(info.value) == "missing.json, record 3, field 'edited_summary': missing"
    assert Summary.objects.count() == 0 and not Campaign.objects.filter(slug="missing").exists()


def test_bad_values_are_refused(tmp_path, samples_dir):
    records = json.loads((samples_dir / "bump_task1_sample.json").read_text())
    records[1]["error_type"] = "Spelling Error"
    bad = tmp_path / "types.json"
    bad.write_text(json.dumps(records))
    with pytest.raises(ImportFailed, match=r"record 1, field 'error_type': unknown BUMP error type 'Spelling Error'"):
        import_dataset("bump", [bad], campaign_slug="types")

    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"id": "a", "text": "x", "summaries": [{"system": "s", "text": "y"}]}\n{"id": "b", "text": \n')
    with pytest.raises(ImportFailed, match=r"bad.jsonl, record line 2: malformed JSON"):
        import_dataset("jsonl", [jsonl], campaign_slug="bad")
    assert Document.objects.count() == 0


def test_frank_missing_article_and_unknown_format(tmp_path, frank_dir):
    subset = tmp_path / "frank"
    (subset / "articles").mkdir(parents=True)
    (subset / "human_annotations.json").write_text(json.dumps(json.loads((frank_dir / "human_annotations.json").read_text())[:3]))
    with pytest.raises(ImportFailed, match="no article file for hash"):
        import_dataset("frank", [subset], campaign_slug="nofile")
    with pytest.raises(ImportFailed, match="unknown format 'xml'"):
        import_dataset("xml", [subset], campaign_slug="x")
    with pytest.raises(ImportFailed, match="file or folder not found"):
        import_dataset("bump", [tmp_path / "nope.json"], campaign_slug="x")
    assert Campaign.objects.count() == 0


def test_management_commands_report_errors(tmp_path, samples_dir, capsys):
    call_command("import_dataset", "bump", str(samples_dir / "bump_task1_sample.json"), "--campaign", "cmd", "--no-progress")
    assert Summary.objects.filter(document__campaign__slug="cmd").count() == 8
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(CommandError, match="import failed, nothing was stored: bad.json"):
        call_command("import_dataset", "bump", str(bad), "--campaign", "cmd2", "--no-progress")
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command("import_scores", "jsonl", str(bad), "--campaign", "nope", "--no-progress")


def test_demo_setup_on_committed_subset():
    repo = Path(__file__).resolve().parents[2]
    call_command("setup_demo", "--frank-data", str(repo / "data" / "frank-subset"), "--no-progress")
    campaign = Campaign.objects.get(slug="frank-demo")
    assert campaign.status == "running"
    assert Summary.objects.filter(document__campaign=campaign, is_reference=False).count() == 90
    assert (repo / "data" / "frank-subset" / "LICENSE").read_text().startswith("MIT License")
    from django.contrib.auth import authenticate

    assert authenticate(username="demo-annotator", password="factlab-annotator") is not None
    assert authenticate(username="demo-admin", password="factlab-admin").is_staff
