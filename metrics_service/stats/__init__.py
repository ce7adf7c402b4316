"""Pure statistics of human-label reliability and metric meta-evaluation (FRANK, BUMP, AggreFact).

Plain numpy/scipy/pandas in, plain Python data out; no Django here (the DB side is
``metrics_service.selectors``). Every function returns ``None`` (or a dict of ``None``) where the data
cannot support the statistic, instead of raising, so a report can show partial results.
"""
from .agreement import (
    category_agreement,
    expert_agreement,
    factual_agreement,
    set_label,
    unit_majority,
)
from .correlation import (
    correlation,
    metric_correlations,
    partial_residuals,
    williams_matrix,
    williams_test,
)
from .detection import balanced_accuracy_report, best_threshold
from .factuality import (
    category_confusion,
    error_distribution,
    flip_scores,
    sentence_majority,
    summary_human_scores,
)
from .majority import majority_label, modal_categories
from .minimal_pairs import pair_statistics, paired_permutation_test

__all__ = [
    "balanced_accuracy_report",
    "best_threshold",
    "category_agreement",
    "category_confusion",
    "correlation",
    "error_distribution",
    "expert_agreement",
    "factual_agreement",
    "flip_scores",
    "majority_label",
    "metric_correlations",
    "modal_categories",
    "pair_statistics",
    "paired_permutation_test",
    "partial_residuals",
    "sentence_majority",
    "set_label",
    "summary_human_scores",
    "unit_majority",
    "williams_matrix",
    "williams_test",
]
