"""FRANK's gold from imported data: what a summary's human scores say about each of its sentences.

A summary with FRANK ``Factuality`` 1.0 is factual in every sentence, 0.0 erroneous in every sentence; a
one-sentence erroneous summary also gets its error category when the per-category scores name exactly one.
Other scores (a share of sentences) do not say which sentences are wrong, so they give no gold.
"""
from __future__ import annotations

from collections.abc import Mapping

from annotate.models import Campaign
from annotate.services.gold import SentenceGoldRows
from annotate.services.overlap import summary_sentences
from taxonomies.frank import CODES


def frank_category(scores: Mapping[str, object]) -> str:
    """The one error category a one-sentence FRANK summary's per-category scores name ('' if none or several):
    a category code scored below 1, or ``Other`` (FRANK's ``OtherE``). ``Flip_*`` and the groups are not codes.

    Examples
    --------
    >>> frank_category({"Factuality": 0.0, "EntE": 0.0, "OutE": 1.0})
    'EntE'
    >>> frank_category({"Factuality": 0.0, "EntE": 0.0, "OutE": 0.0})
    ''
    >>> frank_category({"Factuality": 0.0, "Other": 0.0})
    'OtherE'
    """
    named = [code for code in CODES if isinstance(scores.get(code), (int, float)) and scores[code] < 1.0]
    named += ["OtherE"] if isinstance(scores.get("Other"), (int, float)) and scores["Other"] < 1.0 else []
    return named[0] if len(set(named)) == 1 else ""


def import_frank_gold(campaign: Campaign) -> int:
    """Store the gold that imported FRANK human scores imply (module docstring); returns how many were added."""
    rows = SentenceGoldRows(campaign)
    for summary in rows.summaries:
        scores = summary.human_scores or {}
        factuality = scores.get("Factuality")
        if factuality not in (0, 1) or isinstance(factuality, bool):
            continue
        sentences = summary_sentences(summary)
        category = frank_category(scores) if len(sentences) == 1 and factuality == 0 else ""
        for index in range(len(sentences)):
            rows.add(summary.pk, index, factuality == 1, category, f"imported human score Factuality {factuality:g}")
    return rows.store()
