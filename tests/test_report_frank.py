"""The report on the real FRANK benchmark with the platform's ROUGE/BLEU (FRANK Table 2: positive, significant)."""
import json
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command

from tests.test_report_support import frank_campaign

pytestmark = pytest.mark.django_db


def run_report(*args) -> dict:
    out = StringIO()
    call_command("report", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_frank_report_partial_correlations_positive_and_significant(frank_dir):
    cache.clear()
    frank_campaign(frank_dir, "frank-report")
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
    assert "Metric vs human factuality (partial correlation)" in printed and "rouge1" in printed
    assert "Williams test" in printed and "Ablation: drop in Pearson correlation" in printed
    ablation_line = next(line for line in printed.splitlines() if line.startswith("rouge1") and "OutE" not in line
                         and f"{report['ablation']['rouge1']['by_category']['OutE']:.3f}" in line)
    assert ablation_line
