"""The common interface of every scorer (plain Python, no Django).

A scorer is built with its configuration, names its outputs and their direction, and scores aligned
lists of documents and summaries (and references, for reference-based metrics)::

    scorer = get_scorer("rouge")
    scorer.score(documents, summaries, references=references)
    # {"rouge1": [...], "rouge2": [...], "rougeL": [...], "rouge2_precision_article": [...]}
"""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from metrics_service.errors import ScorerError  # noqa: F401  (re-exported: scorers raise it)


class Scorer(ABC):
    #: Registry name, e.g. "rouge".
    name: ClassVar[str]
    #: +1 when a higher value means a more faithful summary, -1 when lower is better.
    direction: ClassVar[int] = 1
    #: Whether ``score`` needs ``references``.
    needs_references: ClassVar[bool] = False
    #: Whether the scorer runs a neural model (routed to the ``gpu`` queue).
    uses_model: ClassVar[bool] = False

    #: Outputs computed against ``references``; :meth:`score` returns them only when references are given
    #: (a scorer with ``needs_references = False`` still scores the article-based outputs without them).
    reference_outputs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **config: Any):
        self.config: dict[str, Any] = config

    def outputs_for(self, with_references: bool) -> tuple[str, ...]:
        """The keys :meth:`score` returns, with or without references."""
        if with_references:
            return tuple(self.output_names)
        return tuple(name for name in self.output_names if name not in self.reference_outputs)

    @property
    @abstractmethod
    def output_names(self) -> tuple[str, ...]:
        """Names of the lists returned by :meth:`score`."""

    @abstractmethod
    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        """Score each ``summaries[i]`` against ``documents[i]`` (and ``references[i]``); one list per output."""

    def config_key(self) -> str:
        """A stable short hash of the scorer name and configuration (stored with each score)."""
        payload = json.dumps({"name": self.name, **self.config}, sort_keys=True, default=str)
        return hashlib.sha1(payload.encode()).hexdigest()[:16]

    def _check_lengths(self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None) -> None:
        if len(documents) != len(summaries):
            raise ValueError(f"{len(documents)} documents but {len(summaries)} summaries: the lists must be aligned")
        if self.needs_references and references is None:
            raise ValueError(f"the {self.name} scorer needs references")
        if references is not None and len(references) != len(summaries):
            raise ValueError(f"{len(references)} references but {len(summaries)} summaries: the lists must be aligned")
