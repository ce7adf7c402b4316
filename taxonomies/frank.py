"""The FRANK typology of factual errors (Pagnoni et al., NAACL 2021), as data.

Pure Python (no Django): forms, importers, exports and statistics all read the categories from here.
Each category has the code used in FRANK's data files, the name from the paper, the wording shown to
annotators, the group used in FRANK's ablations, a description and a worked example.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCategory:
    code: str
    name: str
    annotator_label: str
    group: str
    description: str
    example_article: str
    example_sentence: str
    explanation: str


SEMANTIC_FRAME = "Semantic_Frame_Errors"
DISCOURSE = "Discourse_Errors"
CONTENT_VERIFIABILITY = "Content_Verifiability_Errors"

_EXAMPLE_ARTICLE = (
    "Lopez, 33, scored twice as Paris beat Lyon 3-1 on Sunday. The striker joined the club from Madrid in 2019. "
    "After the match, coach Anne Dupont said the team had finally found its rhythm."
)

CATEGORIES: tuple[ErrorCategory, ...] = (
    ErrorCategory(
        "RelE", "Relation error (predicate error)", "Wrong relationship between entities", SEMANTIC_FRAME,
        "The predicate (usually the main verb) of the statement is not consistent with the article.",
        _EXAMPLE_ARTICLE, "Lopez missed twice as Paris beat Lyon.",
        "The article says Lopez scored, not missed: the relation between Lopez and the goals is wrong.",
    ),
    ErrorCategory(
        "EntE", "Entity error", "Wrong entities in the relation", SEMANTIC_FRAME,
        "The core arguments of the predicate (subject, object, named entities) are wrong.",
        _EXAMPLE_ARTICLE, "Lopez scored twice as Marseille beat Lyon.",
        "It was Paris, not Marseille, that beat Lyon: an entity is wrong.",
    ),
    ErrorCategory(
        "CircE", "Circumstance error", "Wrong circumstance (time, location, manner)", SEMANTIC_FRAME,
        "The time, duration, location or manner of the event is wrong.",
        _EXAMPLE_ARTICLE, "Lopez scored twice as Paris beat Lyon on Saturday.",
        "The match was on Sunday: the circumstance (time) is wrong.",
    ),
    ErrorCategory(
        "CorefE", "Coreference error", "Misuse of pronoun (no or wrong antecedent)", DISCOURSE,
        "A pronoun or reference has a wrong or non-existing antecedent.",
        _EXAMPLE_ARTICLE, "She scored twice as Paris beat Lyon.",
        "This sentence has a coreference error: 'she' has no antecedent (and Lopez is referred to as 'he').",
    ),
    ErrorCategory(
        "LinkE", "Discourse link error", "Wrong relationship between facts (cause, order)", DISCOURSE,
        "Two statements are linked wrongly, e.g. a wrong causal or temporal relation.",
        _EXAMPLE_ARTICLE, "Because Dupont found the team's rhythm, Lopez joined from Madrid.",
        "The article does not say that one caused the other: the link between the facts is wrong.",
    ),
    ErrorCategory(
        "OutE", "Out of article error", "Information not in the article", CONTENT_VERIFIABILITY,
        "The statement contains information that cannot be verified from the article.",
        _EXAMPLE_ARTICLE, "Lopez, who is married with two children, scored twice.",
        "The article says nothing about Lopez's family: the information cannot be verified.",
    ),
    ErrorCategory(
        "GramE", "Grammatical error", "Grammatically meaningless (cannot be understood)", CONTENT_VERIFIABILITY,
        "The sentence is so ungrammatical that its meaning cannot be determined.",
        _EXAMPLE_ARTICLE, "Lopez twice Lyon the scored beat as.",
        "The words are scrambled: the sentence has no meaning that could be checked.",
    ),
    ErrorCategory(
        "OtherE", "Other error", "Other error", "Other",
        "A factual error that fits none of the categories above.",
        _EXAMPLE_ARTICLE, "Lopez scored twice, which is a new world record.",
        "Use this only when no other category describes the error.",
    ),
)

CODES: tuple[str, ...] = tuple(c.code for c in CATEGORIES)
BY_CODE: dict[str, ErrorCategory] = {c.code: c for c in CATEGORIES}
#: The instructions' rule: the one or two categories that describe the error, never every box ticked.
MAX_CATEGORIES_PER_ANSWER = 2
GROUPS: dict[str, tuple[str, ...]] = {
    SEMANTIC_FRAME: ("RelE", "EntE", "CircE"),
    DISCOURSE: ("CorefE", "LinkE"),
    CONTENT_VERIFIABILITY: ("OutE", "GramE"),
}

# FRANK's data files name some categories differently ("Other" for OtherE, "PredE" for RelE in the paper).
ALIASES: dict[str, str] = {"Other": "OtherE", "PredE": "RelE", "OthE": "OtherE"}


def normalize_code(raw: str) -> str:
    """Return the canonical category code for ``raw`` (a code or a known alias).

    Raises ``ValueError`` naming the valid codes when ``raw`` is not a FRANK category.
    """
    code = ALIASES.get(raw, raw)
    if code not in BY_CODE:
        raise ValueError(f"unknown FRANK error category {raw!r}; expected one of {', '.join(CODES)}")
    return code


def data_file_key(code: str) -> str:
    """The key FRANK's ``human_annotations.json`` uses for a category (``OtherE`` is stored as ``Other``)."""
    return "Other" if code == "OtherE" else code


# Trap codes of FRANK's article files and the label a careful annotator gives them.
# (factual, expected category or None)
TRAP_LABELS: dict[str, tuple[bool, str | None]] = {
    "F0": (True, None),  # a copy of an article sentence
    "F1": (False, "RelE"),  # the negation of an article sentence
    "F2": (False, "EntE"),  # a named entity swapped for another of the article's
    "F3": (False, None),  # a number swapped (an entity or a circumstance: the Yes/No only)
    "F4": (False, "OutE"),  # a sentence from another article
    "F5": (False, "GramE"),  # scrambled words
    "F6": (False, "CorefE"),  # a pronoun swap
}
# The FRANK category of an error trap taken from a human BUMP edit, by the edit's BUMP type code. Extrinsic
# errors (wrong information not in the article) fit both their frame category and OutE, and "other" fits
# none: those traps check only the Yes/No, not the category.
CATEGORY_OF_BUMP_TYPE: dict[str, str] = {
    "intrinsic_predicate": "RelE", "intrinsic_entity": "EntE", "intrinsic_circumstance": "CircE", "coreference": "CorefE",
    "extrinsic_predicate": "", "extrinsic_entity": "", "extrinsic_circumstance": "", "other": "",
}
TRAP_DESCRIPTIONS: dict[str, str] = {
    "F0": "copy of an article sentence",
    "F1": "negation of an article sentence",
    "F2": "article sentence with a named entity swapped for another of the article's",
    "F3": "article sentence with a number swapped",
    "F4": "sentence from another article",
    "F5": "word-scrambled sentence",
    "F6": "pronoun swap",
    "B": "changed sentence of a reviewed human BUMP edit of the article",
}
