"""Server-side figures of the campaign dashboard: matplotlib (Agg) rendered to inline SVG strings.

Each function takes report sections (plain data) or per-summary frames and returns an ``<svg>`` string,
or ``None`` when there is nothing to draw.
"""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display on servers; must precede pyplot

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog so the SVG can be inlined


def error_bars(distribution: dict | None) -> str | None:
    """Grouped bars: share of summaries with each error category, per system (FRANK Figure 2)."""
    if not distribution:
        return None
    systems = list(distribution)
    categories = [k for k in distribution[systems[0]] if k != "n"]
    fig, ax = plt.subplots(figsize=(max(6, 1.0 * len(systems) + 3), 3.2))
    width = 0.8 / len(categories)
    x = np.arange(len(systems))
    colors = plt.get_cmap("tab10")
    for i, category in enumerate(categories):
        values = [distribution[s].get(category) or 0.0 for s in systems]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=category, color="0.3" if category == "incorrect" else colors(i % 10))
    ax.set_xticks(x, systems, rotation=30, ha="right")
    ax.set_ylabel("share of summaries")
    ax.set_ylim(0, 1)
    ax.legend(ncol=5, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(0, 1.25))
    return _svg(fig)


def _heatmap(matrix: np.ndarray, rows: list[str], columns: list[str], title: str, fmt: str, cmap: str, vmin=None, vmax=None) -> str:
    fig, ax = plt.subplots(figsize=(max(4, 0.7 * len(columns) + 2), max(2.5, 0.35 * len(rows) + 1.2)))
    shown = np.ma.masked_invalid(matrix.astype(float))
    image = ax.imshow(shown, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(columns)), columns, rotation=35, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for (i, j), value in np.ndenumerate(matrix):
        if np.isfinite(value):
            ax.text(j, i, format(value, fmt), ha="center", va="center", fontsize=7)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.04)
    return _svg(fig)


def confusion_heatmap(confusion: dict | None) -> str | None:
    """Majority category (rows) vs each annotator's categories (columns), FRANK Figure 6."""
    if not confusion:
        return None
    matrix = np.asarray(confusion["matrix"], dtype=float)
    return _heatmap(matrix, confusion["labels"], confusion["columns"], "majority vs annotator category", ".0f", "Blues")


def metric_scatter(frame: pd.DataFrame, metric: str, human: str = "Factuality", max_points: int = 3000) -> str | None:
    """Metric vs human factuality with one least-squares line per system (FRANK Figure 3)."""
    if frame.empty or metric not in frame:
        return None
    data = frame[[human, metric, "system"]].dropna()
    if len(data) < 3:
        return None
    if len(data) > max_points:
        data = data.sample(max_points, random_state=0)
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    colors = plt.get_cmap("tab10")
    for i, (system, group) in enumerate(data.groupby("system", sort=True)):
        color = colors(i % 10)
        ax.scatter(group[metric], group[human], s=6, alpha=0.35, color=color)
        if group[metric].nunique() > 1:
            slope, intercept = np.polyfit(group[metric], group[human], 1)
            xs = np.linspace(group[metric].min(), group[metric].max(), 2)
            ax.plot(xs, slope * xs + intercept, color=color, label=str(system), linewidth=1.6)
    ax.set_xlabel(metric)
    ax.set_ylabel("human factuality")
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _svg(fig)


def ablation_bars(ablation: dict | None) -> str | None:
    """Drop of the correlation with humans when one error category is flipped to "no error" (FRANK Figure 5)."""
    if not ablation:
        return None
    metrics = list(ablation)
    names = list(ablation[metrics[0]]["by_category"]) + list(ablation[metrics[0]]["by_group"])
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) + 2), 3.2))
    width = 0.8 / len(metrics)
    x = np.arange(len(names))
    for i, metric in enumerate(metrics):
        entry = {**ablation[metric]["by_category"], **ablation[metric]["by_group"]}
        ax.bar(x + i * width - 0.4 + width / 2, [entry.get(n) or 0.0 for n in names], width, label=metric)
    ax.axhline(0, color="0.4", linewidth=0.8)
    ax.set_xticks(x, [n.replace("_Errors", "") for n in names], rotation=35, ha="right")
    ax.set_ylabel("correlation drop")
    ax.legend(fontsize=7, frameon=False, ncol=4)
    return _svg(fig)


def pairs_heatmap(meta: dict | None, statistic: str) -> str | None:
    """Metrics (rows) x error types (columns) heatmap of ``consistency`` or ``roc_auc`` (BUMP Tables 4-5)."""
    if not meta:
        return None
    metrics = list(meta)
    types = ["all", *sorted({t for m in metrics for t in meta[m]["by_error_type"]})]
    matrix = np.full((len(metrics), len(types)), np.nan)
    for i, metric in enumerate(metrics):
        for j, error_type in enumerate(types):
            cell = meta[metric] if error_type == "all" else meta[metric]["by_error_type"].get(error_type)
            if cell and cell.get(statistic) is not None:
                matrix[i, j] = cell[statistic]
    title = "consistency" if statistic == "consistency" else "ROC AUC"
    return _heatmap(matrix, metrics, [t.replace("_", " ") for t in types], title, ".2f", "RdYlGn", 0.0, 1.0)
