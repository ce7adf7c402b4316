"""Dashboard figures as small JSON chart specifications drawn in the browser (``static/factlab/dashboard.js``),
and the dashboard's tables as pre-formatted rows.

A spec is plain data (a few kilobytes), no server-side plotting library and nothing from a CDN:

* ``{"type": "bars", "title", "categories", "series": [{"name", "values"}], "y_label", "y_range"}``
* ``{"type": "heatmap", "title", "rows", "columns", "values", "range", "digits", "scheme"}``
* ``{"type": "scatter", "title", "x_label", "y_label", "series": [{"name", "x", "y"}]}``

Series are told apart by a 30-colour palette plus marker shapes (scatter); metric-by-category views are
heatmaps with labelled rows, which stay readable at 30 metrics.
"""
from __future__ import annotations

import pandas as pd

from taxonomies import frank as typology

MAX_SCATTER_POINTS = 3000


def category_label(key: str) -> str:
    """A FRANK category or group key as a reader needs it: the full name beside the code
    ("Relation error (RelE)", "Semantic frame errors"); other keys ("incorrect") as they are."""
    if key == "NoE":
        return "No error (NoE)"
    try:
        code = typology.normalize_code(key)
    except ValueError:
        return key.replace("_", " ").capitalize() if "_" in key else key
    return f"{typology.BY_CODE[code].name.split(' (')[0]} ({code})"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.1e}"


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(interval) -> str:
    return "" if not interval or interval[0] is None else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def error_bars(distribution: dict | None) -> dict | None:
    """Share of summaries with each error category, per system (FRANK Figure 2)."""
    if not distribution:
        return None
    systems = list(distribution)
    categories = [k for k in distribution[systems[0]] if k != "n"]
    return {
        "type": "bars", "title": "Share of summaries with an error, per system", "x_label": "system (summaries)",
        "categories": [f"{s} (n={distribution[s]['n']})" for s in systems],
        "series": [{"name": category_label(c), "values": [distribution[s].get(c) for s in systems]} for c in categories],
        "y_label": "share of summaries", "y_range": [0, 1],
    }


def confusion_heatmap(confusion: dict | None) -> dict | None:
    """Majority category (rows) vs each annotator's categories (columns), FRANK Figure 6."""
    if not confusion:
        return None
    return {
        "type": "heatmap", "title": "Majority vs annotator category", "x_label": "annotator's category", "y_label": "majority category",
        "rows": [category_label(c) for c in confusion["labels"]], "columns": [category_label(c) for c in confusion["columns"]],
        "values": confusion["matrix"], "range": [0, max(max(r) for r in confusion["matrix"]) or 1], "digits": 0, "scheme": "sequential",
    }


def ablation_heatmap(ablation: dict | None) -> dict | None:
    """Drop of each metric's correlation when a category is flipped to "no error" (FRANK Figure 5)."""
    if not ablation:
        return None
    metrics = list(ablation)
    names = list(ablation[metrics[0]]["by_group"]) + list(ablation[metrics[0]]["by_category"])
    values = [[{**ablation[m]["by_group"], **ablation[m]["by_category"]}.get(n) for n in names] for m in metrics]
    bound = max((abs(v) for row in values for v in row if v is not None), default=0.1) or 0.1
    return {
        "type": "heatmap", "title": "Correlation drop when a category is flipped to no error", "rows": metrics,
        "columns": [category_label(n) for n in names], "values": values,
        "range": [-bound, bound], "digits": 3, "scheme": "diverging",
    }


def pairs_heatmap(meta: dict | None, counts: dict | None, statistic: str) -> dict | None:
    """Metrics (rows) x error types with their pair counts (columns): consistency or ROC AUC (BUMP Tables 3-4)."""
    if not meta:
        return None
    metrics = list(meta)
    types = ["all", *sorted({t for m in metrics for t in meta[m]["by_error_type"]})]
    values = []
    for metric in metrics:
        row = []
        for error_type in types:
            cell = meta[metric] if error_type == "all" else meta[metric]["by_error_type"].get(error_type)
            row.append(cell.get(statistic) if cell else None)
        values.append(row)
    counts = counts or {}
    return {
        "type": "heatmap", "title": "Consistency" if statistic == "consistency" else "ROC AUC",
        "rows": metrics, "columns": [f"{t.replace('_', ' ')} (n={counts.get(t, '?')})" for t in types],
        "values": values, "range": [0, 1], "digits": 2, "scheme": "diverging",
    }


def williams_heatmap(williams: dict | None) -> dict | None:
    """One-sided Williams p-values (row metric better than column metric); small = significant."""
    if not williams:
        return None
    metrics = list(williams)
    values = [[None if a == b else williams[a].get(b) for b in metrics] for a in metrics]
    return {
        "type": "heatmap", "title": "Williams test p-value: row correlates more with humans than column",
        "rows": metrics, "columns": metrics, "values": values, "range": [0, 0.1], "digits": -1, "scheme": "pvalue",
    }


def scatter_points(frame: pd.DataFrame, metric: str, human: str = "Factuality") -> dict | None:
    """Metric vs human factuality per system (FRANK Figure 3); at most 3000 points, a fixed sample."""
    if frame.empty or metric not in frame:
        return None
    data = frame[[human, metric, "system"]].dropna()
    if len(data) < 3:
        return None
    if len(data) > MAX_SCATTER_POINTS:
        data = data.sample(MAX_SCATTER_POINTS, random_state=0)
    series = [
        {"name": str(system), "x": [round(float(v), 4) for v in group[metric]], "y": [round(float(v), 3) for v in group[human]]}
        for system, group in data.groupby("system", sort=True)
    ]
    return {"type": "scatter", "title": f"{metric} against human factuality", "x_label": metric, "y_label": "human factuality", "series": series}


def chart_specs(report: dict, scatter: dict | None, metric: str | None) -> dict:
    """Every chart of the dashboard, ``None`` where there is nothing to draw."""
    return {
        "errors": error_bars(report["error_distribution"]),
        "confusion": confusion_heatmap(report["confusion"]),
        "scatter": scatter,
        "williams": williams_heatmap(report.get("williams")),
        "ablation": ablation_heatmap(report["ablation"]),
        "consistency": pairs_heatmap(report["meta_evaluation"], report.get("meta_evaluation_counts"), "consistency"),
        "roc_auc": pairs_heatmap(report["meta_evaluation"], report.get("meta_evaluation_counts"), "roc_auc"),
    }


def dashboard_tables(report: dict) -> dict:
    """Pre-formatted table rows: correlations with intervals, balanced accuracy, pair significance, metrics."""
    correlations = [
        {"metric": m, "n": v["n"], "status": v.get("status", "complete"), "pearson": _f(v["pearson"]), "pearson_ci": _ci(v.get("pearson_ci")),
         "pearson_ci_boot": _ci(v.get("pearson_ci_bootstrap")), "pearson_p": _p(v["pearson_p"]), "spearman": _f(v["spearman"]),
         "spearman_ci": _ci(v.get("spearman_ci")), "spearman_p": _p(v["spearman_p"])}
        for m, v in (report["correlations"] or {}).items()
    ]
    bacc = []
    datasets = sorted({d for v in (report["balanced_accuracy"] or {}).values() for d in (v["per_dataset"] or {})})
    for metric, entry in (report["balanced_accuracy"] or {}).items():
        cells = []
        for ds in datasets:
            cell = (entry["per_dataset"] or {}).get(ds) or {}
            cells.append(f"{_f(cell.get('balanced_accuracy'))} {_ci([cell.get('ci_low'), cell.get('ci_high')])}".strip())
        single = (entry["single_threshold"] or {}).get("all") or {}
        cells.append(f"{_f(single.get('balanced_accuracy'))} {_ci([single.get('ci_low'), single.get('ci_high')])}".strip())
        bacc.append({"metric": metric, "cells": cells})
    pairs = [
        {"metric": m, "n": v["n_pairs"], "consistency": _f(v["consistency"]), "consistency_ci": _ci(v.get("consistency_ci")),
         "roc_auc": _f(v["roc_auc"]), "roc_auc_ci": _ci(v.get("roc_auc_ci"))}
        for m, v in (report["meta_evaluation"] or {}).items()
    ]
    significance = []
    for row, tests in (report.get("meta_evaluation_significance") or {}).items():
        for stat, test in (tests or {}).items():
            if test:
                significance.append({"row": row, "n": (report.get("meta_evaluation_counts") or {}).get(row), "statistic": stat,
                                     "best": test["best"], "second": test["second"], "p": test.get("p_value_text") or _p(test["p_value"]),
                                     "significant": test["p_value"] is not None and test["p_value"] < 0.05})
    metrics = []
    for name, info in (report.get("metrics") or {}).items():
        config = info.get("config") or {}
        job = info.get("job") or {}
        metrics.append({
            "name": name, "source": info["source"], "status": info.get("status", "complete"),
            "coverage": f"{info.get('n_human_rated', 0)}/{info.get('of_human_rated', 0)}"
                        + (f", pairs {info['n_pair_members']}/{info['of_pair_members']}" if info.get("of_pair_members") else ""),
            "config": ", ".join(f"{k}={v}" for k, v in sorted(config.items())) or "–",
            "implementation": f"{info['implementation']} ({info.get('library')} {info.get('version') or '?'})" if info.get("implementation") else "imported",
            "job": f"#{job['job_id']} {job['status']}, created {job['created_at'][:19]}, finished {(job['finished_at'] or '–')[:19]}" if job else "–",
            "config_key": info["config_key"],
        })
    labels, uncertain_below = [], None
    aggregation = report.get("label_aggregation") or {}
    for method, entry in (aggregation.get("methods") or {}).items():
        key = next((k for k in entry if k.startswith("sentences_below_")), None)
        below = entry[key] if key else None
        uncertain_below = key.removeprefix("sentences_below_") if key else uncertain_below
        labels.append({
            "method": method, "default": method == aggregation.get("default"), "sentences": entry["sentences"],
            "non_factual": _f(entry["non_factual_share"]), "differs": entry["factual_differs_from_majority"],
            "categories_differ": entry["categories_differ_from_majority"], "mean_posterior": _f(entry.get("mean_posterior")),
            "uncertain": below,
        })
    return {"correlations": correlations, "bacc_datasets": datasets, "bacc": bacc, "pairs": pairs, "significance": significance,
            "metrics": metrics, "labels": labels, "uncertain_below": uncertain_below}
