"""Shared set-up of the report tests: campaigns from the shared data, with ROUGE/BLEU scores stored.

(No tests here; the module name keeps it among the report test files.)
"""
from __future__ import annotations

from pathlib import Path

from annotate.models import Campaign, MetricScore, MetricSource, Summary
from annotate.services.imports import import_dataset

TEST_CONFIG = "report-tests"


# Several report tests import the whole FRANK benchmark and score the same 2246 summaries (half a minute of
# ROUGE and BLEU each time): each (article, summary, reference) is scored once per test process. ROUGE and BLEU
# score every summary on its own, so a remembered score is the one a new call would give.
_SCORED: dict[tuple[str, str, str], dict[str, float]] = {}


def _platform_scores(documents: list[str], summaries: list[str], references: list[str]) -> dict[str, list[float]]:
    """ROUGE and BLEU of each summary against its reference (:func:`_score`), each text triple scored once."""
    triples = list(zip(documents, summaries, references, strict=True))
    new = [triple for triple in dict.fromkeys(triples) if triple not in _SCORED]
    if new:
        computed = _score(*(list(texts) for texts in zip(*new, strict=True)))
        for index, triple in enumerate(new):
            _SCORED[triple] = {metric: values[index] for metric, values in computed.items()}
    metrics = list(_SCORED[triples[0]]) if triples else []
    return {metric: [_SCORED[triple][metric] for triple in triples] for metric in metrics}


def _score(documents: list[str], summaries: list[str], references: list[str]) -> dict[str, list[float]]:
    """ROUGE and BLEU of each summary against its reference, through the platform's scorers when present."""
    try:
        from metrics_service.scorers import get_scorer

        out: dict[str, list[float]] = {}
        for name in ("rouge", "bleu"):
            out.update(get_scorer(name).score(documents, summaries, references=references))
        return out
    except (ImportError, ValueError, AttributeError):
        # The scorers are being written in parallel: same libraries, same definitions.
        from rouge_score import rouge_scorer
        from sacrebleu.metrics import BLEU

        rouge = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
        bleu = BLEU(effective_order=True)
        out = {"rouge1": [], "rouge2": [], "rougeL": [], "bleu": []}
        for summary, reference in zip(summaries, references, strict=True):
            scores = rouge.score(reference, summary)
            for key in ("rouge1", "rouge2", "rougeL"):
                out[key].append(scores[key].fmeasure)
            out["bleu"].append(bleu.sentence_score(summary, [reference]).score / 100)
        return out


def score_against_references(campaign: Campaign) -> int:
    """Store ROUGE/BLEU scores (computed source) for every non-reference summary with a reference."""
    references = {
        s.document_id: s.text for s in Summary.objects.filter(document__campaign=campaign, is_reference=True, edited_from__isnull=True)
    }
    summaries = [
        s for s in Summary.objects.filter(document__campaign=campaign, is_reference=False).select_related("document")
        if s.document_id in references
    ]
    scores = _platform_scores([s.document.text for s in summaries], [s.text for s in summaries], [references[s.document_id] for s in summaries])
    rows = [
        MetricScore(summary=s, metric=metric, config_key=TEST_CONFIG, value=float(values[i]), source=MetricSource.COMPUTED)
        for metric, values in scores.items()
        for i, s in enumerate(summaries)
    ]
    MetricScore.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


def frank_campaign(frank_dir: Path, slug: str = "frank-report") -> Campaign:
    import_dataset("frank", [frank_dir], campaign_slug=slug)
    campaign = Campaign.objects.get(slug=slug)
    score_against_references(campaign)
    return campaign
