"""The report on the real FRANK benchmark with the platform's ROUGE/BLEU (FRANK Table 2: positive, significant)."""
import json
from io import StringIO

import pandas as pd
import pytest
from django.core.cache import cache
from django.core.management import call_command
from scipy.stats import pearsonr, spearmanr
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import OneHotEncoder

from annotate.models import MetricScore


def run_report(*args) -> dict:
    out = StringIO()
    call_command("report", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def frank_table2(frank_dir, slug: str, metrics: list[str], dataset: str | None) -> dict[str, tuple[float, float]]:
    """FRANK Table 2 as the paper's released evaluate.py computes it, written independently of the platform:
    human_annotations.json joined to the stored scores on (hash, model_name), one-hot model_name regressed
    out of both variables by scikit-learn, then scipy's Pearson and Spearman of the residuals."""
    human = pd.read_json(frank_dir / "human_annotations.json")
    rows = MetricScore.objects.filter(summary__document__campaign__slug=slug, metric__in=metrics).values_list(
        "summary__document__external_id", "summary__system", "metric", "value")
    scores = pd.DataFrame(list(rows), columns=["hash", "model_name", "metric", "value"]).pivot_table(
        index=["hash", "model_name"], columns="metric", values="value").reset_index()
    data = human.merge(scores, on=["hash", "model_name"], validate="one_to_one")
    if dataset:
        data = data[data["dataset"] == dataset]
    out = {}
    for metric in metrics:
        q = OneHotEncoder(handle_unknown="ignore").fit_transform(data["model_name"].to_numpy().reshape(-1, 1))
        x = data[metric] - LinearRegression().fit(q, data[metric]).predict(q)
        y = data["Factuality"] - LinearRegression().fit(q, data["Factuality"]).predict(q)
        out[metric] = (pearsonr(x, y).statistic, spearmanr(x, y).statistic)
    return out


def test_frank_report_partial_correlations_positive_and_significant(frank_dir, frank_benchmark):
    """On FRANK imported with the platform's ROUGE and BLEU of every summary (``frank_benchmark``)."""
    cache.clear()
    assert frank_benchmark.slug == "frank-report"
    report = run_report("--campaign", "frank-report")

    assert report["campaign"] == "frank-report"
    assert report["counts"]["summaries"] == 2246 and report["counts"]["systems"] == 9
    assert report["agreement"] is None  # FRANK ships summary-level scores, no per-annotator judgements
    assert report["meta_evaluation"] is None
    for metric in ("rouge1", "rouge2", "rougeL", "bleu"):
        corr = report["correlations"][metric]
        assert corr["partial"] is True and corr["n"] == 2246
        assert 0.05 < corr["pearson"] < 0.3 and corr["pearson_p"] < 0.001
        assert corr["spearman"] > 0 and corr["spearman_p"] < 0.001
    # FRANK Table 3: BART (CNN/DM) is the most factual system, XSum systems have errors in most summaries.
    dist = report["error_distribution"]
    assert dist["bart"]["incorrect"] < dist["s2s"]["incorrect"] < dist["PtGen"]["incorrect"]
    assert all(0 <= v["OutE"] <= v["incorrect"] <= 1 for v in dist.values())
    # FRANK Figure 5: flipping out-of-article errors hurts ROUGE's correlation most.
    ablation = report["ablation"]["rouge1"]["by_category"]
    assert max(ablation, key=ablation.get) == "OutE"
    assert {"rouge2", "rougeL", "bleu"} <= set(report["williams"]["rouge1"])
    assert 0 <= report["williams"]["rouge1"]["bleu"] <= 1
    bacc = report["balanced_accuracy"]["rouge1"]["single_threshold"]["all"]
    assert 0.5 < bacc["balanced_accuracy"] < 1 and bacc["ci_low"] < bacc["balanced_accuracy"] < bacc["ci_high"]
    assert report["missing_scores"]["rouge1"]["human_rated"] == 0

    # FRANK Table 2, both columns, on all data, CNN/DM and XSum: the report's defaults are the paper's script.
    metrics = ["rouge1", "rouge2", "rougeL", "bleu"]
    for dataset, option in ((None, []), ("cnndm", ["--dataset", "cnndm"]), ("bbc", ["--dataset", "xsum"])):
        subset = report if dataset is None else run_report("--campaign", "frank-report", *option)
        assert subset["options"]["spearman"] == "residuals" and "evaluate.py" in subset["definitions"]["spearman"]
        for metric, (pearson, spearman) in frank_table2(frank_dir, "frank-report", metrics, dataset).items():
            corr = subset["correlations"][metric]
            assert corr["pearson"] == pytest.approx(pearson, abs=1e-9), (dataset, metric)
            # Ties between groups' residuals: FRANK's script leaves them to float noise (about 1e-5 here).
            assert corr["spearman"] == pytest.approx(spearman, abs=1e-4), (dataset, metric)
            assert corr["pearson_ci"][0] < corr["pearson"] < corr["pearson_ci"][1]
            assert corr["spearman_ci_bootstrap"][0] < corr["spearman"] < corr["spearman_ci_bootstrap"][1]
            assert corr["status"] == "complete"
    ranks = run_report("--campaign", "frank-report", "--spearman", "ranks")
    assert ranks["correlations"]["rouge1"]["spearman"] != pytest.approx(report["correlations"]["rouge1"]["spearman"], abs=1e-4)
    assert ranks["correlations"]["rouge1"]["pearson"] == pytest.approx(report["correlations"]["rouge1"]["pearson"])
    assert report["metrics"]["rouge1"]["implementation"] == "metrics_service.scorers.rouge:Rouge"
    assert report["metrics"]["rouge1"]["library"] == "rouge-score" and report["metrics"]["rouge1"]["version"]
    per_dataset = report["balanced_accuracy"]["rouge1"]["per_dataset"]
    assert set(per_dataset) == {"cnndm", "xsum"} and per_dataset["xsum"]["ci_low"] <= per_dataset["xsum"]["balanced_accuracy"]

    plain = run_report("--campaign", "frank-report", "--no-partial")
    assert plain["correlations"]["rouge1"]["partial"] is False
    assert plain["correlations"]["rouge1"]["pearson"] != report["correlations"]["rouge1"]["pearson"]
    test_only = run_report("--campaign", "frank-report", "--split", "test", "--dataset", "xsum")
    assert test_only["correlations"]["rouge1"]["n"] == test_only["n_human_rated"] < 2246
    assert set(test_only["error_distribution"]) == {"BERTS2S", "PtGen", "TConvS2S", "TranS2S"}
    # The single-threshold setting still tunes on the validation split of the filtered dataset.
    assert test_only["balanced_accuracy"]["rouge1"]["single_threshold"] is not None

    text = StringIO()
    call_command("report", "--campaign", "frank-report", stdout=text)
    printed = text.getvalue()
    assert "Metric vs human factuality (partial correlation" in printed and "rouge1" in printed
    assert "Williams test" in printed and "Ablation: drop in Pearson correlation" in printed
    assert max(len(line) for line in printed.splitlines()) <= 100
    rouge_row = next(line for line in printed.splitlines() if line.startswith("rouge1 ") and "[" in line)
    assert f"{report['correlations']['rouge1']['pearson_p']:.1e}" in rouge_row  # scientific notation, not 0.000
    assert "Spearman of the residuals of the raw values" in printed and "threshold per dataset" in printed
    ablation_line = next(line for line in printed.splitlines() if line.startswith("rouge1") and "OutE" not in line
                         and f"{report['ablation']['rouge1']['by_category']['OutE']:.3f}" in line)
    assert ablation_line
