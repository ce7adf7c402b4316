"""Signals of outside help, recorded per item and shown to the admin beside the worker's quality.

The task page reports, with each submission (``signals``), how long it had the focus, how often the worker
left it (tab or window switches), and how many copy and paste events it saw (in a BUMP edit box, the pasted
characters too). The server adds how much there was to read, so the focus time can be set against the
reading time. These are hints for a human reviewer: a worker who reads in another tab or pastes a model's
answer looks like one who looked something up, and so does an honest one who was interrupted. So they are
never a reason to refuse, block or hold anything by themselves; nothing in the pay or quality rules reads them.

A page can report anything, so every value is bounded and a value that is not a number is left out (and
named in ``dropped``): the submission itself is never refused for its signals.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from annotate.models import Assignment, AssignmentStatus, Document, Item, Participation, Summary

#: What the page may report, each a count or seconds, and its largest credible value (an item open a day).
FIELDS: dict[str, float] = {
    "focus_seconds": 86_400.0, "page_seconds": 86_400.0, "tab_switches": 10_000, "copies": 10_000, "pastes": 10_000,
    "pasted_characters": 1_000_000,
}
#: Words an attentive reader reads per minute, to set the focus time against what the page had to read.
READING_WORDS_PER_MINUTE = 250
READING_WORDS_CACHE_SECONDS = 24 * 3600


def clean_signals(raw: Any) -> dict[str, Any]:
    """The page's ``signals`` as stored: known fields as bounded non-negative numbers; others dropped by name."""
    signals: dict[str, Any] = {}
    dropped: list[str] = []
    if raw is None:
        return signals
    if not isinstance(raw, dict):
        return {"dropped": ["signals (not an object)"]}
    for name, value in raw.items():
        limit = FIELDS.get(name)
        if limit is None or isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
            dropped.append(str(name)[:40])
            continue
        signals[name] = round(min(float(value), limit), 2) if name.endswith("seconds") else int(min(value, limit))
    if dropped:
        signals["dropped"] = dropped[:10]
    return signals


def count_reading_words(texts: Iterable[str]) -> int:
    """Words of the texts a page gives to read (split on whitespace).

    Examples
    --------
    >>> count_reading_words(["The council met.", "It approved the budget ."])
    8
    """
    return sum(len(text.split()) for text in texts)


def reading_words(item: Item) -> int:
    """Words the item's page gives to read: the article and the summaries (or the reference to edit).

    Kept in the cache by item (the texts of an imported item do not change): every submission stores it, and
    reading the article and the summaries again for it would be a query of the longest texts there are."""

    def count() -> int:
        summaries = Summary.objects.filter(pk=item.summary_id) if item.summary_id is not None else (
            Summary.objects.filter(document_id=item.document_id, edited_from__isnull=True))
        # The article's text and the summaries' in one query (UNION ALL), each text read once.
        texts = Document.objects.filter(pk=item.document_id).values_list("text", flat=True).union(
            summaries.values_list("text", flat=True), all=True)
        return count_reading_words(texts)

    return cache.get_or_set(f"factlab:reading-words:{item.pk}", count, READING_WORDS_CACHE_SECONDS)


def with_reading_words(assignment: Assignment, signals: dict[str, Any]) -> dict[str, Any]:
    """What a submission stores of its page's signals (as :func:`clean_signals` keeps them): with the item's
    reading words, by the submission's own write (so a replayed submission keeps the first). A protocol whose
    claim counted them from its prepared page keeps them in the layout (``reading_words``): no read then."""
    counted = (assignment.layout or {}).get("reading_words")
    words = counted if isinstance(counted, int) and not isinstance(counted, bool) else reading_words(assignment.item)
    return {**signals, "reading_words": words}


@dataclass(frozen=True)
class Attention:
    """A worker's signals over their submitted items in a campaign (what the control page shows)."""

    items: int
    focus_ratio: float | None  # median over items of focus time / reading time
    tab_switches: int
    copies: int
    pastes: int
    pasted_characters: int

    def describe(self) -> str:
        if not self.items:
            return "no signals reported"
        ratio = f"focus {self.focus_ratio:.2f}× reading time (median)" if self.focus_ratio is not None else "focus not reported"
        pasted = f" ({self.pasted_characters} characters)" if self.pasted_characters else ""
        return (f"{ratio}; {self.tab_switches} tab switches, {self.copies} copies, {self.pastes} pastes{pasted} "
                f"over {self.items} items")


def worker_attention(participation: Participation) -> Attention:
    rows = list(Assignment.objects.filter(
        worker_id=participation.worker_id, item__campaign_id=participation.campaign_id, status=AssignmentStatus.SUBMITTED,
    ).exclude(signals={}).values_list("signals", flat=True))
    ratios = [
        s["focus_seconds"] / (s["reading_words"] * 60 / READING_WORDS_PER_MINUTE)
        for s in rows if "focus_seconds" in s and s.get("reading_words")
    ]
    return Attention(
        items=len(rows), focus_ratio=statistics.median(ratios) if ratios else None,
        tab_switches=sum(s.get("tab_switches", 0) for s in rows), copies=sum(s.get("copies", 0) for s in rows),
        pastes=sum(s.get("pastes", 0) for s in rows), pasted_characters=sum(s.get("pasted_characters", 0) for s in rows),
    )
