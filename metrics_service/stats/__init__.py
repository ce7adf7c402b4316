"""Pure statistics of human-label reliability and metric meta-evaluation (FRANK, BUMP, AggreFact).

Plain numpy/scipy/pandas in, plain Python data out; no Django here (the DB side is
``metrics_service.selectors``). Every function returns ``None`` (or a dict of ``None``) where the data
cannot support the statistic, instead of raising, so a report can show partial results.

The names below are imported from their modules when first asked for (PEP 562): the web process and every
worker read the majority label (``majority``) at start-up, and importing the package must not pull in
scikit-learn, statsmodels and scipy.stats with it (a second and a half of every process start).

``correlation`` is the module here (import the function from it): a name that is both a module and one of the
package's functions would be the one or the other by which was imported first.
"""
from __future__ import annotations

import importlib

_MODULE_OF = {
    "category_agreement": "agreement",
    "expert_agreement": "agreement",
    "factual_agreement": "agreement",
    "set_label": "agreement",
    "unit_majority": "agreement",
    "metric_correlations": "correlation",
    "partial_residuals": "correlation",
    "williams_matrix": "correlation",
    "williams_test": "correlation",
    "balanced_accuracy_report": "detection",
    "best_threshold": "detection",
    "category_confusion": "factuality",
    "error_distribution": "factuality",
    "flip_scores": "factuality",
    "sentence_majority": "factuality",
    "summary_human_scores": "factuality",
    "majority_label": "majority",
    "modal_categories": "majority",
    "pair_statistics": "minimal_pairs",
    "paired_permutation_test": "minimal_pairs",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    globals()[name] = value  # asked for once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
