"""Detectors' error scores per summary word, stored for the report (``WordScores``).

Two ways a scorer scores words:

* **token mode** (a scorer with ``token_scores``, i.e. CoCo): each key token's ``P(y|X) - P(y|X')`` is given to
  the summary word it falls on, negated (a large drop means the article supports the word: not an error);
  words the scorer does not score (CoCo skips punctuation and function words) stay empty;
* **sentence mode** (every other scorer: MiniCheck, AlignScore, an entailment model...): each summary sentence
  is scored as a summary of its own, and every word of it gets that score, turned so that higher means more
  likely wrong (``-direction x score``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction

from annotate.models import Campaign, Summary
from metrics_service.stats.spans import word_tokens

from .models import WordScores
from .words import sentence_bounds, words


def token_mode_scores(summary: str, key_tokens: Sequence[tuple[str, float]]) -> list[float | None]:
    """Word error scores from key tokens given in summary order as ``(text, faithfulness)``; a word with several
    key tokens takes their lowest faithfulness.

    Examples
    --------
    >>> token_mode_scores("Bob's cat sat.", [("Bob", 0.5), ("'s", 0.1), ("sat", -0.2)])
    [-0.1, None, 0.2, None]
    """
    tokens = word_tokens(summary)
    out: list[float | None] = [None] * len(tokens)
    cursor = 0
    for text, value in key_tokens:
        found = summary.find(text, cursor)
        if found < 0:
            continue  # a token the scorer normalised differently: left unscored rather than guessed
        cursor = found + len(text)
        for i, (a, b) in enumerate(tokens):
            if a < cursor and found < b:
                out[i] = -value if out[i] is None else max(out[i], -value)
    return out


def sentence_mode_scores(scorer: Any, output: str, document: str, summary: str) -> list[float]:
    """Every word gets its sentence's score as a summary of its own, oriented so that higher = more likely wrong."""
    word_list = words(summary)
    tokens = word_tokens(summary)
    bounds = sentence_bounds(word_list)
    sentences = [summary[tokens[a][0]:tokens[b - 1][1]] for a, b in bounds]
    values = scorer.score([document] * len(sentences), sentences)[output] if sentences else []
    out = [0.0] * len(word_list)
    for (a, b), value in zip(bounds, values):
        for i in range(a, b):
            out[i] = -scorer.direction * float(value)
    return out


def score_words(campaign: Campaign, detector: str, scorer: Any, *, output: str | None = None,
                summaries: Iterable[Summary] | None = None) -> int:
    """Store ``detector``'s word scores for the campaign's summaries (token mode when the scorer has it, else sentence
    mode on ``output``, default its first); returns how many summaries were scored."""
    rows = list(summaries if summaries is not None else Summary.objects.filter(document__campaign=campaign, span_answers__isnull=False)
                .distinct().select_related("document").order_by("pk"))
    token_mode = hasattr(scorer, "token_scores")
    output = output or scorer.output_names[0]
    computed = []
    for summary in rows:
        if token_mode:
            mask = output.removeprefix("coco_")
            scores = token_mode_scores(summary.text, scorer.token_scores(summary.document.text, summary.text, mask))
        else:
            scores = sentence_mode_scores(scorer, output, summary.document.text, summary.text)
        computed.append((summary, scores))
    with transaction.atomic():
        for summary, scores in computed:
            WordScores.objects.update_or_create(summary=summary, detector=detector, defaults={"scores": scores})
    return len(computed)
