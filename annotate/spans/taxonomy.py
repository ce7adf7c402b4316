"""The span task's error types: AggreFact's unified taxonomy, with the words a worker reads, and the type names
released span annotations use (read by the importer). A plain data module."""
from __future__ import annotations

import re
from dataclasses import dataclass

from taxonomies.frank import CODES as FRANK_CODES
from taxonomies.unified import (
    ENTIRE_SENTENCE,
    EXTRINSIC_NP,
    EXTRINSIC_PREDICATE,
    INTRINSIC_NP,
    INTRINSIC_PREDICATE,
    LABELS,
    frank_to_unified,
)


@dataclass(frozen=True)
class ErrorType:
    code: str
    name: str
    definition: str
    example: str


#: Definitions and examples in the project's words (article: "The council approved the new bridge on Monday
#: after a two-hour debate. Mayor Ann Ruiz voted against it.").
TYPES: tuple[ErrorType, ...] = (
    ErrorType(INTRINSIC_NP, LABELS[INTRINSIC_NP],
              "A noun phrase (a name, number, date, place, thing) that appears in the article but is used wrongly here.",
              "“Mayor Ann Ruiz approved the bridge” — Ruiz is in the article, but she voted against it: mark “Mayor Ann Ruiz”."),
    ErrorType(EXTRINSIC_NP, LABELS[EXTRINSIC_NP],
              "A noun phrase that the article does not mention at all: it cannot be checked against the article.",
              "“The council approved the bridge on Friday” — no Friday in the article: mark “Friday”."),
    ErrorType(INTRINSIC_PREDICATE, LABELS[INTRINSIC_PREDICATE],
              "A verb or relation taken from the article but attached to the wrong participants or meaning.",
              "“The council debated Ann Ruiz for two hours” — the article has a debate, but not about Ruiz: mark “debated”."),
    ErrorType(EXTRINSIC_PREDICATE, LABELS[EXTRINSIC_PREDICATE],
              "A verb or relation the article does not support at all.",
              "“The council cancelled the new bridge” — nothing in the article says it was cancelled: mark “cancelled”."),
    ErrorType(ENTIRE_SENTENCE, LABELS[ENTIRE_SENTENCE],
              "The whole sentence is unsupported or contradicts the article, so no smaller part can be singled out.",
              "“Residents celebrated with fireworks all night.” — none of it is in the article: mark the whole sentence."),
)
BY_CODE = {t.code: t for t in TYPES}
CODES: tuple[str, ...] = tuple(t.code for t in TYPES)

_SPACES = re.compile(r"[\s_\-/]+")
#: Type names of released span annotations (Goyal & Durrett 2021's entity/event wording, CLIFF's and the
#: unified wording with any spacing, case, hyphens or underscores) -> unified type.
ALIASES: dict[str, str] = {
    **{_SPACES.sub(" ", code): code for code in CODES},
    "intrinsic np": INTRINSIC_NP, "intrinsic noun phrase": INTRINSIC_NP, "intrinsic entity": INTRINSIC_NP,
    "extrinsic np": EXTRINSIC_NP, "extrinsic noun phrase": EXTRINSIC_NP, "extrinsic entity": EXTRINSIC_NP,
    "intrinsic event": INTRINSIC_PREDICATE, "intrinsic relation": INTRINSIC_PREDICATE, "intrinsic verb": INTRINSIC_PREDICATE,
    "extrinsic event": EXTRINSIC_PREDICATE, "extrinsic relation": EXTRINSIC_PREDICATE, "extrinsic verb": EXTRINSIC_PREDICATE,
    "sentence": ENTIRE_SENTENCE, "whole sentence": ENTIRE_SENTENCE, "entire sent": ENTIRE_SENTENCE,
}


def normalize(name: str) -> str:
    """The unified type of a released type name or a FRANK category; ``ValueError`` naming the accepted names.

    Examples
    --------
    >>> normalize("Extrinsic-NP"), normalize("intrinsic event"), normalize("EntE")
    ('extrinsic_np', 'intrinsic_predicate', 'extrinsic_np')
    """
    key = _SPACES.sub(" ", str(name).strip().lower())
    if key in ALIASES:
        return ALIASES[key]
    try:
        return frank_to_unified(str(name).strip())
    except (KeyError, ValueError):
        pass
    raise ValueError(f"unknown error type {name!r}; expected one of {', '.join(CODES)} (or a FRANK category: {', '.join(FRANK_CODES)})")
