"""Paper-ready outputs of a report: tables as LaTeX and CSV, figures as SVG and PNG.

Tables (``report_tables``), one pandas frame each, rows = metrics unless said otherwise:

* ``correlations``: FRANK Table 2 style, one column block per data subset ("All data", "CNN/DM", "XSum"
  when those reports are given): Pearson, p, Spearman, p (Kendall, p when computed), Holm-adjusted p;
* ``balanced_accuracy``: per-dataset threshold first (AggreFact), then the pooled single threshold;
* ``system_level``: correlations of per-system means;
* ``unified_taxonomy``: rows = system category or dataset, columns = unified error types;
* ``detector_recall``: recall per dataset and unified error type at the tuned threshold (AggreFact Table 5);
* ``williams``: one-sided Williams p, row metric better than column, with Holm-adjusted p;
* ``correlation_differences``: r(row) - r(column) with its paired bootstrap interval.

Figures (``report_figures``), drawn with matplotlib's object API on the Agg canvas (no display, no global
pyplot state, safe in a web worker): ``roc_<dataset>`` (ROC curves of every metric on the test split,
label = consistent), ``scatter_<metric>`` (metric against human factuality, coloured by system) and
``error_types`` (unified types per system category and per dataset, AggreFact Figures 3-4).
SVG output carries no date and a fixed hash salt, so the same report gives the same file.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure
from sklearn.metrics import roc_auc_score, roc_curve

from annotate.safe_csv import frame_csv

TABLE_FORMATS = {"csv": "csv", "latex": "tex"}
FIGURE_FORMATS = ("svg", "png")
MAX_SCATTER_POINTS = 3000
DATASET_LABELS = {"cnndm": "CNN/DM", "xsum": "XSum", "other": "Other"}


class OutputError(ValueError):
    """An unknown table, figure or format; the message lists the valid ones."""


def _num(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _p(value) -> str:
    return "" if value is None else f"{value:.1e}"


def _ci(interval) -> str:
    return "" if not interval or interval[0] is None else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def correlation_table(reports: dict[str, dict]) -> pd.DataFrame | None:
    """``reports``: ``{subset label: report}`` (e.g. "All data", "CNN/DM", "XSum"), one column block each."""
    blocks = []
    for label, report in reports.items():
        correlations = report.get("correlations") or {}
        if not correlations:
            continue
        holm = report.get("correlations_holm") or {}
        rows = {}
        for metric, entry in correlations.items():
            row = {"Pearson": _num(entry["pearson"]), "p": _p(entry["pearson_p"]),
                   "Spearman": _num(entry["spearman"]), "p ": _p(entry["spearman_p"])}
            if "kendall" in entry:
                row.update({"Kendall": _num(entry["kendall"]), "p  ": _p(entry["kendall_p"])})
            row["Holm p (Pearson)"] = _p((holm.get(metric) or {}).get("pearson_p"))
            row["n"] = str(entry["n"])
            rows[metric] = row
        block = pd.DataFrame.from_dict(rows, orient="index")
        block.columns = pd.MultiIndex.from_product([[label], block.columns])
        blocks.append(block)
    if not blocks:
        return None
    return pd.concat(blocks, axis=1).rename_axis("metric")


def balanced_accuracy_table(report: dict) -> pd.DataFrame | None:
    bacc = report.get("balanced_accuracy") or {}
    if not bacc:
        return None
    datasets = sorted({d for v in bacc.values() for d in (v["per_dataset"] or {})})
    rows = {}
    for metric, entry in bacc.items():
        row = {}
        for ds in datasets:
            cell = (entry["per_dataset"] or {}).get(ds) or {}
            row[f"{DATASET_LABELS.get(ds, ds)} (own threshold)"] = _num(cell.get("balanced_accuracy"))
            row[f"{DATASET_LABELS.get(ds, ds)} 95% CI"] = _ci([cell.get("ci_low"), cell.get("ci_high")])
        pooled = (entry["single_threshold"] or {}).get("all") or {}
        row["pooled (one threshold)"] = _num(pooled.get("balanced_accuracy"))
        row["pooled 95% CI"] = _ci([pooled.get("ci_low"), pooled.get("ci_high")])
        rows[metric] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("metric")


def system_level_table(report: dict) -> pd.DataFrame | None:
    section = report.get("system_level_correlations") or {}
    if not section:
        return None
    rows = {m: {"Pearson": _num(v["pearson"]), "p": _p(v["pearson_p"]), "Spearman": _num(v["spearman"]), "p ": _p(v["spearman_p"]),
                "Kendall": _num(v["kendall"]), "p  ": _p(v["kendall_p"]), "systems": str(v["n"])} for m, v in section.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("metric")


def unified_taxonomy_table(report: dict) -> pd.DataFrame | None:
    section = report.get("unified_taxonomy")
    if not section:
        return None
    rows = {}
    for kind, key in (("system category", "by_system_category"), ("dataset", "by_dataset")):
        for value, entry in (section.get(key) or {}).items():
            label = DATASET_LABELS.get(value, value) if kind == "dataset" else value
            row = {section["labels"][t]: _num(entry[t], 2) for t in section["types"]}
            row.update({"typed errors": str(entry["n_typed"]), "incorrect": str(entry["n_incorrect"]), "summaries": str(entry["n"])})
            rows[f"{kind}: {label}"] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("group")


def detector_recall_table(report: dict) -> pd.DataFrame | None:
    section = report.get("detector_recall") or {}
    labels = (report.get("unified_taxonomy") or {}).get("labels") or {}
    rows = {}
    for metric, per_dataset in section.items():
        row = {}
        for ds, cells in per_dataset.items():
            for error_type, cell in cells.items():
                name = labels.get(error_type, error_type.replace("_", " "))
                row[(DATASET_LABELS.get(ds, ds), f"{name} (n={cell['n']})")] = _num(cell["recall"], 2)
        rows[metric] = row
    if not rows or not any(rows.values()):
        return None
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.rename_axis("metric")


def williams_table(report: dict) -> pd.DataFrame | None:
    williams = report.get("williams") or {}
    if not williams:
        return None
    holm = report.get("williams_holm") or {}
    metrics = list(williams)
    rows = {a: {b: "" if a == b else f"{_p(williams[a].get(b))} ({_p((holm.get(a) or {}).get(b))})" for b in metrics} for a in metrics}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("p (Holm p): row > column")


def difference_table(report: dict) -> pd.DataFrame | None:
    differences = report.get("correlation_differences") or {}
    if not differences:
        return None
    metrics = list(differences)
    rows = {
        a: {b: "" if a == b else f"{_num((differences[a].get(b) or {}).get('difference'))} {_ci((differences[a].get(b) or {}).get('ci'))}".strip()
            for b in metrics}
        for a in metrics
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("r(row) - r(column) [95% CI]")


def report_tables(report: dict, subsets: dict[str, dict] | None = None) -> dict[str, pd.DataFrame]:
    """Every table with data; ``subsets``: further reports (e.g. per dataset) for the correlation table."""
    tables = {
        "correlations": correlation_table({"All data": report, **(subsets or {})}),
        "balanced_accuracy": balanced_accuracy_table(report),
        "system_level": system_level_table(report),
        "unified_taxonomy": unified_taxonomy_table(report),
        "detector_recall": detector_recall_table(report),
        "williams": williams_table(report),
        "correlation_differences": difference_table(report),
    }
    return {name: table for name, table in tables.items() if table is not None}


def render_table(table: pd.DataFrame, fmt: str) -> str:
    """``csv`` or ``latex`` text of a table (LaTeX: booktabs rules, special characters escaped)."""
    if fmt == "csv":
        return frame_csv(table)
    if fmt == "latex":
        return table.to_latex(escape=True, multicolumn=True, multicolumn_format="c")
    raise OutputError(f"unknown table format {fmt!r}; expected one of {', '.join(TABLE_FORMATS)}")


# ------------------------------------------------------------------------------------------------ figures


def _figure(width: float = 6.0, height: float = 4.0) -> Figure:
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def roc_figure(frame: pd.DataFrame, metrics: list[str], dataset: str) -> Figure | None:
    """ROC curves (inconsistent = positive is *not* used: label 1 = consistent, score = metric) on the test split."""
    test = frame[(frame["split"] == "test") & (frame["dataset"] == dataset)] if (frame["split"] == "test").any() else frame[frame["dataset"] == dataset]
    fig = _figure(5.0, 5.0)
    ax = fig.add_subplot()
    drawn = 0
    for metric in metrics:
        rows = test[[metric, "label"]].dropna()
        if rows["label"].nunique() < 2:
            continue
        fpr, tpr, _ = roc_curve(rows["label"].astype(bool), rows[metric].astype(float))
        ax.plot(fpr, tpr, label=f"{metric} (AUC {roc_auc_score(rows['label'].astype(bool), rows[metric].astype(float)):.2f})")
        drawn += 1
    if not drawn:
        return None
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set(xlabel="false positive rate", ylabel="true positive rate (consistent summaries)",
           title=f"ROC, {DATASET_LABELS.get(dataset, dataset)} test split")
    ax.legend(fontsize="small", loc="lower right")
    return fig


def scatter_figure(frame: pd.DataFrame, metric: str) -> Figure | None:
    rows = frame[["Factuality", metric, "system"]].dropna()
    if len(rows) < 3:
        return None
    if len(rows) > MAX_SCATTER_POINTS:
        rows = rows.sample(MAX_SCATTER_POINTS, random_state=0)
    fig = _figure()
    ax = fig.add_subplot()
    for system, group in rows.groupby("system", sort=True):
        ax.scatter(group[metric], group["Factuality"], s=8, alpha=0.6, label=str(system))
    ax.set(xlabel=metric, ylabel="human factuality", title=f"{metric} against human factuality")
    ax.legend(fontsize="x-small", ncols=2)
    return fig


def error_type_figure(report: dict) -> Figure | None:
    section = report.get("unified_taxonomy")
    if not section:
        return None
    fig = _figure(9.0, 4.0)
    panels = [("by_system_category", "per system category"), ("by_dataset", "per dataset")]
    axes = fig.subplots(1, 2, sharey=True)
    types = section["types"]
    for ax, (key, title) in zip(axes, panels, strict=True):
        groups = list(section.get(key) or {})
        width = 0.8 / len(types)
        for k, error_type in enumerate(types):
            values = [section[key][g][error_type] or 0.0 for g in groups]
            ax.bar(np.arange(len(groups)) + k * width, values, width, label=section["labels"][error_type])
        ax.set_xticks(np.arange(len(groups)) + 0.4 - width / 2,
                      [f"{DATASET_LABELS.get(g, g)}\n(n={section[key][g]['n_typed']})" for g in groups])
        ax.set_title(f"Unified error types {title}")
    axes[0].set_ylabel("share of typed incorrect summaries")
    axes[1].legend(fontsize="small")
    return fig


def _figure_makers(report: dict, frame: pd.DataFrame, metrics: list[str]) -> dict:
    makers = {"error_types": lambda: error_type_figure(report)}
    if not frame.empty:
        for dataset in sorted(frame["dataset"].astype(str).unique()):
            makers[f"roc_{dataset}"] = lambda d=dataset: roc_figure(frame, metrics, d)
        for metric in metrics:
            makers[f"scatter_{_safe(metric)}"] = lambda m=metric: scatter_figure(frame, m)
    return makers


def report_figures(report: dict, frame: pd.DataFrame, metrics: list[str]) -> dict[str, Figure]:
    """Every figure with data. ``frame``: per summary ``system, dataset, split, Factuality, label`` and the metrics."""
    figures = {name: make() for name, make in _figure_makers(report, frame, metrics).items()}
    return {name: fig for name, fig in figures.items() if fig is not None}


def report_figure(report: dict, frame: pd.DataFrame, metrics: list[str], name: str) -> Figure | None:
    """One figure of :func:`report_figures` by name (only that one is drawn); ``None`` if unknown or without data."""
    make = _figure_makers(report, frame, metrics).get(name)
    return make() if make else None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def render_figure(fig: Figure, fmt: str) -> bytes:
    if fmt not in FIGURE_FORMATS:
        raise OutputError(f"unknown figure format {fmt!r}; expected one of {', '.join(FIGURE_FORMATS)}")
    buffer = io.BytesIO()
    with rc_context({"svg.hashsalt": "factlab"}):
        fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None})
    return buffer.getvalue()


def analysis_frame(campaign, options: dict) -> tuple[pd.DataFrame, list[str]]:
    """The per-summary frame the figures draw (every split, so ROC curves can use the test split) and the
    metrics the report compares."""
    from metrics_service.report import load_analysis_data

    data = load_analysis_data(campaign, dataset=options.get("dataset"), system=options.get("system"),
                              aggregation=options.get("aggregation", "majority"))
    if data.human.empty:
        return pd.DataFrame(columns=["system", "dataset", "split", "Factuality", "label"]), []
    frame = data.human[["system", "dataset", "split", "Factuality"]].assign(label=data.human["Factuality"] >= 1.0)
    frame = frame.join(data.scores[data.metrics], how="left") if data.metrics else frame
    return frame, list(data.metrics)


def write_outputs(
    directory: Path, report: dict, frame: pd.DataFrame, metrics: list[str], *, subsets: dict[str, dict] | None = None,
    table_formats: tuple[str, ...] = ("latex", "csv"), figure_formats: tuple[str, ...] = FIGURE_FORMATS,
) -> list[Path]:
    """Write every table and figure into ``directory`` (created); returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in report_tables(report, subsets).items():
        for fmt in table_formats:
            path = directory / f"{name}.{TABLE_FORMATS[fmt]}"
            path.write_text(render_table(table, fmt), encoding="utf-8")
            written.append(path)
    for name, fig in report_figures(report, frame, metrics).items():
        for fmt in figure_formats:
            path = directory / f"{name}.{fmt}"
            path.write_bytes(render_figure(fig, fmt))
            written.append(path)
    return written
