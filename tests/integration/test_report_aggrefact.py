"""The report's AggreFact sections and paper outputs on the real FRANK benchmark, each checked against a
computation written here from FRANK's released human_annotations.json with pandas, scipy, statsmodels and
scikit-learn."""
import json
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.cache import cache
from django.core.management import call_command
from scipy import stats
from sklearn.metrics import recall_score
from statsmodels.stats.multitest import multipletests

from annotate.models import MetricScore

# The paper's mapping and categories, written out here rather than read from the module under test.
UNIFIED = {"EntE": "extrinsic_np", "OutE": "extrinsic_np", "RelE": "extrinsic_predicate", "GramE": "extrinsic_predicate",
           "CircE": "intrinsic_np", "CorefE": "intrinsic_np", "LinkE": "intrinsic_predicate", "Other": "intrinsic_predicate"}
CATEGORY = {"bart": "SOTA", "bert_sum": "XFORMER", "BERTS2S": "XFORMER", "TranS2S": "XFORMER",
            "bus": "OLD", "pgn": "OLD", "s2s": "OLD", "PtGen": "OLD", "TConvS2S": "OLD"}
METRICS = ["rouge1", "rouge2", "rougeL", "bleu"]


def _report(*args) -> dict:
    out = StringIO()
    call_command("report", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _expected_types(row: pd.Series) -> set[str]:
    # FRANK's release has summary-level scores only: the named approximation, no "entire sentence"
    found = {UNIFIED[c] for c in UNIFIED if row[c] < 1}
    if not found or row["Factuality"] >= 1:
        return set()
    return found


def _joined(frank_dir, slug: str) -> pd.DataFrame:
    human = pd.read_json(frank_dir / "human_annotations.json")
    rows = MetricScore.objects.filter(summary__document__campaign__slug=slug, metric__in=METRICS).values_list(
        "summary__document__external_id", "summary__system", "metric", "value")
    scores = pd.DataFrame(list(rows), columns=["hash", "model_name", "metric", "value"]).pivot_table(
        index=["hash", "model_name"], columns="metric", values="value").reset_index()
    data = human.merge(scores, on=["hash", "model_name"], validate="one_to_one")
    data["dataset"] = data["dataset"].replace({"bbc": "xsum"})
    data["types"] = data.apply(_expected_types, axis=1)
    data["category"] = data["model_name"].map(CATEGORY)
    return data


def test_aggrefact_sections_and_outputs_on_frank(frank_dir, tmp_path, frank_benchmark):
    """On FRANK imported with the platform's ROUGE and BLEU of every summary (``frank_benchmark``), renamed."""
    cache.clear()
    frank_benchmark.slug = "frank-aggrefact"
    frank_benchmark.save(update_fields=["slug"])
    report = _report("--campaign", "frank-aggrefact", "--kendall")
    data = _joined(frank_dir, "frank-aggrefact")

    # Unified error types per system category (AggreFact Figure 3): counts from the released file.
    section = report["unified_taxonomy"]
    assert section["source"] == "approximation" and section["corpora"] == ["cnndm"]  # as AggreFact types FRANK
    assert "approximation" in section["rule"]
    assert list(section["by_system_category"]) == ["SOTA", "XFORMER", "OLD"]  # bus counted with the OLD systems
    assert section["by_system_category"]["SOTA"]["counts"]["entire_sentence"] == 0
    typed_corpus = data[data["dataset"] == "cnndm"]
    for category, group in typed_corpus.groupby("category"):
        entry = section["by_system_category"][category]
        typed = group[group["types"].map(bool)]
        assert entry["n"] == len(group) and entry["n_typed"] == len(typed)
        assert entry["n_incorrect"] == int((group["Factuality"] < 1).sum())
        for error_type in section["types"]:
            assert entry["counts"][error_type] == int(typed["types"].map(lambda t, e=error_type: e in t).sum()), (category, error_type)
    assert set(section["by_dataset"]) == {"cnndm"}

    # Recall per unified type at the tuned per-dataset threshold (AggreFact Table 5), by scikit-learn.
    recall = report["detector_recall"]["rouge1"]
    assert set(recall) == {"cnndm"}
    for dataset in ("cnndm",):
        threshold = report["balanced_accuracy"]["rouge1"]["per_dataset"][dataset]["threshold"]
        test = data[(data["dataset"] == dataset) & (data["split"] == "test")]
        for error_type in ("extrinsic_np", "intrinsic_np", "extrinsic_predicate"):
            with_type = test[test["types"].map(lambda t, e=error_type: e in t)]
            cell = recall[dataset][error_type]
            assert cell["n"] == len(with_type)
            if len(with_type):
                # predicted inconsistent: not strictly above the threshold (AggreFact's rule)
                expected = recall_score(np.ones(len(with_type)), (with_type["rouge1"] <= threshold).astype(int))
                assert cell["recall"] == pytest.approx(expected)

    # Kendall option (scipy on the residuals of the system x dataset means, computed with pandas).
    data["group"] = data["model_name"] + "|" + data["dataset"]
    residual = lambda col: data[col] - data.groupby("group")[col].transform("mean")
    tau = stats.kendalltau(residual("Factuality").round(12), residual("rouge1").round(12))
    assert report["correlations"]["rouge1"]["kendall"] == pytest.approx(tau.statistic, abs=1e-9)

    # System-level correlation over the 9 system-dataset means.
    means = data.groupby(["model_name", "dataset"])[["Factuality", "bleu"]].mean()
    system = report["system_level_correlations"]["bleu"]
    assert system["n"] == 9
    assert system["pearson"] == pytest.approx(stats.pearsonr(means["Factuality"], means["bleu"]).statistic)
    assert system["kendall"] == pytest.approx(stats.kendalltau(means["Factuality"], means["bleu"]).statistic)

    # Holm over the metrics and over the Williams matrix, by statsmodels directly.
    family = list(report["correlations"])  # every metric of the campaign, not only the four checked here
    assert set(METRICS) <= set(family)
    adjusted = multipletests([report["correlations"][m]["pearson_p"] for m in family], method="holm")[1]
    assert [report["correlations_holm"][m]["pearson_p"] for m in family] == pytest.approx(list(adjusted))
    compared = list(report["williams"])
    pairs = [(a, b) for a in compared for b in compared if a != b]
    adjusted = multipletests([report["williams"][a][b] for a, b in pairs], method="holm")[1]
    assert [report["williams_holm"][a][b] for a, b in pairs] == pytest.approx(list(adjusted))

    # Paired bootstrap difference: its point estimate is the difference of the two partial correlations.
    difference = report["correlation_differences"]["rouge1"]["bleu"]
    assert difference["difference"] == pytest.approx(report["correlations"]["rouge1"]["pearson"] - report["correlations"]["bleu"]["pearson"])
    assert difference["ci"][0] < difference["difference"] < difference["ci"][1]
    assert report["correlation_differences"]["bleu"]["rouge1"]["difference"] == pytest.approx(-difference["difference"])
    assert report["benchmark_balanced_accuracy"] is None  # FRANK documents carry no source benchmark

    # Text report: the new sections, within 100 columns; pooled balanced accuracy labelled as such.
    text = StringIO()
    call_command("report", "--campaign", "frank-aggrefact", "--outputs", str(tmp_path), stdout=text, stderr=StringIO())
    printed = text.getvalue()
    assert "Unified error types" in printed and "Recall per unified error type" in printed and "pooled thr." in printed
    assert "paired bootstrap" in printed and "System-level correlation" in printed
    assert max(len(line) for line in printed.splitlines()) <= 100

    # Paper outputs: LaTeX and CSV tables (Table 2 with All/CNN-DM/XSum blocks), SVG and PNG figures.
    names = {p.name for p in tmp_path.iterdir()}
    for table in ("correlations", "balanced_accuracy", "unified_taxonomy", "detector_recall", "williams", "system_level"):
        assert {f"{table}.tex", f"{table}.csv"} <= names, table
    for figure in ("roc_cnndm", "roc_xsum", "scatter_rouge1", "error_types"):
        assert {f"{figure}.svg", f"{figure}.png"} <= names, figure
    csv = pd.read_csv(tmp_path / "correlations.csv", header=[0, 1], index_col=0)
    assert {"All data", "CNN/DM", "XSum"} == set(csv.columns.get_level_values(0))
    assert csv.loc["rouge1", ("All data", "Pearson")] == pytest.approx(report["correlations"]["rouge1"]["pearson"], abs=5e-4)
    latex = (tmp_path / "correlations.tex").read_text()
    assert "\\begin{tabular}" in latex and "\\toprule" in latex and "\\multicolumn" in latex and "rouge1" in latex
    bacc = pd.read_csv(tmp_path / "balanced_accuracy.csv", index_col=0)
    assert bacc.columns[0].startswith("CNN/DM") and list(bacc.columns)[-2] == "pooled (one threshold)"
    assert (tmp_path / "roc_xsum.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "error_types.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "Extrinsic noun phrase" in svg
    again = tmp_path / "again"
    call_command("report", "--campaign", "frank-aggrefact", "--outputs", str(again), stdout=StringIO(), stderr=StringIO())
    assert (again / "error_types.svg").read_bytes() == (tmp_path / "error_types.svg").read_bytes()  # reproducible


# BUMP's types on the unified axes, written out here (docs/analysis.md gives the reasons).
BUMP_UNIFIED = {"intrinsic_entity": "intrinsic_np", "extrinsic_entity": "extrinsic_np", "intrinsic_circumstance": "intrinsic_np",
                "extrinsic_circumstance": "extrinsic_np", "coreference": "intrinsic_np", "intrinsic_predicate": "intrinsic_predicate",
                "extrinsic_predicate": "extrinsic_predicate", "other": "intrinsic_predicate"}


@pytest.mark.django_db
def test_bump_pairs_by_unified_type_from_the_sample_files(samples_dir):
    from annotate.services.imports import import_dataset
    from tests.integration.test_report import bump_tables_from_files

    cache.clear()
    files = [samples_dir / "bump_task1_sample.json", samples_dir / "bump_task2_sample.json"]
    import_dataset("bump", files, campaign_slug="bump-unified")
    report = _report("--campaign", "bump-unified")
    expected = bump_tables_from_files(files)  # {metric: {row: (consistency, auc, n)}} read from the files
    section = report["pairs_by_unified_type"]
    assert set(section) == set(expected)
    for metric, rows in expected.items():
        wins: dict[str, float] = {}
        pairs: dict[str, int] = {}
        for row, (consistency, _, n) in rows.items():
            if row in BUMP_UNIFIED:
                unified = BUMP_UNIFIED[row]
                wins[unified] = wins.get(unified, 0) + consistency * n
                pairs[unified] = pairs.get(unified, 0) + n
        for unified, n in pairs.items():
            assert section[metric][unified]["n_pairs"] == n
            assert section[metric][unified]["consistency"] == pytest.approx(wins[unified] / n), (metric, unified)
    assert sum(v["n_pairs"] for v in section["QAFactEval"].values()) == 15
    text = StringIO()
    call_command("report", "--campaign", "bump-unified", stdout=text)
    assert "Minimal-pair consistency per unified error type" in text.getvalue()
    assert max(len(line) for line in text.getvalue().splitlines()) <= 100
