"""How often the "predictable answers" hold catches page rules and holds honest workers, on FRANK.

Each simulated worker takes ``--items`` FRANK articles in an order of its own (one item: the article's system
summaries, as the platform's FRANK page shows them) and answers every sentence; after each item the platform's
own rule (``annotate.services.predictable_answers.predictable_evidence``, over the last ``RECENT_ITEMS``
items, the page features computed by ``control_items.sentence_page_features``) decides whether its pay is
held. Gold is FRANK's summaries rated 1.0 or 0.0 (as imported), the known labels the rule compares with
(no traps here: on the platform they add to them).

Honest workers:

* **gold follower**: the gold where known, "Yes" elsewhere;
* **FRANK reader**: the gold where known, elsewhere "No" with probability one minus the summary's FRANK
  rating (drawn per sentence); **reader with slips**: the same, each answer flipped with probability 0.1;
* **overlap-leaning reader**: in a summary rated r, the (1 - r) share of its sentences that share the fewest
  words with the article are "No" (the gold where known), each answer flipped with probability 0.1: answers
  that correlate with the overlap strongly, but not deterministically.

Page rules: "No" under an overlap threshold (0.5 to 0.9), the 0.7 rule with 3% and 5% of its answers flipped
at random, "No" to sentences over 25 words, "No" to every sentence after a summary's first.

    DJANGO_SETTINGS_MODULE=factlab.settings .venv/bin/python -m benchmarks.predictable_answers [--frank ../shared/data/frank]
        [--workers 300] [--items 30] [--seed 0]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _lines(value) -> list[str]:
    """FRANK's ``*_lines`` fields: a list, or a list written as a Python literal."""
    return list(value) if isinstance(value, list) else ast.literal_eval(value)


def load_frank(frank_dir: Path) -> list[list[dict]]:
    """FRANK's articles as items: per article, its rated summaries' sentences with their page features, the
    summary's rating and gold (True / False / None)."""
    from annotate.services.control_items import sentence_page_features

    records = json.loads((frank_dir / "human_annotations.json").read_text(encoding="utf-8"))
    by_hash: dict[str, list[dict]] = {}
    for record in records:
        by_hash.setdefault(record["hash"], []).append(record)
    items = []
    for article_hash, rated in sorted(by_hash.items()):
        article = json.loads((frank_dir / "articles" / f"{article_hash}.json").read_text(encoding="utf-8"))
        article_lines = _lines(article["article_lines"])
        summaries = []
        for record in rated:
            lines = article.get(f"{record['model_name']}_lines")
            if not lines:
                continue
            sentences = [s for s in _lines(lines) if s.strip()]
            if not sentences:
                continue
            factuality = float(record["Factuality"])
            gold = True if factuality == 1.0 else False if factuality == 0.0 else None
            features = sentence_page_features(sentences, article_lines)
            summaries.append({
                "rating": factuality, "gold": gold, "dataset": record["dataset"],
                "features": [(overlap, words, index, len(sentences)) for index, (overlap, words) in enumerate(features)],
            })
        if summaries:
            items.append(summaries)
    return items


def _flip(answer: bool, rng: random.Random, rate: float) -> bool:
    return (not answer) if rng.random() < rate else answer


def honest_workers() -> dict[str, Callable[[dict, int, random.Random], bool]]:
    def gold_follower(summary, index, rng):
        return summary["gold"] if summary["gold"] is not None else True

    def reader(summary, index, rng):
        return summary["gold"] if summary["gold"] is not None else rng.random() >= 1 - summary["rating"]

    def reader_with_slips(summary, index, rng):
        return _flip(reader(summary, index, rng), rng, 0.1)

    def overlap_leaning(summary, index, rng):
        if summary["gold"] is not None:
            return _flip(summary["gold"], rng, 0.1)
        n = len(summary["features"])
        wrong = round((1 - summary["rating"]) * n)
        lowest = sorted(range(n), key=lambda i: summary["features"][i][0])[:wrong]
        return _flip(index not in lowest, rng, 0.1)

    return {"gold follower": gold_follower, "FRANK reader": reader, "reader with slips (10%)": reader_with_slips,
            "overlap-leaning reader (10% slips)": overlap_leaning}


def page_rules() -> dict[str, Callable[[dict, int, random.Random], bool]]:
    rules = {}
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9):
        rules[f"overlap rule (< {threshold}: No)"] = lambda s, i, rng, t=threshold: s["features"][i][0] >= t
    for rate in (0.03, 0.05):
        rules[f"overlap rule 0.7, {rate:.0%} flipped"] = lambda s, i, rng, r=rate: _flip(s["features"][i][0] >= 0.7, rng, r)
    rules["long sentence rule (> 25 words: No)"] = lambda s, i, rng: s["features"][i][1] <= 25
    rules["first sentence rule (later: No)"] = lambda s, i, rng: i == 0
    return rules


def held_after(items: list[list[dict]], answer, order: list[int], rng: random.Random) -> int | None:
    """The item after which the worker's pay is held (1-based), None when it never is."""
    from annotate.services.predictable_answers import (
        RECENT_ITEMS,
        Answer,
        predictable_evidence,
    )

    history: list[list] = []
    for n, item_index in enumerate(order, 1):
        history.append([Answer(answer(s, i, rng), features, s["gold"]) for s in items[item_index] for i, features in enumerate(s["features"])])
        if predictable_evidence([a for item in history[-RECENT_ITEMS:] for a in item]) is not None:
            return n
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "frank")
    parser.add_argument("--workers", type=int, default=300, help="simulated workers of each kind")
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    import django

    django.setup()
    from annotate.services.predictable_answers import (
        ALMOST_PERFECT,
        FOLLOWS_RULE_SHARE,
        MIN_ANSWERS_PER_CLASS,
        MIN_CONTRADICTED,
    )

    items = load_frank(args.frank)
    print(f"FRANK: {len(items)} articles; {args.workers} workers of each kind, {args.items} items each; rule: >= {ALMOST_PERFECT} "
          f"balanced accuracy, followed on {FOLLOWS_RULE_SHARE:.0%} of at least {MIN_CONTRADICTED} sentences whose known label it "
          f"contradicts, {MIN_ANSWERS_PER_CLASS} answers of each kind")
    print(f"{'worker':<38} {'held <= 10':>10} {'held <= 30':>10} {'median item':>11}")
    for group in (honest_workers(), page_rules()):
        for name, answer in group.items():
            held = []
            for w in range(args.workers):
                rng = random.Random(f"{args.seed}:{name}:{w}")
                order = rng.sample(range(len(items)), args.items)
                held.append(held_after(items, answer, order, rng))
            caught = sorted(h for h in held if h is not None)
            within_10 = sum(h <= 10 for h in caught) / args.workers
            median = caught[len(caught) // 2] if caught else "-"
            print(f"{name:<38} {within_10:>10.1%} {len(caught) / args.workers:>10.1%} {median:>11}")


if __name__ == "__main__":
    main()
