"""Report sections on BUMP and QAGS samples and on collected data; caching and the Celery task."""
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.bump.models import Edit
from annotate.models import (
    Campaign,
    Document,
    ExpertLabel,
    MetricScore,
    ReviewStatus,
    SentenceJudgement,
    Summary,
    Worker,
)
from annotate.services.imports import import_dataset
from metrics_service.report import ReportError, build_report, get_or_compute_report
from metrics_service.tasks_report import compute_report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


def run_report(slug: str) -> dict:
    out = StringIO()
    call_command("report", "--campaign", slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_bump_report_has_minimal_pair_sections_only(samples_dir):
    import_dataset("bump", [samples_dir / "bump_task1_sample.json", samples_dir / "bump_task2_sample.json"], campaign_slug="bump")
    report = run_report("bump")
    assert report["counts"]["edits"] == 15 and report["counts"]["summaries"] == 15
    assert report["agreement"] is None and report["correlations"] is None and report["error_distribution"] is None
    meta = report["meta_evaluation"]
    assert set(meta) >= {"QAFactEval", "BARTScore", "ROUGE-2"}
    for entry in meta.values():
        assert entry["n_pairs"] == 15
        assert 0 <= entry["consistency"] <= 1 and 0 <= entry["roc_auc"] <= 1
    # Task 1 record 3 was corrected to intrinsic entity: 2 (task 1) + 1 (task 2) pairs.
    assert meta["QAFactEval"]["by_error_type"]["intrinsic_entity"]["n_pairs"] == 3
    assert meta["QAFactEval"]["by_error_type"]["other"]["n_pairs"] == 1
    sig = report["meta_evaluation_significance"]["all"]["consistency"]
    assert sig["best"] != sig["second"] and "permutation" in sig["method"]
    text = StringIO()
    call_command("report", "--campaign", "bump", stdout=text)
    printed = text.getvalue()
    assert "ROC AUC by error type" in printed and max(len(line) for line in printed.splitlines()) <= 100
    assert next(line for line in printed.splitlines() if line.startswith("intrinsic_entity (n=3)"))
    assert "each pair's reference is one positive" in printed
    assert "No data for: agreement, correlations" in printed


def test_qags_report_has_agreement_but_no_categories(samples_dir):
    import_dataset("qags", [samples_dir / "qags_mturk_sample.jsonl"], campaign_slug="qags")
    report = run_report("qags")
    factual = report["agreement"]["factual"]
    assert report["counts"]["judgements"] > 0 and factual["n_sentences"] > 0
    assert 0 <= factual["majority_agreement"] <= 1 and factual["fleiss_kappa"] is not None
    assert report["agreement"]["category"] is None and report["agreement"]["expert"] is None
    assert report["correlations"] is None and report["meta_evaluation"] is None
    assert report["error_distribution"]["qags"]["n"] == report["counts"]["summaries"]


def make_collected_campaign() -> Campaign:
    campaign = Campaign.objects.create(slug="collected", name="Collected")
    users = get_user_model().objects
    workers = [Worker.objects.create(user=users.create_user(f"w{i}")) for i in range(3)]
    # Six summaries of two systems; factual votes per sentence chosen so that system "good" is better.
    votes = {"good": [(1, 1, 1), (1, 1, 0)], "bad": [(0, 0, 1), (0, 0, 0)]}
    for d in range(3):
        doc = Document.objects.create(campaign=campaign, external_id=f"d{d}", dataset="cnndm", text="t")
        reference = Summary.objects.create(document=doc, system="reference", text="r", is_reference=True)
        for system, sentences in votes.items():
            summary = Summary.objects.create(document=doc, system=system, text="s")
            if system == "good" and d == 0:
                sentences = [(1, 1, 1), (0, 0, 1)]  # some variation within the system
            for index, sentence_votes in enumerate(sentences):
                for worker, vote in zip(workers, sentence_votes, strict=True):
                    SentenceJudgement.objects.create(
                        summary=summary, sentence_index=index, worker=worker, factual=bool(vote), categories=[] if vote else ["EntE"]
                    )
            MetricScore.objects.create(summary=summary, metric="ext", value=(0.9 if system == "good" else 0.2) + d / 100, source="imported")
        for status in (ReviewStatus.ACCEPTED, ReviewStatus.PENDING):
            edited = Summary.objects.create(document=doc, system="human-edit", text="e", edited_from=reference, requested_error_type="extrinsic_entity")
            Edit.objects.create(source_summary=reference, edited_summary=edited, review_status=status, requested_error_type="extrinsic_entity")
            MetricScore.objects.create(summary=edited, metric="ext", value=0.1, source="imported")
        MetricScore.objects.create(summary=reference, metric="ext", value=0.95, source="imported")
    first = Summary.objects.filter(document__campaign=campaign, system="bad").first()
    ExpertLabel.objects.create(summary=first, sentence_index=0, expert="x", factual=False)
    ExpertLabel.objects.create(summary=first, sentence_index=1, expert="x", factual=False)
    return campaign


def test_collected_judgements_agreement_flips_and_pairs():
    campaign = make_collected_campaign()
    report = build_report(campaign)
    assert report["counts"]["workers"] == 3 and report["counts"]["judgements"] == 36
    assert report["agreement"]["factual"]["n_sentences"] == 12
    assert report["agreement"]["category"]["majority_agreement"] == 1.0  # all chose EntE
    assert report["agreement"]["expert"]["n"] == 2
    assert report["human_factuality"] == {"bad": 0.0, "good": pytest.approx(5 / 6)}
    assert report["error_distribution"]["bad"]["EntE"] == 1.0
    assert report["correlations"]["ext"]["n"] == 6
    # Flipping EntE makes every summary factual: the human variable becomes constant.
    assert report["ablation"]["ext"]["by_category"]["EntE"] is None
    # Only the accepted edit of each document counts as a minimal pair.
    assert report["meta_evaluation"]["ext"]["n_pairs"] == 3 and report["meta_evaluation"]["ext"]["consistency"] == 1.0


def test_cache_is_invalidated_by_new_data_and_task_returns_report():
    campaign = make_collected_campaign()
    first = get_or_compute_report(campaign)
    assert get_or_compute_report("collected") == first
    edit = Edit.objects.filter(review_status=ReviewStatus.PENDING).first()
    edit.review_status = ReviewStatus.ACCEPTED
    edit.save()
    # The review is part of the cache key only through reviewed_at/counts: stamp it like the review service does.
    from django.utils import timezone

    Edit.objects.filter(pk=edit.pk).update(reviewed_at=timezone.now())
    second = get_or_compute_report(campaign)
    assert second["meta_evaluation"]["ext"]["n_pairs"] == 4
    result = compute_report.delay("collected").get()
    assert result == second
    with pytest.raises(ReportError, match="no campaign"):
        get_or_compute_report("missing")
    with pytest.raises(ReportError, match="unknown split"):
        get_or_compute_report(campaign, split="train")
    with pytest.raises(CommandError, match="no campaign"):
        call_command("report", "--campaign", "missing", "--json", stdout=StringIO())


def bump_tables_from_files(paths) -> dict:
    """BUMP Tables 3-4 from the sample files, written independently of the platform: per error type,
    consistency = share of pairs whose reference outscores its edit, ROC AUC with each pair's reference as a
    positive (scikit-learn)."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from taxonomies.bump import normalize

    pairs = [r for path in paths for r in json.loads(path.read_text())]
    metrics = sorted({k.rsplit("_", 1)[0] for r in pairs for k in r["scores"]})
    out: dict = {}
    for metric in metrics:
        rows: dict[str, list] = {"all": []}
        for r in pairs:
            code = normalize(r.get("corrected_error_type") or r["error_type"])
            item = (r["scores"][f"{metric}_reference"], r["scores"][f"{metric}_edited"])
            rows["all"].append(item)
            rows.setdefault(code, []).append(item)
        out[metric] = {}
        for row, items in rows.items():
            ref, edit = np.array(items).T
            auc = roc_auc_score(np.r_[np.ones(len(ref)), np.zeros(len(edit))], np.r_[ref, edit])
            out[metric][row] = ((ref > edit).mean(), auc, len(items))
    return out


def test_bump_tables_3_and_4_reproduced_from_the_samples_whatever_the_import_order(samples_dir):
    files = [samples_dir / "bump_task1_sample.json", samples_dir / "bump_task2_sample.json"]
    import_dataset("bump", files, campaign_slug="bump-a")
    import_dataset("bump", files[::-1], campaign_slug="bump-b")  # other ids, other row order
    report = build_report("bump-a")
    expected = bump_tables_from_files(files)
    meta = report["meta_evaluation"]
    assert set(meta) == set(expected)
    for metric, rows in expected.items():
        for row, (consistency, auc, n) in rows.items():
            entry = meta[metric] if row == "all" else meta[metric]["by_error_type"][row]
            assert entry["n_pairs"] == n and report["meta_evaluation_counts"][row] == n
            assert entry["consistency"] == pytest.approx(consistency), (metric, row)
            assert entry["roc_auc"] == pytest.approx(auc), (metric, row)
            if n >= 5:
                low, high = entry["roc_auc_ci"]
                assert low <= entry["roc_auc"] <= high
            low, high = entry["consistency_ci"]
            assert low <= entry["consistency"] <= high
    # Task 1's two intrinsic-entity pairs share a reference: the option keeping it once gives another AUC.
    once = build_report("bump-a", auc_references="once")
    changed = [m for m in meta if once["meta_evaluation"][m]["by_error_type"]["intrinsic_entity"]["roc_auc"]
               != meta[m]["by_error_type"]["intrinsic_entity"]["roc_auc"]]
    assert changed and once["options"]["auc_references"] == "once"
    # Identical data, different campaign ids and import order: identical statistics, intervals and p-values.
    other = build_report("bump-b")
    assert other["meta_evaluation"] == meta
    assert other["meta_evaluation_significance"] == report["meta_evaluation_significance"]


def test_running_job_metric_is_flagged_and_left_out_of_comparisons():
    from metrics_service.models import JobStatus, ScoringJob

    campaign = make_collected_campaign()
    summaries = list(Summary.objects.filter(document__campaign=campaign, system__in=["good", "bad"]).order_by("id"))
    for i, summary in enumerate(summaries):
        MetricScore.objects.create(summary=summary, metric="rouge1", config_key="cfg-1", value=i / 10, source="computed")
    for i, summary in enumerate(summaries[:3]):  # a job still running: half of the summaries scored
        MetricScore.objects.create(summary=summary, metric="bleu", config_key="cfg-2", value=i / 10, source="computed")
    ScoringJob.objects.create(campaign=campaign, metric="bleu", config={"tokenize": "13a"}, config_key="cfg-2",
                              status=JobStatus.RUNNING, total=6, done=3)
    ScoringJob.objects.create(campaign=campaign, metric="rouge", config={"stemmer": True}, config_key="cfg-1",
                              status=JobStatus.DONE, total=6, done=6)
    report = build_report(campaign)
    assert report["correlations"]["bleu"]["status"] == "running" and report["correlations"]["bleu"]["n"] == 3
    assert report["metrics"]["bleu"]["job"]["status"] == "running" and report["metrics"]["bleu"]["n_human_rated"] == 3
    assert report["metrics"]["rouge1"]["config"] == {"stemmer": True}
    assert report["metrics"]["rouge1"]["job"]["created_at"] and report["metrics"]["rouge1"]["status"] == "complete"
    assert report["excluded_metrics"] == {"bleu": "running"}
    assert "bleu" not in report["williams"] and set(report["williams"]) == {"ext", "rouge1"}
    asked = build_report(campaign, include_incomplete=True)
    assert "bleu" in asked["williams"] and asked["excluded_metrics"] is None
