"""The scorer names the API takes, stated as enums in the schema (``annotate.api.schema.state_registry_constraints``)."""
from __future__ import annotations

from annotate.api.schema import REGISTRY_ENUMS_IN_BODIES


def _metric_names() -> list[str]:
    # The registry as the scoring service checks it (deployment scorers from FACTLAB_EXTRA_SCORERS included).
    from metrics_service.scoring.registry import REGISTRY

    return sorted(REGISTRY)


REGISTRY_ENUMS_IN_BODIES.update({
    ("ScoringJobCreateRequest", "metric"): _metric_names,
    ("CampaignRequest", "auto_score_metrics"): _metric_names,  # a list: its items
})
