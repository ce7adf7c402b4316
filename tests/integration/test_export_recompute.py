"""A researcher recomputes the report from the exported files alone.

FRANK (a subset of the release, with judgements submitted through the assignment service and metric scores
computed by the scoring service and imported by the score importer), BUMP (imported minimal pairs with their
scores) and QAGS (released per-sentence answers) campaigns are exported through the API in every format
their kind has. From each export, small code written here (pandas, scipy, scikit-learn), which never reads
the database, recomputes the report's metric-human correlations (partial on system x dataset, FRANK's
degrees of freedom), BUMP's consistency and ROC AUC per metric and error type, Fleiss' kappa of the factual
labels and the per-summary unified error types, and compares them with the report's numbers.
"""
from __future__ import annotations

import csv
import io
import json
import random
import zipfile
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.metrics import roc_auc_score

from annotate.models import AssignmentStatus, Campaign, CampaignStatus, Summary
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.imports import import_dataset, import_scores
from metrics_service.report import build_report
from metrics_service.scoring.jobs import submit_scoring_job
from tests.conftest import SAMPLES_DIR
from tests.factories import make_worker, qualify
from tests.integration.test_export_roundtrip import frank_subset  # noqa: F401 - fixture
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
SAME = 1e-9
ROW_FORMATS = ("jsonl", "csv", "parquet")
# AggreFact's mapping of FRANK's categories to its unified types, as the paper's Table 2 states it.
UNIFIED_OF_FRANK = {
    "EntE": "extrinsic_np", "OutE": "extrinsic_np", "RelE": "extrinsic_predicate", "GramE": "extrinsic_predicate",
    "CircE": "intrinsic_np", "CorefE": "intrinsic_np", "LinkE": "intrinsic_predicate", "OtherE": "intrinsic_predicate",
}
BUMP_NAMES = {  # BUMP's display names, as its files write them
    "Intrinsic Entity Error": "intrinsic_entity", "Extrinsic Entity Error": "extrinsic_entity",
    "Intrinsic Predicate Error": "intrinsic_predicate", "Extrinsic Predicate Error": "extrinsic_predicate",
    "Intrinsic Circumstance Error": "intrinsic_circumstance", "Extrinsic Circumstance Error": "extrinsic_circumstance",
    "Coreference Error": "coreference", "Other Error": "other",
}


# ---------------------------------------------------------------------------------------------- the campaigns


def _open_for_work(slug: str) -> Campaign:
    Campaign.objects.filter(slug=slug).update(
        status=CampaignStatus.RUNNING, tutorial_required=False, qualification_required=False, trap_rate=0.0,
        entity_check_enabled=False, min_seconds_per_sentence=0.0, redundancy=3,
        # The workers here answer at random: quality control would block them before they disagree enough.
        control_share=0.0, control_block_threshold=0.0,
    )
    return Campaign.objects.get(slug=slug)


def _submit_judgements(campaign: Campaign, n_workers: int = 3, items_each: int = 3) -> int:
    """Workers claim items and submit answers through the assignment service: each worker its own mix of
    factual and erroneous sentences (so they disagree), categories drawn from FRANK's codes."""
    submitted = 0
    for rank in range(n_workers):
        worker = make_worker()
        qualify(worker, campaign)
        rng = random.Random(rank)
        for _ in range(items_each):
            assignment = request_assignment(worker, campaign)
            if assignment is None:
                break
            summaries = []
            for spec in assignment.layout["summaries"]:
                answers = []
                for _ in range(spec["sentences"] + (1 if spec["trap"] else 0)):
                    if rng.random() < 0.6:
                        answers.append({"factual": True, "categories": [], "seconds": 4})
                    else:
                        codes = rng.sample(["EntE", "RelE", "CircE", "OutE", "CorefE"], rng.choice([1, 2]))
                        answers.append({"factual": False, "categories": codes, "seconds": 4})
                summaries.append({"answers": answers})
            submit_assignment(assignment.pk, worker, {"summaries": summaries}, submission_key=f"k{assignment.pk}")
            submitted += 1
    assert campaign.items.filter(assignments__status=AssignmentStatus.SUBMITTED).distinct().count() >= 3
    return submitted


def _import_lower_is_better_scores(campaign: Campaign, tmp_path) -> None:
    """A translation-error-rate-like metric (lower is more faithful) through the score importer."""
    rng = np.random.default_rng(3)
    path = tmp_path / "ter.jsonl"
    ids = Summary.objects.filter(document__campaign=campaign, is_reference=False).order_by("id").values_list("id", flat=True)
    path.write_text("".join(json.dumps({"summary_id": i, "metric": "ter", "value": float(rng.uniform(0.1, 0.9))}) + "\n" for i in ids))
    import_scores("jsonl", [path], campaign_slug=campaign.slug)


# ---------------------------------------------------------------------------------------------- reading exports


def _download(client, slug: str, fmt: str) -> bytes:
    response = client.get(f"/api/campaigns/{slug}/export/", {"format": fmt})
    assert response.status_code == 200, fmt
    return b"".join(response.streaming_content)


def _split_rows(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    kinds = {"judgement": "judgements", "edit": "edits", "score": "scores", "summary": "summaries"}
    return {name: frame[frame["record_type"] == kind].reset_index(drop=True) for kind, name in kinds.items()}


def _typed(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The same column types whichever format the rows came from (CSV cells are text)."""
    def as_list(value) -> list:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return []
        if isinstance(value, str):
            return [v for v in value.split(";") if v]
        return list(value)

    def as_bool(value) -> bool:
        return value if isinstance(value, (bool, np.bool_)) else str(value) == "true"

    def as_scores(value) -> dict:
        if isinstance(value, dict):
            return value
        return json.loads(value) if isinstance(value, str) and value else {}

    j, e, s, m = (tables[k].copy() for k in ("judgements", "edits", "scores", "summaries"))
    j["factual"] = j["factual"].map(as_bool)
    j["categories"] = j["categories"].map(as_list)
    for frame in (j, e, s, m):
        frame["summary_id"] = frame["summary_id"].astype(int)
    e["edited_summary_id"] = e["edited_summary_id"].astype(int) if len(e) else e["edited_summary_id"]
    s["value"] = s["value"].astype(float)
    s["direction"] = s["direction"].astype(int)
    m["human_factuality"] = pd.to_numeric(m["human_factuality"].replace("", np.nan))
    m["human_scores"] = m["human_scores"].map(as_scores)
    m["unified_types"] = m["unified_types"].map(as_list)
    return {"judgements": j, "edits": e, "scores": s, "summaries": m}


def _row_tables(client, slug: str, fmt: str, tmp_path) -> dict[str, pd.DataFrame]:
    body = _download(client, slug, fmt)
    if fmt == "jsonl":
        return _typed(_split_rows(pd.DataFrame([json.loads(line) for line in body.decode().splitlines()])))
    if fmt == "csv":
        frame = pd.DataFrame(list(csv.DictReader(io.StringIO(body.decode()))))
        return _typed(_split_rows(frame))
    folder = tmp_path / f"{slug}-parquet"
    zipfile.ZipFile(io.BytesIO(body)).extractall(folder)
    tables = {}
    for name in ("judgements", "edits", "scores", "summaries"):
        path = folder / "data" / f"{name}.parquet"
        tables[name] = pd.read_parquet(path) if path.exists() else pd.DataFrame(
            columns=["summary_id", "edited_summary_id", "factual", "categories", "value", "direction"])
    tables["summaries"] = tables["summaries"].astype({"human_scores": object})
    return _typed(tables)


# ---------------------------------------------------------------------------------------------- independent statistics


def _sentence_majority(judgements: pd.DataFrame) -> pd.Series:
    """FRANK's label per sentence: factual when at least half of its annotators say so."""
    return judgements.groupby(["summary_id", "sentence_index"])["factual"].mean() >= 0.5


def _human_factuality(judgements: pd.DataFrame, summaries: pd.DataFrame) -> pd.Series:
    """Per summary: the share of its judged sentences whose majority is factual; imported scores elsewhere."""
    collected = _sentence_majority(judgements).astype(float).groupby(level="summary_id").mean()
    imported = summaries[(summaries["summary_role"] == "system") & ~summaries["summary_id"].isin(collected.index)]
    imported = imported.dropna(subset=["human_factuality"]).set_index("summary_id")["human_factuality"]
    return pd.concat([collected, imported]).sort_index()


def _partial_correlations(human: pd.Series, metric: pd.Series, groups: pd.Series) -> dict[str, float]:
    """Pearson and Spearman of the residuals after OLS on one-hot groups (FRANK), p-values on n - 2 degrees of freedom."""
    frame = pd.DataFrame({"h": human, "m": metric, "g": groups}).dropna()
    design = pd.get_dummies(frame["g"]).to_numpy(dtype=float)
    residuals = {}
    for column in ("h", "m"):
        fit = LinearRegression(fit_intercept=False).fit(design, frame[column].to_numpy())
        # Rounded so that residuals equal in exact arithmetic tie in the ranks (float noise would order them).
        residuals[column] = (frame[column].to_numpy() - fit.predict(design)).round(12)
    n = len(frame)
    out = {"n": n}
    for name, x, y in (("pearson", residuals["h"], residuals["m"]),
                       ("spearman", stats.rankdata(residuals["h"]), stats.rankdata(residuals["m"]))):
        r = float(np.corrcoef(x, y)[0, 1])
        t = r * np.sqrt((n - 2) / (1 - r * r))
        out[name], out[f"{name}_p"] = r, float(2 * stats.t.sf(abs(t), n - 2))
    return out


def _fleiss_kappa(labels: pd.DataFrame) -> float:
    """Fleiss' kappa of ``unit, rater, label`` rows over the units with the most common number of raters."""
    counts = labels.groupby(["unit", "label"]).size().unstack(fill_value=0)
    raters = counts.sum(axis=1)
    counts = counts[raters == raters[raters >= 2].mode().max()].to_numpy(dtype=float)
    n = counts.sum(axis=1)[0]
    agreement = ((counts * (counts - 1)).sum(axis=1) / (n * (n - 1))).mean()
    shares = counts.sum(axis=0) / counts.sum()
    chance = (shares ** 2).sum()
    return float((agreement - chance) / (1 - chance))


def _unified_types(judgements: pd.DataFrame, factuality: pd.Series) -> dict[int, list[str]]:
    """Per not wholly factual summary, the unified types that more than one annotator marked (AggreFact)."""
    marked: dict[int, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for summary_id, worker, categories in judgements[["summary_id", "worker", "categories"]].itertuples(index=False):
        for code in categories:
            marked[summary_id][UNIFIED_OF_FRANK[code]].add(worker)
    order = ["intrinsic_np", "intrinsic_predicate", "extrinsic_np", "extrinsic_predicate"]
    return {s: [t for t in order if len(by_type.get(t, ())) > 1] for s, by_type in marked.items() if factuality[s] < 1}


def _pair_figures(pairs: pd.DataFrame) -> dict[str, float]:
    """BUMP: consistency (share of pairs whose reference scores above its edit) and ROC AUC with each pair's
    reference one positive and its edit one negative."""
    pairs = pairs.dropna(subset=["reference", "edited"])
    labels = np.r_[np.ones(len(pairs)), np.zeros(len(pairs))]
    return {
        "consistency": float((pairs["reference"] > pairs["edited"]).mean()),
        "roc_auc": float(roc_auc_score(labels, np.r_[pairs["reference"], pairs["edited"]])),
        "n_pairs": len(pairs),
    }


# ---------------------------------------------------------------------------------------------- FRANK


def _check_correlations(report: dict, human: pd.Series, groups: pd.Series, oriented: pd.DataFrame) -> int:
    checked = 0
    for metric, entry in report["correlations"].items():
        mine = _partial_correlations(human, oriented[metric].reindex(human.index), groups.reindex(human.index))
        assert mine["n"] == entry["n"], metric
        for key in ("pearson", "pearson_p", "spearman", "spearman_p"):
            assert mine[key] == pytest.approx(entry[key], abs=SAME), (metric, key)
        checked += 1
    return checked


def test_frank_exports_recompute_the_reports_correlations_kappa_and_types(frank_subset, admin_client, tmp_path):  # noqa: F811
    import_dataset("frank", [frank_subset], campaign_slug="frank-r")
    campaign = _open_for_work("frank-r")
    # Three items kept from the crowd (for experts) stay judged by FRANK's imported scores only; the crowd's
    # workers judge every other item (redundancy 3), so types marked by more than one annotator occur whatever
    # the claim orders are.
    kept = list(campaign.items.order_by("id").values_list("id", flat=True)[:3])
    campaign.items.filter(id__in=kept).update(for_experts=True)
    assert _submit_judgements(campaign, items_each=campaign.items.count()) >= 6
    assert submit_scoring_job(metric="rouge", campaign=campaign, sync=True).status == "done"
    _import_lower_is_better_scores(campaign, tmp_path)
    report = build_report(campaign)
    assert set(report["correlations"]) == {"rouge1", "rouge2", "rougeL", "rouge2_precision_article", "ter"}
    kappa = report["agreement"]["factual"]["fleiss_kappa"]
    assert kappa is not None

    for fmt in ROW_FORMATS:
        tables = _row_tables(admin_client, "frank-r", fmt, tmp_path)
        judgements, scores, summaries = tables["judgements"], tables["scores"], tables["summaries"]
        assert set(summaries["summary_role"]) == {"system", "reference"} and summaries["summary_text"].str.len().min() > 0
        human = _human_factuality(judgements, summaries)
        # The exported summary rows hold the human scores the report used.
        exported = summaries.set_index("summary_id")["human_factuality"].reindex(human.index)
        assert np.allclose(exported.to_numpy(), human.to_numpy(), atol=1e-12)
        assert len(human) == report["n_human_rated"]
        meta = summaries.set_index("summary_id")
        groups = meta["system"] + "|" + meta["dataset"]
        oriented = scores.assign(value=scores["value"] * scores["direction"]).pivot_table(
            index="summary_id", columns="metric", values="value", aggfunc="last")
        assert scores.loc[scores["metric"] == "ter", "direction"].eq(-1).all() and scores.loc[scores["metric"] == "rouge1", "direction"].eq(1).all()
        assert _check_correlations(report, human, groups, oriented) == 5, fmt
        units = judgements.assign(unit=judgements["summary_id"].astype(str) + ":" + judgements["sentence_index"].astype(str))
        assert _fleiss_kappa(units.assign(label=units["factual"])) == pytest.approx(kappa, abs=SAME), fmt
        # Unified types: from the platform's own judgements (more than one annotator), never "entire sentence".
        collected = meta[meta["source"] == "collected"]
        expected = _unified_types(judgements, human)
        typed = {int(i): list(t) for i, t in collected["unified_types"].items()}
        assert typed == {i: expected.get(i, []) for i in typed} and any(typed.values()), fmt
        assert set(collected.loc[collected["unified_types"].map(bool), "unified_types_source"]) == {"annotators"}
        assert not any("entire_sentence" in t for t in meta["unified_types"])
        approximated = meta[meta["unified_types_source"] == "approximation"]
        assert len(approximated) and (approximated["human_factuality"] < 1).all() and (approximated["source"] == "imported").all()

    # FRANK's own format: Factuality per summary, every annotator's labels per sentence, the metric outputs.
    archive = zipfile.ZipFile(io.BytesIO(_download(admin_client, "frank-r", "frank")))
    records = pd.DataFrame(json.loads(archive.read("human_annotations.json")))
    metric_outputs = pd.DataFrame(json.loads(archive.read("baseline_factuality_metrics_outputs.json")))
    sentences = json.loads(archive.read("human_annotations_sentence.json"))
    frame = records.merge(metric_outputs, on=["hash", "model_name"], how="left")
    jsonl = _row_tables(admin_client, "frank-r", "jsonl", tmp_path)
    # FRANK's metric file carries no direction: the row export's says which way each metric points.
    direction = jsonl["scores"].groupby("metric")["direction"].first()
    oriented = pd.DataFrame({m: frame[m] * direction[m] for m in report["correlations"]})
    groups = frame["model_name"] + "|" + frame["dataset"]
    assert _check_correlations(report, frame["Factuality"], groups, oriented) == 5
    rows = [(f"{r['hash']}|{r['model_name']}:{index}", annotator, codes == ["NoE"])
            for r in sentences for index, labels in enumerate(r["summary_sentences_annotations"]) for annotator, codes in labels.items()]
    labels = pd.DataFrame(rows, columns=["unit", "rater", "label"])
    assert _fleiss_kappa(labels) == pytest.approx(kappa, abs=SAME)
    assert labels["rater"].str.fullmatch(r"w[0-9a-f]{12}").all()  # pseudonyms, never worker ids


# ---------------------------------------------------------------------------------------------- BUMP


def _check_pairs(report: dict, pairs_by_metric: dict[str, pd.DataFrame]) -> int:
    checked = 0
    for metric, entry in report["meta_evaluation"].items():
        pairs = pairs_by_metric[metric]
        mine = _pair_figures(pairs)
        assert (mine["n_pairs"], mine["consistency"]) == (entry["n_pairs"], pytest.approx(entry["consistency"], abs=SAME)), metric
        assert mine["roc_auc"] == pytest.approx(entry["roc_auc"], abs=SAME), metric
        for error_type, cell in entry["by_error_type"].items():
            subset = _pair_figures(pairs[pairs["error_type"] == error_type])
            assert subset["consistency"] == pytest.approx(cell["consistency"], abs=SAME), (metric, error_type)
            if cell["roc_auc"] is not None:
                assert subset["roc_auc"] == pytest.approx(cell["roc_auc"], abs=SAME), (metric, error_type)
        checked += 1
    return checked


def test_bump_exports_recompute_the_reports_consistency_and_auc(admin_client, tmp_path):
    import_dataset("bump", [SAMPLES_DIR / "bump_task1_sample.json"], campaign_slug="bump-r")
    report = build_report("bump-r")
    source = json.loads((SAMPLES_DIR / "bump_task1_sample.json").read_text())
    metrics = {key.removesuffix("_edited") for key in source[0]["scores"] if key.endswith("_edited")}
    assert set(report["meta_evaluation"]) == metrics

    for fmt in ROW_FORMATS:
        tables = _row_tables(admin_client, "bump-r", fmt, tmp_path)
        edits, scores, summaries = tables["edits"], tables["scores"], tables["summaries"]
        assert (summaries["summary_role"] == "edited").sum() == len(source)
        text = summaries.set_index("summary_id")["summary_text"]
        assert sorted(text[edits["edited_summary_id"]]) == sorted(r["edited_summary"] for r in source)
        assert sorted(text[edits["summary_id"]]) == sorted(r["reference_summary"] for r in source)
        oriented = scores.assign(value=scores["value"] * scores["direction"]).pivot_table(
            index="summary_id", columns="metric", values="value", aggfunc="last")
        error_type = edits["corrected_error_type"].where(edits["corrected_error_type"].fillna("") != "", edits["requested_error_type"])
        pairs = {m: pd.DataFrame({
            "reference": oriented[m].reindex(edits["summary_id"]).to_numpy(),
            "edited": oriented[m].reindex(edits["edited_summary_id"]).to_numpy(), "error_type": error_type.to_numpy(),
        }) for m in metrics}
        assert _check_pairs(report, pairs) == len(metrics), fmt

    # BUMP's own format: one record per pair with both scores.
    records = json.loads(_download(admin_client, "bump-r", "bump"))
    pairs = {m: pd.DataFrame({
        "reference": [r["scores"].get(f"{m}_reference") for r in records], "edited": [r["scores"].get(f"{m}_edited") for r in records],
        "error_type": [BUMP_NAMES[r.get("corrected_error_type") or r["error_type"]] for r in records],
    }, dtype=object).astype({"reference": float, "edited": float}) for m in metrics}
    assert _check_pairs(report, pairs) == len(metrics)


# ---------------------------------------------------------------------------------------------- QAGS


def test_qags_exports_recompute_the_reports_kappa_and_factuality(admin_client, tmp_path):
    import_dataset("qags", [SAMPLES_DIR / "qags_mturk_sample.jsonl"], campaign_slug="qags-r")
    report = build_report("qags-r")
    agreement = report["agreement"]["factual"]
    released = [json.loads(line) for line in (SAMPLES_DIR / "qags_mturk_sample.jsonl").read_text().splitlines() if line.strip()]
    assert agreement["n_judgements"] == sum(len(s["responses"]) for r in released for s in r["summary_sentences"])

    for fmt in ROW_FORMATS:
        tables = _row_tables(admin_client, "qags-r", fmt, tmp_path)
        judgements, summaries = tables["judgements"], tables["summaries"]
        units = judgements.assign(unit=judgements["summary_id"].astype(str) + ":" + judgements["sentence_index"].astype(str))
        assert _fleiss_kappa(units.assign(label=units["factual"])) == pytest.approx(agreement["fleiss_kappa"], abs=SAME), fmt
        human = _human_factuality(judgements, summaries)
        by_system = human.groupby(summaries.set_index("summary_id")["system"].reindex(human.index)).mean()
        assert by_system.to_dict() == pytest.approx(report["human_factuality"], abs=SAME)
        assert dict(zip(summaries["summary_id"], summaries["human_factuality"])) == pytest.approx(human.to_dict(), abs=1e-12)
        assert sorted(summaries["summary_text"].str.strip()) == sorted(" ".join(s["sentence"].strip() for s in r["summary_sentences"]) for r in released)

    archive = zipfile.ZipFile(io.BytesIO(_download(admin_client, "qags-r", "frank")))
    sentences = json.loads(archive.read("human_annotations_sentence.json"))
    rows = [(f"{r['hash']}|{r['model_name']}:{index}", annotator, codes == ["NoE"])
            for r in sentences for index, labels in enumerate(r["summary_sentences_annotations"]) for annotator, codes in labels.items()]
    assert _fleiss_kappa(pd.DataFrame(rows, columns=["unit", "rater", "label"])) == pytest.approx(agreement["fleiss_kappa"], abs=SAME)
    factuality = {(r["hash"], r["model_name"]): r["Factuality"] for r in json.loads(archive.read("human_annotations.json"))}
    majority = {(r["hash"], r["model_name"]): np.mean([Counter(codes == ["NoE"] for codes in labels.values())[True] * 2 >= len(labels)
                                                       for labels in r["summary_sentences_annotations"]]) for r in sentences}
    assert factuality == pytest.approx(majority, abs=1e-12)
