"""BUMP's gold: what its minimal pairs say about the sentences of an edited summary.

A BUMP edit changes a reference summary's sentences to introduce an error, and leaves the rest as they were:
an accepted edit's changed sentences are erroneous (its error type in the note), its unchanged sentences and
a BUMP reference's sentences factual. Accepted edits come from imported BUMP data (its authors accepted them)
and from this platform's expert review (never public: decided here).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from annotate.bump.models import Edit
from annotate.models import Campaign, ReviewStatus
from annotate.services.gold import SentenceGoldRows
from annotate.services.overlap import summary_sentences


def changed_sentences(source: Sequence[str], edited: Sequence[str]) -> list[bool]:
    """Per sentence of ``edited``: True when it is not one of the ``source`` sentences (an edit's change), each
    source sentence matching once.

    Examples
    --------
    >>> changed_sentences(["A won.", "B lost."], ["A won.", "C lost."])
    [False, True]
    >>> changed_sentences(["A won."], ["A won.", "A won."])
    [False, True]
    """
    kept = Counter(s.strip() for s in source)
    changed = []
    for sentence in edited:
        key = sentence.strip()
        if kept[key] > 0:
            kept[key] -= 1
            changed.append(False)
        else:
            changed.append(True)
    return changed


def import_bump_gold(campaign: Campaign) -> int:
    """Store the gold that BUMP pairs and references in the campaign imply, then that of edits accepted (or
    type-corrected) in this platform's review; returns how many were added."""
    rows = SentenceGoldRows(campaign)
    for summary in rows.summaries:
        sentences = summary_sentences(summary)
        if summary.edited_from_id is not None and (summary.metadata or {}).get("bump") is not None:
            # An imported BUMP pair: the data set holds edits its authors accepted.
            error_type = summary.corrected_error_type or summary.requested_error_type
            for index, changed in enumerate(changed_sentences(summary_sentences(summary.edited_from), sentences)):
                rows.add(summary.pk, index, not changed, "",
                         f"accepted BUMP edit ({error_type or 'free edit'})" if changed else "sentence unchanged by a BUMP edit")
        elif summary.is_reference and (summary.document.metadata or {}).get("source") == "bump":
            for index in range(len(sentences)):
                rows.add(summary.pk, index, True, "", "BUMP reference summary")
    for edit in Edit.objects.filter(
        source_summary__document__campaign=campaign, review_status__in=(ReviewStatus.ACCEPTED, ReviewStatus.CORRECTED),
        is_not_applicable=False, edited_summary__isnull=False,
    ).select_related("edited_summary", "source_summary"):
        error_type = edit.corrected_error_type or edit.requested_error_type
        changed_rows = changed_sentences(summary_sentences(edit.source_summary), summary_sentences(edit.edited_summary))
        for index, changed in enumerate(changed_rows):
            rows.add(edit.edited_summary_id, index, not changed, "", f"BUMP edit accepted in review ({error_type or 'free edit'})",
                     reviewed_here=True)
    return rows.store()
