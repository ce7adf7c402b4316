"""Scorers of summary factuality, usable from plain Python: ``get_scorer(name, **config)``."""
from __future__ import annotations

import importlib
from typing import Any

from .base import Scorer, ScorerError

# name -> "module:Class"; imported lazily so a light scorer never loads torch.
REGISTRY: dict[str, str] = {
    "coco": "metrics_service.scorers.coco:CoCo",
    "bartscore": "metrics_service.scorers.bartscore:BARTScore",
    "rouge": "metrics_service.scorers.rouge:Rouge",
    "bleu": "metrics_service.scorers.bleu:Bleu",
    "meteor": "metrics_service.scorers.meteor:Meteor",
    "bertscore": "metrics_service.scorers.bertscore:BERTScore",
    "summac_zs": "metrics_service.scorers.entailment:SummaCZS",
    "factcc": "metrics_service.scorers.entailment:FactCC",
    "minicheck": "metrics_service.scorers.minicheck:MiniCheck",
    "alignscore": "metrics_service.scorers.alignscore:AlignScore",
    "llm_judge": "metrics_service.scorers.llm_judge:LLMJudge",
    "llm_frank": "metrics_service.scorers.llm_judge:LLMFrankAnnotator",
}


def scorer_class(name: str) -> type[Scorer]:
    if name not in REGISTRY:
        raise ValueError(f"unknown metric {name!r}; available: {', '.join(sorted(REGISTRY))}")
    module_name, class_name = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def get_scorer(name: str, **config: Any) -> Scorer:
    """Build the scorer registered as ``name`` with its configuration."""
    return scorer_class(name)(**config)


__all__ = ["REGISTRY", "Scorer", "ScorerError", "get_scorer", "scorer_class"]
