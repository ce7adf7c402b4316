"""Can a script spot error traps by their fluency alone? A word-order rule on FRANK, before and after.

The rule is what a page-reading script can do without understanding the article: a word-bigram model of
news prose (words seen fewer than ``MIN_COUNT`` times become ``<w>`` or ``<num>``, add-k smoothing) scores
each sentence by its mean surprisal per bigram, and a sentence scoring above what all but ``FALSE_ALARMS``
of genuine summary sentences score is called disfluent ("kilmarnock season gets the duties first", "has not
n't been"). The prose is the article sentences, and the threshold comes from the genuine summary sentences,
of the other half of FRANK (two folds by article): nothing is judged with its own article's counts.

``before``: the error traps FRANK's files ship (F1 negation, F4 other article, F5 word salad, F6 pronoun
swap). ``after``: the error traps the product shows for the same articles: the shipped ones it keeps
(:func:`annotate.frank.traps.spotted` retires the others) and the fluent replacements
(:func:`annotate.frank.traps.replacement_traps`). Every text is detokenised as the page shows it.

    DJANGO_SETTINGS_MODULE=factlab.settings .venv/bin/python -m benchmarks.trap_fluency [--frank DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.trap_style_auc import default_frank_dir, load_articles

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d[\d,.]*|[^\w\s]")
START, END = "<s>", "</s>"
MIN_COUNT = 3
FALSE_ALARMS = 0.05
SMOOTHING = 0.01


def tokens(sentence: str) -> list[str]:
    """Lower-cased words, numbers and punctuation marks.

    Examples
    --------
    >>> tokens("The mayor’s 3 seats.")
    ['the', "mayor's", '3', 'seats', '.']
    """
    return _TOKEN.findall(sentence.lower().replace("’", "'"))


def word_classes(sentence: str, vocabulary: Iterable[str]) -> list[str]:
    """The sentence's tokens between sentence marks, a token outside ``vocabulary`` as ``<w>`` or ``<num>``.

    Examples
    --------
    >>> word_classes("The mayor won 3 seats.", {"the", "won", "."})
    ['<s>', 'the', '<w>', 'won', '<num>', '<w>', '.', '</s>']
    """
    words = set(vocabulary)
    inner = [t if t in words else ("<num>" if t[0].isdigit() else "<w>") for t in tokens(sentence)]
    return [START, *inner, END]


@dataclass(frozen=True)
class FluencyRule:
    vocabulary: frozenset[str]
    bigrams: Counter
    contexts: Counter

    @classmethod
    def learn(cls, prose: Iterable[str]) -> FluencyRule:
        """The bigram model of ``prose``.

        Examples
        --------
        >>> rule = FluencyRule.learn(["The mayor won the vote.", "The mayor lost the vote."] * 3)
        >>> rule.surprisal("The mayor lost the vote.") < rule.surprisal("Vote the lost mayor the.")
        True
        """
        prose = list(prose)
        counts = Counter(t for s in prose for t in tokens(s))
        vocabulary = frozenset(w for w, n in counts.items() if n >= MIN_COUNT)
        bigrams: Counter = Counter()
        contexts: Counter = Counter()
        for sentence in prose:
            classes = word_classes(sentence, vocabulary)
            bigrams.update(zip(classes, classes[1:]))
            contexts.update(classes[:-1])
        return cls(vocabulary, bigrams, contexts)

    def surprisal(self, sentence: str) -> float:
        """Mean negative log probability of the sentence's bigrams (higher: less like the prose)."""
        classes = word_classes(sentence, self.vocabulary)
        size = len(self.vocabulary) + 3
        logs = [
            math.log((self.bigrams[(a, b)] + SMOOTHING) / (self.contexts[a] + SMOOTHING * size)) for a, b in zip(classes, classes[1:])
        ]
        return -sum(logs) / len(logs)


def threshold_for(genuine: Sequence[float], false_alarms: float = FALSE_ALARMS) -> float:
    """The surprisal that all but ``false_alarms`` of the genuine sentences' scores stay at or under.

    Examples
    --------
    >>> threshold_for([float(x) for x in range(100)], 0.05)
    95.0
    """
    scores = sorted(genuine)
    return scores[min(len(scores) - 1, int((1 - false_alarms) * len(scores)))]


def corpus_sets(articles, seed: int = 0) -> list[dict[str, list[str]]]:
    """Per article: its prose (article sentences), the error traps before and after, and its genuine
    summary sentences, all as the page shows them (detokenised)."""
    from annotate.frank.traps import replacement_traps, spotted
    from annotate.presentation import detokenize

    out = []
    for _, article, models in articles:
        lines = [s for s in article.get("article_lines") or [] if s.strip()]
        shipped = [(code, text) for code, text in article.get("traps") or []]
        before = [text for code, text in shipped if code != "F0"]
        kept = [(code, text) for code, text in shipped if code != "F0" and not spotted(code, text)]
        # The article's text too, as the platform passes it: its whole parse gives the entity swaps their names.
        fresh = (replacement_traps({code for code, _ in kept}, lines, random.Random(seed), article.get("article"))
                 if len(kept) < len(before) else {})
        after = [text for _, text in kept] + list(fresh.values())
        summaries = [s for m in models for s in article.get(f"{m}_lines") or [] if s.strip()]
        out.append({
            "prose": [detokenize(s) for s in lines],
            "before": [detokenize(s) for s in before],
            "word_salad": [detokenize(text) for code, text in shipped if code == "F5"],
            "after": [detokenize(s) for s in after],
            "genuine": [detokenize(s) for s in summaries],
        })
    return out


def measure(sets: Sequence[dict[str, list[str]]], false_alarms: float = FALSE_ALARMS) -> dict[str, float]:
    """Shares the rule spots when it may flag ``false_alarms`` of the genuine summary sentences. Every
    sentence is scored by the bigram model of the other half's prose (two folds by article)."""
    scores: dict[str, list[float]] = {key: [] for key in ("before", "word_salad", "after", "genuine")}
    for fold in (0, 1):
        rule = FluencyRule.learn(s for i, a in enumerate(sets) if i % 2 != fold for s in a["prose"])
        for a in (a for i, a in enumerate(sets) if i % 2 == fold):
            for key, values in scores.items():
                values.extend(rule.surprisal(s) for s in a[key])
    threshold = threshold_for(scores["genuine"], false_alarms)
    result = {f"{key}_spotted": sum(v > threshold for v in values) / max(len(values), 1) for key, values in scores.items()}
    result.update({f"{key}_n": float(len(values)) for key, values in scores.items()})
    return result


def main(argv: Sequence[str] | None = None) -> None:
    import django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=default_frank_dir())
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    django.setup()
    r = measure(corpus_sets(load_articles(args.frank, args.limit)))
    print(
        f"error traps the fluency rule spots: before {r['before_spotted']:.1%} of {r['before_n']:.0f} (word salad "
        f"{r['word_salad_spotted']:.1%} of {r['word_salad_n']:.0f}), "
        f"after {r['after_spotted']:.1%} of {r['after_n']:.0f}; genuine summary sentences it flags: "
        f"{r['genuine_spotted']:.1%} of {r['genuine_n']:.0f}"
    )


if __name__ == "__main__":
    main()
