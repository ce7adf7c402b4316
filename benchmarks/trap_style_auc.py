"""Can a script tell trap sentences from genuine ones by their look? Cross-validated ROC AUC on FRANK data.

For every FRANK article, a page is laid out as the task page lays it out (summaries, a trap in place of one
sentence of about half of them), and the trap's sentence or the *last shown sentence* of each other summary
is described by style features only:
upper-case share, spaces before punctuation, split contractions, final punctuation, length, number of
underlined article sentences and near-duplicates on the page (the issue's list). Classifiers (logistic regression, gradient
boosting) are cross-validated by article; the best ROC AUC is printed. 0.5 = chance; the target is <= 0.6.
The page's counts are measured too (:func:`count_rows`): how well a summary's sentence count and length, and
the data set, tell a summary carrying a trap (966 of 996 XSum summaries have one sentence).

``--mode before`` reproduces the old page (raw tokenised text, traps as stored, underlines only for
sentences sharing a word, traps picked without looking at the page); ``--mode after`` uses
``annotate.frank.page`` (what the product does now).

    .venv/bin/python -m benchmarks.trap_style_auc --mode both [--frank ../shared/data/frank] [--limit N]
"""
from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.model_selection import GroupKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from annotate.frank.page import choose_traps, place_traps, present_page, summary_like_sentences

REPO_ROOT = Path(__file__).resolve().parent.parent
RELEVANT_K = 2
TRAP_RATE = 0.5
FEATURES = (
    "upper_share", "space_before_punct", "split_contractions", "ends_period", "ends_other",
    "space_before_final", "words", "underlines", "near_duplicates",
)
# Not a style feature: how close the sentence's wording is to the closest other sentence on the page.
# Printed apart, as the remaining content-level tell (genuine summaries of one article overlap).
CONTENT_FEATURE = "max_similarity"


def default_frank_dir() -> Path:
    shared = REPO_ROOT.parent / "shared" / "data" / "frank"
    return shared if (shared / "human_annotations.json").is_file() else REPO_ROOT / "data" / "frank-subset"


def _words(sentence: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", sentence.lower())


def features(sentence: str, underlines: int, others: Sequence[str]) -> list[float]:
    letters = [c for c in sentence if c.isalpha()]
    stripped = sentence.rstrip()
    words = _words(sentence)
    ratios = [SequenceMatcher(None, words, _words(o), autojunk=False).ratio() for o in others]
    return [
        sum(c.isupper() for c in letters) / max(len(letters), 1),
        len(re.findall(r" [.,;:!?)]", sentence)),
        len(re.findall(r" (?:n't|'s|'re|'ve|'ll|'d|'m)\b", sentence, flags=re.IGNORECASE)),
        float(stripped.endswith(".")),
        float(bool(stripped) and stripped[-1] in "!?\"'’”)"),
        float(bool(re.search(r" [.!?]$", stripped))),
        float(len(sentence.split())),
        float(underlines),
        float(sum(r >= 0.85 for r in ratios)),
        max(ratios, default=0.0),  # CONTENT_FEATURE, the last column
    ]


def _old_underlines(article: Sequence[str], sentences: Sequence[str], k: int) -> list[int]:
    """The former rule: the k best article sentences, but only those sharing a word (so often fewer)."""
    try:
        matrix = TfidfVectorizer(ngram_range=(1, 2), stop_words="english").fit_transform(list(article) + list(sentences))
    except ValueError:
        return [0] * len(sentences)
    sims = cosine_similarity(matrix[len(article):], matrix[: len(article)])
    return [int(sum(1 for v in sorted(row, reverse=True)[:k] if v > 0)) for row in sims]


def load_articles(frank_dir: Path, limit: int | None) -> list[tuple[str, dict, list[str]]]:
    """(hash, article record, annotated model names) for every annotated article, in a stable order."""
    models: dict[str, list[str]] = {}
    for record in json.loads((frank_dir / "human_annotations.json").read_text(encoding="utf-8")):
        models.setdefault(record["hash"], []).append(record["model_name"])
    out = []
    for article_hash in sorted(models)[:limit]:
        path = frank_dir / "articles" / f"{article_hash}.json"
        if path.is_file():
            out.append((article_hash, json.loads(path.read_text(encoding="utf-8")), sorted(set(models[article_hash]))))
    return out


def page_rows(articles, mode: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature matrix, labels (1 = trap) and groups (article) of the last shown sentence of every summary."""
    rng = random.Random(seed)
    X, y, groups = [], [], []
    for group, (_, article, models) in enumerate(articles):
        summaries = [[s for s in article.get(f"{m}_lines") or [] if s.strip()] for m in models]
        summaries = [s for s in summaries if s]
        traps = [(i, t[1], t[0] != "F0") for i, t in enumerate(article.get("traps") or [])]
        if not summaries or not traps:
            continue
        lines = article.get("article_lines") or []
        n = len(summaries)
        slots = sorted(rng.sample(range(n), min(n, int(TRAP_RATE * n + rng.random()))))
        if mode == "before":
            pool = traps[:]
            rng.shuffle(pool)
            trap_of = {p: pool[j % len(pool)][0] for j, p in enumerate(slots)}
            trap_texts = {i: t for i, t, _ in traps}
            shown = [list(s) + ([trap_texts[trap_of[p]]] if p in trap_of else []) for p, s in enumerate(summaries)]
            underlines = [_old_underlines(lines, s, RELEVANT_K) for s in shown]
        else:
            # As the product does (annotate.frank.traps.add_copy_traps): unedited copies of summary-like
            # article sentences join the document's traps.
            copies = summary_like_sentences(lines, [s for sentences in summaries for s in sentences])
            traps = traps + [(len(traps) + j, text, False) for j, text in enumerate(copies)]
            placed = place_traps(summaries, traps, slots, rng)  # each trap in place of a sentence
            trap_of = {p: trap_id for p, (trap_id, _) in placed.items()}
            trap_texts = {i: t for i, t, _ in traps}
            _, pages = present_page(lines, summaries, [trap_texts[trap_of[p]] if p in trap_of else None for p in range(n)], RELEVANT_K,
                                    trap_at=[placed[p][1] if p in placed else None for p in range(n)])
            shown = [[s["text"] for s in page] for page in pages]
            underlines = [[len(s["relevant"]) for s in page] for page in pages]
        everything = [s for sentences in shown for s in sentences]
        for p, sentences in enumerate(shown):
            # The trap's own sentence (the last one when appended), else the summary's last.
            at = placed[p][1] if mode != "before" and p in placed else -1
            sentence = sentences[at]
            others = [s for s in everything if s is not sentence]
            X.append(features(sentence, underlines[p][at], others))
            y.append(int(p in trap_of))
            groups.append(group)
    return np.array(X), np.array(y), np.array(groups)


def dataset_of(frank_dir: Path) -> dict[str, str]:
    """FRANK's data set name (``bbc`` for XSum, ``cnndm``) of every article hash."""
    return {r["hash"]: r["dataset"] for r in json.loads((frank_dir / "human_annotations.json").read_text(encoding="utf-8"))}


def count_rows(articles, datasets: dict[str, str], mode: str, seed: int = 0, trap_rate: float = TRAP_RATE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Page-level features of every summary as a page shows it: sentence count, words, data set (1 = XSum);
    labels (1 = the summary carries a trap) and groups (article). ``before``: traps appended after the last
    sentence; ``after``: in place of a sentence (``annotate.frank.page.place_traps``)."""
    rng = random.Random(seed)
    X, y, groups = [], [], []
    for group, (article_hash, article, models) in enumerate(articles):
        summaries = [[s for s in article.get(f"{m}_lines") or [] if s.strip()] for m in models]
        summaries = [s for s in summaries if s]
        lines = article.get("article_lines") or []
        traps = [(i, t[1], t[0] != "F0") for i, t in enumerate(article.get("traps") or [])]
        copies = summary_like_sentences(lines, [s for sentences in summaries for s in sentences])
        traps = traps + [(len(traps) + j, text, False) for j, text in enumerate(copies)]
        if not summaries or not traps:
            continue
        n = len(summaries)
        slots = sorted(rng.sample(range(n), min(n, int(trap_rate * n + rng.random()))))
        text = {i: t for i, t, _ in traps}
        if mode == "before":
            shown = [list(s) + [text[t]] if (t := choose_traps(summaries, traps, [p], rng).get(p)) is not None and p in slots else list(s)
                     for p, s in enumerate(summaries)]
        else:
            placed = place_traps(summaries, traps, slots, rng)
            shown = [[text[placed[p][0]] if p in placed and i == placed[p][1] else s for i, s in enumerate(sentences)]
                     for p, sentences in enumerate(summaries)]
        xsum = float(datasets.get(article_hash) == "bbc")
        for p, sentences in enumerate(shown):
            X.append([float(len(sentences)), float(sum(len(s.split()) for s in sentences)), xsum])
            y.append(int(len(sentences) != len(summaries[p]) or sentences != summaries[p]))
            groups.append(group)
    return np.array(X), np.array(y), np.array(groups)


def feature_aucs(X: np.ndarray, y: np.ndarray, names: Sequence[str]) -> dict[str, float]:
    """ROC AUC of each feature alone as a score (either direction: the better one)."""
    out = {}
    for j, name in enumerate(names):
        if len(set(X[:, j])) < 2:
            out[name] = 0.5
            continue
        auc = float(roc_auc_score(y, X[:, j]))
        out[name] = max(auc, 1 - auc)
    return out


def cross_validated_auc(X: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int = 5) -> dict[str, float]:
    """ROC AUC of out-of-fold predictions, per classifier (folds split by article)."""
    classifiers = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "boosting": GradientBoostingClassifier(random_state=0),
    }
    cv = GroupKFold(n_splits=min(folds, len(set(groups))))
    return {
        name: float(roc_auc_score(y, cross_val_predict(model, X, y, groups=groups, cv=cv, method="predict_proba")[:, 1]))
        for name, model in classifiers.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=default_frank_dir())
    parser.add_argument("--mode", choices=("before", "after", "both"), default="both")
    parser.add_argument("--limit", type=int, default=None, help="first N articles only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    articles = load_articles(args.frank, args.limit)
    datasets = dataset_of(args.frank)
    for mode in (("before", "after") if args.mode == "both" else (args.mode,)):
        X, y, groups = count_rows(articles, datasets, mode, args.seed)
        xsum = X[:, 2] == 1
        single = feature_aucs(X[xsum], y[xsum], ("sentences", "words"))
        learned = cross_validated_auc(X, y, groups)
        print(f"{mode}: page counts: XSum summaries " + ", ".join(f"{k} AUC {v:.3f}" for k, v in single.items())
              + f"; sentences+words+data set, all summaries: max cross-validated AUC {max(learned.values()):.3f}")
    for mode in (("before", "after") if args.mode == "both" else (args.mode,)):
        X, y, groups = page_rows(articles, mode, args.seed)
        aucs = cross_validated_auc(X[:, :-1], y, groups)
        content = cross_validated_auc(X, y, groups)
        print(f"{mode}: {len(articles)} articles, {len(y)} last sentences ({int(y.sum())} traps); style features: "
              + ", ".join(f"{k} AUC {v:.3f}" for k, v in aucs.items()) + f"; max {max(aucs.values()):.3f}"
              + f" | adding {CONTENT_FEATURE}: max {max(content.values()):.3f}")


if __name__ == "__main__":
    main()
