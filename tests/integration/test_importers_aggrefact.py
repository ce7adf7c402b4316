"""AggreFact and LLM-AggreFact importers on the samples in tests/data/aggrefact (written for these tests in the
documented formats): what is stored, idempotency, atomic refusals naming the line and column, and the report's
balanced accuracy checked against scikit-learn."""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from sklearn.metrics import balanced_accuracy_score

from annotate.importers.base import ImportFailed
from annotate.models import Campaign, Document, Item, MetricScore, Summary
from annotate.services.imports import import_dataset, import_scores

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parents[1] / "data" / "aggrefact"


def _report(slug: str) -> dict:
    cache.clear()
    out = StringIO()
    call_command("report", "--campaign", slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_aggrefact_csv_import_is_complete_and_idempotent():
    report = import_dataset("aggrefact", [DATA / "aggrefact_sample.csv"], campaign_slug="aggrefact")
    sample = pd.read_csv(DATA / "aggrefact_sample.csv", index_col=0)
    assert report.records == len(sample) == 16
    assert Campaign.objects.get(slug="aggrefact").kind == "frank"
    documents = {d.external_id: d for d in Document.objects.filter(campaign__slug="aggrefact")}
    assert set(documents) == {f"{r.dataset}:{r.id}" for r in sample.itertuples()}
    for row in sample.itertuples():
        document = documents[f"{row.dataset}:{row.id}"]
        assert document.dataset == row.origin and document.split == {"val": "valid", "test": "test"}[row.cut]
        assert document.metadata["benchmark"] == row.dataset and document.sentences
        summary = Summary.objects.get(document=document, system=row.model_name)
        assert summary.text == row.summary and summary.human_scores == {"Factuality": float(row.label)}
        assert summary.sentences and " ".join(summary.sentences).replace(" ", "") == row.summary.replace(" ", "")
        scores = dict(MetricScore.objects.filter(summary=summary).values_list("metric", "value"))
        expected = {"DAE": row.DAE_score, **({} if np.isnan(row.QAFactEval_score) else {"QAFactEval": row.QAFactEval_score})}
        assert scores == pytest.approx(expected)
    assert MetricScore.objects.filter(summary__document__campaign__slug="aggrefact").count() == 16 + 15  # one empty cell
    assert Item.objects.filter(campaign__slug="aggrefact").count() == len(documents)

    again = call_command("import_dataset", "aggrefact", str(DATA / "aggrefact_sample.csv"), "--campaign", "aggrefact", "--no-progress")
    assert again is None
    second = import_dataset("aggrefact", [DATA / "aggrefact_sample.csv"], campaign_slug="aggrefact")
    assert {k: v for k, v in second.created.items() if v} == {}
    assert second.existing["summaries"] == 16


def _rewrite(tmp_path: Path, name: str, change) -> Path:
    """The sample with ``change(rows)`` applied (rows as lists, header first)."""
    with (DATA / name).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    change(rows)
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _set(row: int, column: str, value: str):
    def change(rows):
        rows[row][rows[0].index(column)] = value
    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set(3, "origin", "reddit"), "line 4, field 'origin': unknown origin 'reddit'; expected cnndm or xsum"),
        (_set(2, "label", "0.5"), "line 3, field 'label': expected 1 (consistent) or 0 (inconsistent), got '0.5'"),
        (_set(5, "cut", "train"), "line 6, field 'cut': unknown cut 'train'; expected val or test"),
        (_set(4, "DAE_score", "high"), "line 5, field 'DAE_score': expected a number, got 'high'"),
        (_set(4, "DAE_score", "nan"), "line 5, field 'DAE_score': expected a finite number"),
        (_set(9, "summary", "  "), "line 10, field 'summary': is empty"),
        (_set(2, "cut", "test"), "the split of document 'XSumFaith:x1' was 'valid' at"),
        (lambda rows: rows[0].__setitem__(rows[0].index("DAE_score"), "DAE"), "unknown column(s) 'DAE'; detector scores go in columns named <system>_score"),
        (lambda rows: [r.pop(8) for r in rows], "the header lacks the column(s) cut"),
        (lambda rows: rows.append(rows[1][:])  or rows[-1].__setitem__(rows[0].index("label"), "0"), "the label of 'BERTS2S' on 'XSumFaith:x1' was 1.0 at"),
        (lambda rows: rows.append(rows[1][:]) or rows[-1].__setitem__(rows[0].index("summary"), "Another text."), "already read with a different text"),
    ],
)
def test_aggrefact_refusals_name_line_and_column_and_store_nothing(tmp_path, change, message):
    path = _rewrite(tmp_path, "aggrefact_sample.csv", change)
    with pytest.raises(ImportFailed) as caught:
        import_dataset("aggrefact", [path], campaign_slug="bad-aggrefact")
    assert message in str(caught.value) and "aggrefact_sample.csv" in str(caught.value)
    assert not Campaign.objects.filter(slug="bad-aggrefact").exists()
    assert not Document.objects.exists()


def test_aggrefact_not_utf8_and_through_the_command(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes((DATA / "aggrefact_sample.csv").read_bytes().replace(b"Ashford", "Ashf\u00f6rd".encode("latin-1")))
    with pytest.raises(CommandError, match="not valid UTF-8"):
        call_command("import_dataset", "aggrefact", str(path), "--campaign", "x", "--no-progress")
    assert not Campaign.objects.filter(slug="x").exists()


def test_aggrefact_report_balanced_accuracy_per_origin_and_benchmark():
    import_dataset("aggrefact", [DATA / "aggrefact_sample.csv"], campaign_slug="aggrefact-report")
    report = _report("aggrefact-report")
    sample = pd.read_csv(DATA / "aggrefact_sample.csv", index_col=0)
    # QAFactEval lacks one score: partial coverage keeps it out of the comparisons unless asked for.
    assert report["excluded_metrics"] == {"QAFactEval": "partial"}
    for metric, column in (("DAE", "DAE_score"),):
        per_dataset = report["balanced_accuracy"][metric]["per_dataset"]
        for origin in ("cnndm", "xsum"):
            rows = sample[(sample["origin"] == origin) & sample[column].notna()]
            valid, test = rows[rows["cut"] == "val"], rows[rows["cut"] == "test"]
            cell = per_dataset[origin]
            # The threshold maximises validation balanced accuracy (brute force over the scores here).
            best = max(balanced_accuracy_score(valid["label"], valid[column] >= t) for t in valid[column])
            assert balanced_accuracy_score(valid["label"], valid[column] >= cell["threshold"]) == pytest.approx(best)
            assert cell["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(test["label"], test[column] >= cell["threshold"]))
        assert "pooled" in report["definitions"]["balanced_accuracy"]
    # The source benchmarks stay apart (metadata), and the taxonomy sections say there are no error types.
    benchmark = report["benchmark_balanced_accuracy"]["DAE"]["per_dataset"]
    assert set(benchmark) == {"XSumFaith", "FRANK", "Goyal21", "SummEval"}
    assert report["unified_taxonomy"] is None and report["detector_recall"] is None


def test_llm_aggrefact_csv_and_jsonl_share_documents_and_claims():
    first = import_dataset("llm_aggrefact", [DATA / "llm_aggrefact_sample.csv"], campaign_slug="llm")
    sample = pd.read_csv(DATA / "llm_aggrefact_sample.csv")
    assert first.records == len(sample) == 10
    documents = Document.objects.filter(campaign__slug="llm")
    assert documents.count() == sample["doc"].nunique() == 5
    assert sorted(documents.values_list("dataset", flat=True)) == ["cnndm", "cnndm", "cnndm", "other", "other"]
    assert {d.metadata["benchmark"] for d in documents} == {"AggreFact-CNN", "WiCE"}
    claims = Summary.objects.filter(document__campaign__slug="llm")
    assert claims.count() == 10 and all(len(c.sentences) == 1 and c.system.startswith("claim-") for c in claims)
    for row in sample.itertuples():
        claim = claims.get(text=row.claim, document__text=row.doc)
        assert claim.human_scores == {"Factuality": float(row.label)}
        assert claim.document.split == {"dev": "valid", "test": "test"}[row.split]
    # The test rows again, as JSON lines whose split comes from the file name: nothing new.
    second = import_dataset("llm_aggrefact", [DATA / "llm_aggrefact_sample_test.jsonl"], campaign_slug="llm")
    assert second.records == 6 and {k: v for k, v in second.created.items() if v} == {}
    fresh = import_dataset("llm_aggrefact", [DATA / "llm_aggrefact_sample_test.jsonl"], campaign_slug="llm-jsonl")
    assert fresh.created["summaries"] == 6
    assert set(Document.objects.filter(campaign__slug="llm-jsonl").values_list("split", flat=True)) == {"test"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"dataset": "WiCE", "doc": "A.", "claim": "B.", "label": 2}], "line 1, field 'label': expected 1 (consistent) or 0"),
        ([{"dataset": "WiCE", "doc": "A.", "label": 1}], "line 1, field 'claim': missing"),
        ([{"dataset": "WiCE", "doc": "A.", "claim": "B.", "label": 1, "source": "x"}], "line 1: unknown field(s) source"),
        ([{"dataset": "WiCE", "doc": "A.", "claim": "B.", "label": 1, "split": "train"}], "field 'split': unknown split 'train'; expected dev or test"),
        ([{"dataset": "WiCE", "doc": "A.", "claim": "B.", "label": 1}, {"dataset": "WiCE", "doc": "A.", "claim": "B.", "label": 0}],
         "line 2, field 'label': the label of this claim on this document was 1.0 at"),
    ],
)
def test_llm_aggrefact_refusals(tmp_path, lines, message):
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        import_dataset("llm_aggrefact", [path], campaign_slug="bad-llm")
    assert message in str(caught.value)
    assert not Campaign.objects.filter(slug="bad-llm").exists()


def test_llm_aggrefact_report_follows_the_benchmark_convention():
    import_dataset("llm_aggrefact", [DATA / "llm_aggrefact_sample.csv"], campaign_slug="llm-report")
    import_scores("csv", [DATA / "llm_aggrefact_sample_scores.csv"], campaign_slug="llm-report")
    report = _report("llm-report")
    sample = pd.read_csv(DATA / "llm_aggrefact_sample.csv").join(pd.read_csv(DATA / "llm_aggrefact_sample_scores.csv")["value"])
    section = report["benchmark_balanced_accuracy"]["checker_prob"]
    expected = {}
    for dataset, rows in sample.groupby("dataset"):
        test, dev = rows[rows["split"] == "test"], rows[rows["split"] == "dev"]
        expected[dataset] = balanced_accuracy_score(test["label"], (test["value"] > 0.5).astype(int))
        cell = section["per_dataset"][dataset]
        assert cell["n"] == len(test)
        assert cell["fixed_threshold"]["balanced_accuracy"] == pytest.approx(expected[dataset])
        tuned = cell["dev_tuned"]
        best = max(balanced_accuracy_score(dev["label"], dev["value"] >= t) for t in dev["value"])
        assert balanced_accuracy_score(dev["label"], dev["value"] >= tuned["threshold"]) == pytest.approx(best)
        assert tuned["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(test["label"], test["value"] >= tuned["threshold"]))
    assert section["average_fixed"] == pytest.approx(np.mean(list(expected.values())))
    assert expected["WiCE"] == pytest.approx(0.5)  # 0.51 > 0.5: the unsupported claim counts as supported
    assert "score > 0.5" in report["definitions"]["benchmark_balanced_accuracy"]
