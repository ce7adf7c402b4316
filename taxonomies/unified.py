"""AggreFact's unified error types (Tang et al., ACL 2023, Section 4), as data and the rules that assign them.

Each dataset annotates errors in its own typology. AggreFact maps them onto two axes: *intrinsic* (the
wrong information comes from the article) or *extrinsic* (it is not in the article), and *noun phrase*
or *predicate* (where the error sits). FRANK's categories map as the paper states:

=========================  =====================
FRANK category             unified type
=========================  =====================
EntE, OutE                 extrinsic noun phrase
RelE (PredE), GramE        extrinsic predicate
CircE, CorefE              intrinsic noun phrase
LinkE, OtherE              intrinsic predicate
=========================  =====================

BUMP's types carry the intrinsic/extrinsic distinction themselves, so only the constituent is decided here:

* ``intrinsic_entity`` / ``extrinsic_entity``: noun phrase (the entity is one), intrinsic/extrinsic as BUMP says;
* ``intrinsic_predicate`` / ``extrinsic_predicate``: predicate, as BUMP says;
* ``intrinsic_circumstance`` / ``extrinsic_circumstance``: noun phrase (a time, duration or location
  phrase), keeping BUMP's own intrinsic/extrinsic label rather than FRANK's blanket "CircE is intrinsic";
* ``coreference``: intrinsic noun phrase, as FRANK's CorefE (a pronoun pointing at the wrong entity);
* ``other``: intrinsic predicate, as FRANK's OtherE.

**As the paper does it** (:func:`annotator_types`; the statistics' frame is
``metrics_service.stats.unified_taxonomy.unified_frame_from_judgements``): from per-annotator judgements, a summary has a
type when *more than one annotator* marked an error of that type in it. FRANK's sentence annotations have no
"entire sentence" type (the paper says so), so none is derived from them. AggreFact types FRANK's CNN/DM part
only (its XSum summaries are typed from XSumFaith): :data:`PAPER_CORPORA` is the default corpus choice where
the types come from FRANK's release, others are an option.

**Approximation** (``metrics_service.stats.unified_taxonomy.unified_frame``): from FRANK's released *summary-level* category scores alone (no
per-annotator judgements), a summary has a type when one of its categories scores below 1 (some sentence was
labelled with it). This counts a category one annotator's majority gave, not "more than one annotator", so the
report names it an approximation. The platform's earlier "entire sentence" rule (no factual sentence and errors
on both a noun phrase and a predicate) is an option (``entire_sentence=True``), off by default. A summary
labelled inconsistent without any category (a binary benchmark, a yes/no crowd task) is *untyped*: it counts as
incorrect but enters no type.

Plain Python: no Django, nothing of ``annotate`` or ``metrics_service`` (both read the types from here).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from taxonomies import bump as bump_taxonomy
from taxonomies.frank import normalize_code

if TYPE_CHECKING:  # pragma: no cover - a table is read, not built: the span protocol imports this at start
    import pandas as pd

INTRINSIC_NP = "intrinsic_np"
INTRINSIC_PREDICATE = "intrinsic_predicate"
EXTRINSIC_NP = "extrinsic_np"
EXTRINSIC_PREDICATE = "extrinsic_predicate"
ENTIRE_SENTENCE = "entire_sentence"
CONSTITUENT_TYPES: tuple[str, ...] = (INTRINSIC_NP, INTRINSIC_PREDICATE, EXTRINSIC_NP, EXTRINSIC_PREDICATE)
UNIFIED_TYPES: tuple[str, ...] = (*CONSTITUENT_TYPES, ENTIRE_SENTENCE)
LABELS: dict[str, str] = {
    INTRINSIC_NP: "Intrinsic noun phrase",
    INTRINSIC_PREDICATE: "Intrinsic predicate",
    EXTRINSIC_NP: "Extrinsic noun phrase",
    EXTRINSIC_PREDICATE: "Extrinsic predicate",
    ENTIRE_SENTENCE: "Entire sentence",
}
#: "a type when more than one annotator marked it"
MIN_ANNOTATORS = 2
#: The corpora AggreFact types from FRANK's annotations (its XSum summaries are typed from XSumFaith).
PAPER_CORPORA: tuple[str, ...] = ("cnndm",)
NOUN_PHRASE = frozenset({INTRINSIC_NP, EXTRINSIC_NP})
PREDICATE = frozenset({INTRINSIC_PREDICATE, EXTRINSIC_PREDICATE})

FRANK_TO_UNIFIED: dict[str, str] = {
    "EntE": EXTRINSIC_NP,
    "OutE": EXTRINSIC_NP,
    "RelE": EXTRINSIC_PREDICATE,
    "GramE": EXTRINSIC_PREDICATE,
    "CircE": INTRINSIC_NP,
    "CorefE": INTRINSIC_NP,
    "LinkE": INTRINSIC_PREDICATE,
    "OtherE": INTRINSIC_PREDICATE,
}
BUMP_TO_UNIFIED: dict[str, str] = {
    "intrinsic_entity": INTRINSIC_NP,
    "extrinsic_entity": EXTRINSIC_NP,
    "intrinsic_predicate": INTRINSIC_PREDICATE,
    "extrinsic_predicate": EXTRINSIC_PREDICATE,
    "intrinsic_circumstance": INTRINSIC_NP,
    "extrinsic_circumstance": EXTRINSIC_NP,
    "coreference": INTRINSIC_NP,
    "other": INTRINSIC_PREDICATE,
}


def frank_to_unified(code: str) -> str:
    """The unified type of a FRANK category code or alias (``PredE`` is ``RelE``); ``ValueError`` if unknown."""
    return FRANK_TO_UNIFIED[normalize_code(code)]


def bump_to_unified(code: str) -> str:
    """The unified type of a BUMP error type (code or name as in BUMP's files); ``ValueError`` if unknown."""
    return BUMP_TO_UNIFIED[bump_taxonomy.normalize(code)]


def summary_types(
    codes: Iterable[str], factuality: float | None, *, protocol: str = "frank", entire_sentence: bool = False,
) -> tuple[str, ...]:
    """The unified types of one summary from the error codes found in it and its human factuality.

    ``codes``: FRANK categories (``protocol="frank"``) or BUMP types (``"bump"``) present in the summary.
    Returns ``()`` for a factual or untyped summary, else its constituent types in ``CONSTITUENT_TYPES`` order.
    With ``entire_sentence`` (the platform's option, not the paper's), a summary wrong as a whole (factuality 0,
    errors on both a noun phrase and a predicate) is ``("entire_sentence",)`` instead.

    Examples
    --------
    >>> summary_types(["EntE", "RelE"], 0.0)
    ('extrinsic_np', 'extrinsic_predicate')
    >>> summary_types(["EntE", "RelE"], 0.0, entire_sentence=True)
    ('entire_sentence',)
    """
    convert = frank_to_unified if protocol == "frank" else bump_to_unified
    found = {convert(code) for code in codes}
    if not found or factuality is None or factuality >= 1:
        return ()
    if entire_sentence and factuality <= 0 and found & NOUN_PHRASE and found & PREDICATE:
        return (ENTIRE_SENTENCE,)
    return tuple(t for t in CONSTITUENT_TYPES if t in found)


def annotator_types(judgements: pd.DataFrame, *, min_annotators: int = MIN_ANNOTATORS) -> dict[int, tuple[str, ...]]:
    """Per summary id, the unified types that at least ``min_annotators`` distinct annotators marked in it.

    ``judgements``: one row per (summary sentence, annotator) with ``summary_id``, ``worker_id`` and
    ``categories`` (FRANK codes). An annotator marks a type in a summary when any of their sentence answers
    carries a category of that type.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"summary_id": [1, 1, 1, 1], "worker_id": [7, 8, 9, 9], "sentence_index": [0, 0, 0, 1],
    ...                      "categories": [["EntE"], ["OutE"], ["RelE"], ["RelE"]]})
    >>> annotator_types(rows)
    {1: ('extrinsic_np',)}
    """
    marked: dict[int, dict[str, set]] = {}
    for summary_id, worker_id, categories in judgements[["summary_id", "worker_id", "categories"]].itertuples(index=False):
        for code in categories or ():
            try:
                unified = frank_to_unified(code)
            except (KeyError, ValueError):
                continue
            marked.setdefault(int(summary_id), {}).setdefault(unified, set()).add(worker_id)
    out = {}
    for summary_id, by_type in marked.items():
        types = tuple(t for t in CONSTITUENT_TYPES if len(by_type.get(t, ())) >= min_annotators)
        if types:
            out[summary_id] = types
    return out


def type_counts(codes: Iterable[str], *, protocol: str = "bump") -> dict[str, int]:
    """How many of the given error codes (one per pair or per error) fall in each constituent type."""
    convert = frank_to_unified if protocol == "frank" else bump_to_unified
    converted = [convert(c) for c in codes]
    return {t: sum(c == t for c in converted) for t in CONSTITUENT_TYPES}
