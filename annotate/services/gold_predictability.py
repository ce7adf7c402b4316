"""What the page alone predicts of a campaign's gold: cheap predictors a script holding the page computes,
scored as workers are (balanced within strata), so the control page can warn when the checks give themselves away.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Campaign, GoldLabel

from .overlap import overlap_band, record_overlaps, summary_sentences, word_count
from .quality import Check, balanced_score

#: Above this, a predictor reading only the page separates the campaign's gold (the control page warns).
PREDICTABILITY_WARNING = 0.6
#: Random halvings of the gold a threshold rule is chosen on one half of and scored on the other, averaged.
HALF_SPLITS = 10
#: The cheap page features a script computes: word overlap with the article, sentence length and position,
#: summary length (embedding overlap is left out: no model weights are shipped or downloaded).
PAGE_FEATURES = ("word overlap", "sentence length", "sentence position", "summary length")


@dataclass(frozen=True)
class Predictor:
    """One predictor of the gold from page features, and its best balanced score pooled and within strata."""

    name: str
    pooled: float | None
    stratified: float | None


@dataclass(frozen=True)
class Predictability:
    gold: int
    predictors: list[Predictor]

    @property
    def best(self) -> Predictor | None:
        scored = [p for p in self.predictors if p.stratified is not None]
        return max(scored, key=lambda p: p.stratified) if scored else None

    @property
    def best_pooled(self) -> Predictor | None:
        scored = [p for p in self.predictors if p.pooled is not None]
        return max(scored, key=lambda p: p.pooled) if scored else None

    @property
    def warning(self) -> bool:
        return self.best is not None and self.best.stratified > PREDICTABILITY_WARNING


def gold_page_features(campaign: Campaign) -> tuple[list[list[float]], list[str], list[bool], list[str]]:
    """Per gold sentence of the campaign: its page features (:data:`PAGE_FEATURES`), data set, label and stratum."""
    record_overlaps(campaign)
    counts: dict[int, list[str]] = {}
    features, datasets, labels, strata = [], [], [], []
    for label in GoldLabel.objects.filter(summary__document__campaign=campaign).select_related("summary__document").order_by("pk"):
        summary = label.summary
        if summary.pk not in counts:
            counts[summary.pk] = summary_sentences(summary)
        sentences = counts[summary.pk]
        text = sentences[label.sentence_index] if label.sentence_index < len(sentences) else ""
        features.append([label.overlap or 0.0, word_count(text), label.sentence_index, len(sentences)])
        datasets.append(summary.document.dataset)
        labels.append(label.factual)
        strata.append(f"{summary.document.dataset}/{overlap_band(label.overlap)}")
    return features, datasets, labels, strata


def _scores(predicted, expected, codes, names) -> tuple[float | None, float | None]:
    """(pooled, within strata) balanced score of the boolean arrays ``predicted`` against ``expected``, the strata
    given as indexes into ``names``, by :func:`balanced_score` on the answers summed (counted with numpy: the
    threshold search scores a few thousand rules per campaign)."""
    import numpy as np

    counts = np.bincount((codes * 2 + expected) * 2 + (predicted == expected), minlength=len(names) * 4)
    checks = [Check(bool(cell // 2 % 2), bool(cell % 2), float(n), count=int(n), stratum=str(names[cell // 4]))
              for cell, n in enumerate(counts.tolist()) if n]
    quality = balanced_score(checks, 1)
    return quality.pooled_score, quality.score


def gold_predictability(campaign: Campaign) -> Predictability:
    """How well cheap predictors computed from the page alone separate the campaign's gold: for each page
    feature the best one-threshold rule (either direction, chosen on half the gold and scored on the other, the
    mean over :data:`HALF_SPLITS` random halvings), a per-data-set rule, and a logistic regression
    over all of them (5-fold cross-validated); each with its best balanced score pooled and within strata of
    data set and overlap band (what workers are scored by: near 0.5 when the page does not give gold away)."""
    import numpy as np

    features, datasets, labels, strata = gold_page_features(campaign)
    predictors: list[Predictor] = []
    if len(set(labels)) < 2:
        return Predictability(gold=len(labels), predictors=predictors)
    matrix, y = np.asarray(features, dtype=float), np.asarray(labels, dtype=bool)
    # Thresholds are chosen on one half of the gold and scored on the other (both ways): the best of 80 rules
    # picked and scored on the same few hundred sentences would look predictive by chance alone. One halving
    # alone decides too much: on 119 FRANK gold sentences that no feature separates (mean 0.44-0.52 within
    # strata), one seed in seven put a feature above the warning; the mean over many halvings does not move so.
    halvings = np.random.default_rng(0)
    folds_by_split = [halvings.permutation(len(labels)) % 2 for _ in range(HALF_SPLITS)]
    stratum_names, stratum_codes = np.unique(np.asarray(strata, dtype=str), return_inverse=True)

    def best_rule(values, train, which: int) -> tuple[float, bool]:
        best = (-1.0, 0.0, True)
        shown, expected, codes = values[train], y[train], stratum_codes[train]
        for threshold in np.unique(np.quantile(shown, np.linspace(0, 1, 41))):
            reached = shown >= threshold
            for above in (True, False):
                score = _scores(reached == above, expected, codes, stratum_names)[which] or 0.0
                best = max(best, (score, threshold, above), key=lambda b: b[0])
        return best[1], best[2]

    for column, name in enumerate(PAGE_FEATURES):
        values = matrix[:, column]
        scores = []
        for which in (0, 1):  # the rule best pooled, then the rule best within strata
            per_split = []
            for fold in folds_by_split:
                predicted = np.zeros(len(labels), dtype=bool)
                for k in (0, 1):
                    threshold, above = best_rule(values, fold != k, which)
                    predicted[fold == k] = (values[fold == k] >= threshold) == above
                per_split.append(_scores(predicted, y, stratum_codes, stratum_names)[which])
            known = [score for score in per_split if score is not None]
            scores.append(round(float(np.mean(known)), 4) if known else None)
        predictors.append(Predictor(f"{name} (best threshold)", scores[0], scores[1]))
    factual_share = y.mean()
    by_dataset = {name: y[[d == name for d in datasets]].mean() for name in set(datasets)}
    pooled, stratified = _scores(np.asarray([by_dataset[d] > factual_share for d in datasets]), y, stratum_codes, stratum_names)
    predictors.append(Predictor("data set", pooled, stratified))
    folds = min(5, int(min(y.sum(), (~y).sum())))
    if folds >= 2:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        names = sorted(set(datasets))
        onehot = np.asarray([[d == name for name in names] for d in datasets], dtype=float)
        model = make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000))
        predicted = cross_val_predict(model, np.hstack([matrix, onehot]), y, cv=folds)
        pooled, stratified = _scores(np.asarray(predicted, dtype=bool), y, stratum_codes, stratum_names)
        predictors.append(Predictor("logistic regression on all of them", pooled, stratified))
    return Predictability(gold=len(labels), predictors=predictors)


def cached_gold_predictability(campaign: Campaign) -> Predictability:
    """:func:`gold_predictability` for the control page, computed again only when the gold changed."""
    from django.core.cache import cache
    from django.db.models import Count, Max

    gold = GoldLabel.objects.filter(summary__document__campaign=campaign).aggregate(n=Count("id"), last=Max("updated_at"))
    key = f"factlab:gold-predictability:{campaign.pk}:{gold['n']}:{gold['last'].timestamp() if gold['last'] else 0}"
    result = cache.get(key)
    if result is None:
        result = gold_predictability(campaign)
        cache.set(key, result, timeout=7 * 24 * 3600)
    return result
