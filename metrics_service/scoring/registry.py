"""The scorer registry as the scoring jobs use it: the scorers shipped (``metrics_service.scorers.REGISTRY``)
plus the deployment's ``FACTLAB_EXTRA_SCORERS``, a scorer built and validated from a metric and its
configuration, and a small cache of built scorers per worker process.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from django.conf import settings

from metrics_service.models import (
    ScoringJob,
)
from metrics_service.scorers import REGISTRY, Scorer, ScorerError, scorer_class


def _register_extra_scorers() -> None:
    """Add scorers named in ``settings.FACTLAB_EXTRA_SCORERS`` (name -> "module:Class") to the registry.

    Used for deployment-specific scorers and by the worker tests (a deliberately slow scorer).
    """
    for name, target in getattr(settings, "FACTLAB_EXTRA_SCORERS", {}).items():
        REGISTRY.setdefault(name, target)


_register_extra_scorers()


def build_scorer(metric: str, config: dict[str, Any] | None = None) -> Scorer:
    """Return the scorer ``metric`` built with ``config``; ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(metric, str) or not metric.strip():
        raise ValueError("metric must be a non-empty scorer name")
    try:
        cls = scorer_class(metric)
    except ImportError as exc:
        raise ValueError(f"metric {metric!r} cannot be loaded: {exc}") from exc
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ValueError(f"config for metric {metric!r} must be an object of options, not {type(config).__name__}")
    bad_keys = [k for k in config if not isinstance(k, str) or not k]
    if bad_keys:
        raise ValueError(f"config for metric {metric!r} has invalid option names: {bad_keys!r}")
    try:
        json.dumps(config)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"config for metric {metric!r} is not JSON-serialisable: {exc}") from exc
    try:
        return cls(**config)
    except (TypeError, ValueError, ScorerError) as exc:
        raise ValueError(f"invalid configuration for metric {metric!r}: {exc}") from exc


_SCORER_CACHE: OrderedDict[tuple[str, str], Scorer] = OrderedDict()


_SCORER_CACHE_SIZE = 3


def cached_scorer(job: ScoringJob) -> Scorer:
    """One scorer per (metric, configuration) per worker process: model weights load once, not per chunk."""
    key = (job.metric, job.config_key)
    if key in _SCORER_CACHE:
        _SCORER_CACHE.move_to_end(key)
        return _SCORER_CACHE[key]
    scorer = build_scorer(job.metric, job.config)
    _SCORER_CACHE[key] = scorer
    while len(_SCORER_CACHE) > _SCORER_CACHE_SIZE:
        _SCORER_CACHE.popitem(last=False)
    return scorer
