"""The BUMP error taxonomy (Ma et al., ACL 2023), as data.

Pure Python (no Django). Seven error types an editor may be asked to introduce, plus ``Other`` which only
a reviewer may assign. The examples are the Ebola/FDA edits of BUMP's annotation instructions.
"""
from __future__ import annotations

from dataclasses import dataclass

EXAMPLE_ARTICLE = (
    "The Food and Drug Administration (FDA) approved the first Ebola vaccine on Thursday, the agency said in a "
    "statement. The vaccine, made by Merck, was tested during the 2014 outbreak in Guinea, where it protected "
    "ring-vaccinated contacts of patients. Dr. Peter Marks, director of the FDA's biologics centre, said the "
    "approval was an important step in fighting the disease in Africa."
)
EXAMPLE_REFERENCE = "The FDA approved the first Ebola vaccine, made by Merck, on Thursday."


@dataclass(frozen=True)
class ErrorType:
    code: str
    name: str
    intrinsic: bool | None  # None for types without the intrinsic/extrinsic distinction
    family: str  # Predicate, Entity, Circumstance, Coreference, Other
    description: str
    example_edit: str
    explanation: str


_EXTRINSIC = "The wrong information is neither explicitly nor implicitly in the article."
_INTRINSIC = "The wrong information is taken from elsewhere in the article (it misrepresents the article)."

TYPES: tuple[ErrorType, ...] = (
    ErrorType(
        "intrinsic_predicate", "Intrinsic Predicate Error", True, "Predicate",
        "The main predicate of a statement is changed to one that appears in the article but does not hold. " + _INTRINSIC,
        "The FDA tested the first Ebola vaccine, made by Merck, on Thursday.",
        "'tested' appears in the article, but the FDA approved the vaccine; Merck's vaccine was tested in Guinea.",
    ),
    ErrorType(
        "extrinsic_predicate", "Extrinsic Predicate Error", False, "Predicate",
        "The main predicate is changed to one that the article does not support. " + _EXTRINSIC,
        "The FDA rejected the first Ebola vaccine, made by Merck, on Thursday.",
        "Nothing in the article says the vaccine was rejected.",
    ),
    ErrorType(
        "intrinsic_entity", "Intrinsic Entity Error", True, "Entity",
        "A subject or object entity is replaced by another entity from the article. " + _INTRINSIC,
        "The FDA approved the first Ebola vaccine, made by Peter Marks, on Thursday.",
        "Peter Marks is in the article, but he did not make the vaccine.",
    ),
    ErrorType(
        "extrinsic_entity", "Extrinsic Entity Error", False, "Entity",
        "A subject or object entity is replaced by one not in the article. " + _EXTRINSIC,
        "The FDA approved the first Ebola vaccine, made by Pfizer, on Thursday.",
        "Pfizer is not mentioned anywhere in the article.",
    ),
    ErrorType(
        "intrinsic_circumstance", "Intrinsic Circumstance Error", True, "Circumstance",
        "The time, duration or location of an event is replaced by one from the article (changing the quantity of a "
        "noun is not a circumstance error). " + _INTRINSIC,
        "The FDA approved the first Ebola vaccine, made by Merck, in 2014.",
        "2014 is in the article, but it is when the vaccine was tested, not when it was approved.",
    ),
    ErrorType(
        "extrinsic_circumstance", "Extrinsic Circumstance Error", False, "Circumstance",
        "The time, duration or location of an event is replaced by one not in the article (changing the quantity of "
        "a noun is not a circumstance error). " + _EXTRINSIC,
        "The FDA approved the first Ebola vaccine, made by Merck, on Monday.",
        "Monday is not mentioned in the article.",
    ),
    ErrorType(
        "coreference", "Coreference Error", None, "Coreference",
        "A pronoun or other reference is changed so that it refers to the wrong entity or to none.",
        "The FDA approved the first Ebola vaccine, made by Merck. She said it happened on Thursday.",
        "'She' has no antecedent in the summary.",
    ),
    ErrorType(
        "other", "Other", None, "Other",
        "For reviewers only: the edit introduces an error that fits none of the seven types.",
        "The FDA approved the first Ebola vaccine, which cures all diseases.",
        "Used when reviewing edits, never requested from an editor.",
    ),
)

BY_CODE: dict[str, ErrorType] = {t.code: t for t in TYPES}
BY_NAME: dict[str, ErrorType] = {t.name.lower(): t for t in TYPES}
REQUESTABLE: tuple[ErrorType, ...] = tuple(t for t in TYPES if t.code != "other")
CODES: tuple[str, ...] = tuple(t.code for t in TYPES)


def normalize(raw: str) -> str:
    """Return the taxonomy code for a code or a name as written in BUMP's files.

    BUMP's Task 1 files write "Extrinsic Entity Error", Task 2 files "Extrinsic Entity"; both map to
    ``extrinsic_entity``. Raises ``ValueError`` listing the valid names for anything else.
    """
    text = (raw or "").strip()
    if text in BY_CODE:
        return text
    key = text.lower()
    if key in BY_NAME:
        return BY_NAME[key].code
    if key + " error" in BY_NAME:
        return BY_NAME[key + " error"].code
    raise ValueError(f"unknown BUMP error type {raw!r}; expected one of: " + "; ".join(t.name for t in TYPES))


def display_name(code: str) -> str:
    return BY_CODE[code].name
