"""The span campaign's report section: agreement, AggreFact's type analyses and detectors measured on words.

* **Word labels** aggregated by Dawid–Skene and GLAD with their posteriors (``token_label_models``).
* **Agreement** among the human answers (crowd and imported annotators): token-level Krippendorff's alpha over
  the types and pairwise span F1 (exact and overlap); each model annotator beside them, by its span F1 against
  the human majority spans and the alpha of its answers with them.
* **Unified types** per summary by AggreFact's rule (more than one annotator; a summary with one answer, e.g. an
  aggregated release, is read through it), and their distribution per system category (SOTA / XFORMER / OLD) and
  per dataset, as AggreFact's Figures 3 and 4.
* **Detectors**: every detector with stored word scores, and every model annotator (its marked words), measured word by word per unified type
  (``metrics_service.stats.token_detection``).
"""
from __future__ import annotations

import pandas as pd

from annotate.models import Campaign
from metrics_service.stats._util import jsonable
from metrics_service.stats.detection import system_category
from metrics_service.stats.spans import (
    majority_answers,
    pairwise_span_f1,
    summary_types,
    token_alpha,
    token_label_models,
    token_truth,
    token_types,
)
from metrics_service.stats.token_detection import token_detection_report
from metrics_service.stats.unified_taxonomy import type_distribution
from taxonomies.unified import MIN_ANNOTATORS, UNIFIED_TYPES

from .models import AnswerSource, SpanAnswer, WordScores
from .words import from_json


def _answers(campaign: Campaign) -> pd.DataFrame:
    rows = []
    for a in SpanAnswer.objects.filter(summary__document__campaign=campaign).select_related("summary__document"):
        who = f"imported:{a.annotator}" if a.source == AnswerSource.IMPORTED else f"{a.source}:{a.worker_id}"
        rows.append({"summary_id": a.summary_id, "worker_id": who, "source": a.source, "n_tokens": a.n_words,
                     "spans": from_json(a.spans), "system": a.summary.system, "dataset": a.summary.document.dataset})
    return pd.DataFrame(rows, columns=["summary_id", "worker_id", "source", "n_tokens", "spans", "system", "dataset"])


def _types_frame(human: pd.DataFrame, min_annotators: int) -> pd.DataFrame:
    rows = []
    for summary_id, group in human.groupby("summary_id", sort=True):
        answers = list(group["spans"])
        need = max(1, min(min_annotators, len(answers)))
        types = summary_types(answers, min_annotators=need)
        marked = sum(bool(spans) for spans in answers)
        rows.append({"summary_id": summary_id, "incorrect": bool(types) or marked * 2 > len(answers), "typed": bool(types),
                     **{t: t in types for t in UNIFIED_TYPES}, "dataset": group["dataset"].iloc[0],
                     "system_category": system_category(group["system"].iloc[0])})
    return pd.DataFrame(rows)


def _word_frame(human: pd.DataFrame, scores: dict[str, dict[int, list]], min_annotators: int) -> pd.DataFrame:
    rows = []
    for summary_id, group in human.groupby("summary_id", sort=True):
        n = int(group["n_tokens"].iloc[0])
        truth = token_truth(n, list(group["spans"]), min_annotators=min_annotators)
        for i, types in enumerate(truth):
            row = {"summary_id": summary_id, **{t: t in types for t in UNIFIED_TYPES}}
            for detector, by_summary in scores.items():
                values = by_summary.get(summary_id)
                value = values[i] if values is not None and i < len(values) else None
                row[detector] = float("nan") if value is None else float(value)
            rows.append(row)
    return pd.DataFrame(rows)


def human_agreement(campaign: Campaign) -> tuple[dict[str, int], float | None]:
    """The counts and token-level alpha of the human answers (the report section the shared report shows)."""
    answers = _answers(campaign)
    human = answers[answers["source"] != AnswerSource.MODEL]
    counts = {"answers": len(human), "summaries": int(human["summary_id"].nunique()), "annotators": int(human["worker_id"].nunique()),
              "no_error_answers": int(sum(not spans for spans in human["spans"]))}
    return counts, token_alpha(human) if not human.empty else None


def span_report(campaign: Campaign, *, min_annotators: int = MIN_ANNOTATORS, n_resamples: int = 1000) -> dict:
    """The section as JSON-ready data (see the module doc)."""
    answers = _answers(campaign)
    human = answers[answers["source"] != AnswerSource.MODEL]
    section: dict = {"summaries": int(human["summary_id"].nunique()), "answers": len(human),
                     "annotators": int(human["worker_id"].nunique()), "min_annotators": min_annotators}
    if human.empty:
        return section
    majority = majority_answers(human, min_annotators=min_annotators)
    models = {}
    for worker_id, model in answers[answers["source"] == AnswerSource.MODEL].groupby("worker_id"):
        paired = pd.concat([model[["summary_id", "worker_id", "n_tokens", "spans"]], majority.assign(worker_id="human majority")])
        models[worker_id] = {"span_f1": pairwise_span_f1(model, against=majority), "token_alpha": token_alpha(paired)}
    section["agreement"] = {"human": {"token_alpha": token_alpha(human), "span_f1": pairwise_span_f1(human)}, "models": models}
    section["word_labels"] = token_label_models(human[["summary_id", "worker_id", "n_tokens", "spans"]])
    types = _types_frame(human, min_annotators)
    section["unified_types"] = {"by_system_category": type_distribution(types, "system_category"),
                                "by_dataset": type_distribution(types, "dataset")}
    stored: dict[str, dict[int, list]] = {}
    for row in WordScores.objects.filter(summary_id__in=list(types["summary_id"])).values("detector", "summary_id", "scores"):
        stored.setdefault(row["detector"], {})[row["summary_id"]] = row["scores"]
    # A model annotator is a detector too: the words it marked score 1, the others 0.
    for worker_id, summary_id, n_tokens, spans in answers[answers["source"] == AnswerSource.MODEL][
            ["worker_id", "summary_id", "n_tokens", "spans"]].itertuples(index=False):
        stored.setdefault(worker_id, {})[summary_id] = [float(bool(t)) for t in token_types(int(n_tokens), spans)]
    detectors = sorted(stored)
    words = _word_frame(human, stored, min_annotators)
    section["detectors"] = token_detection_report(words, detectors, n_resamples=n_resamples) if detectors else {}
    return jsonable(section)
