"""Qualification material of BUMP campaigns: pools of keyed questions, drawn per worker and attempt by the
shared mechanism (``annotate.qualification_pool``), as FRANK's qualification is. The keys never leave the
server; the worker is told pass or fail only.

* Task 1 (taxonomy): an article, its reference summary and a pool of minimal edits of the reference, each
  introducing one error of a known type. A test shows ``edits_per_type`` random edits of each of the seven
  requestable types, shuffled; the worker names each edit's type.
* Task 2 (free-style): an article and a pool of summary sentences, each accurate or with one error of a known
  type. A test shows ``accurate_per_test`` accurate ones and ``errors_per_type`` of each type, shuffled; the
  worker says whether each is accurate and, if not, names the error's type.

An admin can give a campaign its own pool (``manage.py import_training_material``, :func:`parse_material`;
format in docs/training-material.md). Only :func:`taxonomy_public_view` / :func:`accuracy_public_view`
output is rendered in a page.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from annotate import qualification_pool
from annotate.presentation import present
from annotate.qualification_pool import MaterialError, text_field
from taxonomies import bump as bump_taxonomy

REQUESTABLE_CODES: tuple[str, ...] = tuple(t.code for t in bump_taxonomy.REQUESTABLE)


@dataclass(frozen=True)
class KeyedEdit:
    edited: str
    error_type: str  # taxonomy code (gold)


@dataclass(frozen=True)
class TaxonomyTest:
    article: str
    reference: str
    edits: tuple[KeyedEdit, ...]


@dataclass(frozen=True)
class KeyedSummary:
    summary: str
    error_type: str | None  # None: accurate (gold)


@dataclass(frozen=True)
class AccuracyTest:
    article: str
    summaries: tuple[KeyedSummary, ...]


# ---------------------------------------------------------------- Task 1 default pool

TAXONOMY_ARTICLE = (
    "The Lindqvist Museum in Oslo reopened to visitors on Saturday after a two-year renovation that cost 40 million "
    "kroner. The work added a new wing designed by the architect Tomas Holm. Culture minister Erik Dahl opened the "
    "new wing and praised its bright galleries. The museum's director, Anna Berg, said she expects a million visitors "
    "this year. Dahl said the government would fund a similar project in Bergen next spring. The renovation was "
    "delayed in March by a strike of construction workers. Mayor Ingrid Lund thanked the workers at a ceremony in the "
    "museum garden. Holm, who also designed the concert hall in Bergen, said he had visited the museum as a child. "
    "The first exhibition in the new wing shows paintings by Edvard Munch and runs until December."
)
TAXONOMY_REFERENCE = (
    "Culture minister Erik Dahl opened the new wing of the Lindqvist Museum in Oslo on Saturday . "
    "He praised its bright galleries , designed by architect Tomas Holm . "
    "Museum director Anna Berg said she expects a million visitors this year ."
)


def _edit(old: str, new: str, error_type: str) -> KeyedEdit:
    """The reference with one minimal change (``old`` must occur in it once)."""
    if TAXONOMY_REFERENCE.count(old) != 1:
        raise ValueError(f"{old!r} must occur once in the reference")
    return KeyedEdit(TAXONOMY_REFERENCE.replace(old, new), error_type)


# Five edits of every type: 35 edits, a key of about 85 bits (qualification_pool.pool_key_bits), more than
# FRANK's pool (about 82); a test shows two of each type.
TAXONOMY_POOL: tuple[KeyedEdit, ...] = (
    _edit("Culture minister Erik Dahl", "Mayor Ingrid Lund", "intrinsic_entity"),
    _edit("architect Tomas Holm", "architect Erik Dahl", "intrinsic_entity"),
    _edit("Museum director Anna Berg", "Museum director Ingrid Lund", "intrinsic_entity"),
    _edit("the Lindqvist Museum", "the concert hall", "intrinsic_entity"),
    _edit("architect Tomas Holm", "painter Edvard Munch", "intrinsic_entity"),
    _edit("Erik Dahl opened", "Lars Nilsen opened", "extrinsic_entity"),
    _edit("architect Tomas Holm", "architect Sofia Eriksen", "extrinsic_entity"),
    _edit("Museum director Anna Berg", "Museum director Karin Moe", "extrinsic_entity"),
    _edit("the Lindqvist Museum", "the National Theatre", "extrinsic_entity"),
    _edit("a million visitors", "a million students", "extrinsic_entity"),
    _edit("Erik Dahl opened", "Erik Dahl designed", "intrinsic_predicate"),
    _edit("Erik Dahl opened", "Erik Dahl funded", "intrinsic_predicate"),
    _edit("Erik Dahl opened", "Erik Dahl delayed", "intrinsic_predicate"),
    _edit("she expects a million", "she thanked a million", "intrinsic_predicate"),
    _edit("galleries , designed by", "galleries , visited by", "intrinsic_predicate"),
    _edit("Erik Dahl opened", "Erik Dahl closed", "extrinsic_predicate"),
    _edit("He praised", "He criticised", "extrinsic_predicate"),
    _edit("she expects a million", "she lost a million", "extrinsic_predicate"),
    _edit("galleries , designed by", "galleries , demolished by", "extrinsic_predicate"),
    _edit("Erik Dahl opened", "Erik Dahl sold", "extrinsic_predicate"),
    _edit("in Oslo", "in Bergen", "intrinsic_circumstance"),
    _edit("on Saturday", "in March", "intrinsic_circumstance"),
    _edit("on Saturday", "in December", "intrinsic_circumstance"),
    _edit("visitors this year", "visitors next spring", "intrinsic_circumstance"),
    _edit("visitors this year", "visitors in March", "intrinsic_circumstance"),
    _edit("on Saturday", "on Tuesday", "extrinsic_circumstance"),
    _edit("in Oslo", "in Stockholm", "extrinsic_circumstance"),
    _edit("visitors this year", "visitors this month", "extrinsic_circumstance"),
    _edit("on Saturday", "in 2019", "extrinsic_circumstance"),
    _edit("in Oslo", "in Trondheim", "extrinsic_circumstance"),
    _edit("He praised", "She praised", "coreference"),
    _edit("its bright galleries", "their bright galleries", "coreference"),
    _edit("said she expects", "said he expects", "coreference"),
    _edit("He praised", "They praised", "coreference"),
    _edit("its bright galleries", "her bright galleries", "coreference"),
)
TAXONOMY_EDITS_PER_TYPE = 2

# ---------------------------------------------------------------- Task 2 default pool

ACCURACY_ARTICLE = (
    "Heavy rain flooded the centre of Kirkby on Tuesday night, forcing 150 people from their homes. The river Dun "
    "burst its banks after two days of rain, the Environment Agency said. Firefighters used boats to rescue an "
    "elderly couple from a house on Mill Street. Police closed the main bridge for six hours. Mayor Li Wen opened the "
    "town hall as a shelter and thanked volunteers who brought food. The school on Church Road will stay closed "
    "until Friday. Local shop owner Maria Costa said the water reached her counter in minutes. Forecasters expect "
    "more rain at the weekend."
)
A = KeyedSummary
# Seven accurate sentences and four of every error type: 35 sentences, a key of about 89 bits; a test shows
# four accurate ones and one of each type.
ACCURACY_POOL: tuple[KeyedSummary, ...] = (
    A("Heavy rain flooded the centre of Kirkby on Tuesday night .", None),
    A("150 people were forced from their homes .", None),
    A("Firefighters used boats to rescue an elderly couple .", None),
    A("Police closed the main bridge for six hours .", None),
    A("The town hall was opened as a shelter .", None),
    A("More rain is expected at the weekend .", None),
    A("The school on Church Road will stay closed until Friday .", None),
    A("Firefighters used boats to rescue Maria Costa .", "intrinsic_entity"),
    A("Mayor Li Wen closed the main bridge for six hours .", "intrinsic_entity"),
    A("The Environment Agency opened the town hall as a shelter .", "intrinsic_entity"),
    A("Maria Costa said the water reached the town hall in minutes .", "intrinsic_entity"),
    A("Soldiers used boats to rescue an elderly couple .", "extrinsic_entity"),
    A("Mayor Tom Reid opened the town hall as a shelter .", "extrinsic_entity"),
    A("The river Avon burst its banks after two days of rain .", "extrinsic_entity"),
    A("Local baker Sam Okafor said the water reached his counter in minutes .", "extrinsic_entity"),
    A("Mayor Li Wen closed the town hall .", "intrinsic_predicate"),
    A("Police opened the main bridge for six hours .", "intrinsic_predicate"),
    A("Firefighters thanked an elderly couple on Mill Street .", "intrinsic_predicate"),
    A("The school on Church Road will stay open until Friday .", "intrinsic_predicate"),
    A("Police inspected the main bridge for six hours .", "extrinsic_predicate"),
    A("Mayor Li Wen criticised volunteers who brought food .", "extrinsic_predicate"),
    A("The river Dun dried up after two days of rain .", "extrinsic_predicate"),
    A("Forecasters ruled out more rain at the weekend .", "extrinsic_predicate"),
    A("Heavy rain flooded the centre of Kirkby on Friday night .", "intrinsic_circumstance"),
    A("Police closed the main bridge for two days .", "intrinsic_circumstance"),
    A("Firefighters rescued an elderly couple from a house on Church Road .", "intrinsic_circumstance"),
    A("More rain is expected on Tuesday night .", "intrinsic_circumstance"),
    A("Heavy rain flooded the centre of Kirkby on Sunday night .", "extrinsic_circumstance"),
    A("Police closed the main bridge for three days .", "extrinsic_circumstance"),
    A("The school on Church Road will stay closed until next month .", "extrinsic_circumstance"),
    A("Firefighters rescued an elderly couple from a house on Station Road .", "extrinsic_circumstance"),
    A("Maria Costa said the water reached his counter in minutes .", "coreference"),
    A("She opened the town hall as a shelter .", "coreference"),
    A("Firefighters used boats to rescue them from a house on Mill Street .", "coreference"),
    A("It burst its banks after two days of rain .", "coreference"),
)
ACCURACY_ACCURATE_PER_TEST = 4
ACCURACY_ERRORS_PER_TYPE = 1


# ---------------------------------------------------------------- drawing a worker's test

def _taxonomy_per_label(edits_per_type: int) -> list[tuple[str, int]]:
    return [(code, edits_per_type) for code in REQUESTABLE_CODES]


def _accuracy_per_label(accurate: int, errors_per_type: int) -> list[tuple[str | None, int]]:
    return [(None, accurate)] + [(code, errors_per_type) for code in REQUESTABLE_CODES]


def _describe_edit(label: str) -> str:
    return f"edit of type {label}"


def _describe_summary(label: str | None) -> str:
    return "accurate summary" if label is None else f"summary with an error of type {label}"


def taxonomy_test(secret: str, campaign_id: int, worker_id: int, attempt: int, material: Mapping[str, Any] | None = None) -> TaxonomyTest:
    """The Task 1 test of one worker's attempt, from the campaign's pool (imported, or the default)."""
    q = (material or {}).get("qualification")
    pool = tuple(KeyedEdit(**e) for e in q["pool"]) if q else TAXONOMY_POOL
    per_type = q["edits_per_type"] if q else TAXONOMY_EDITS_PER_TYPE
    rng = qualification_pool.attempt_rng(secret, "bump-taxonomy-qualification", campaign_id, worker_id, attempt)
    edits = qualification_pool.draw(rng, pool, lambda e: e.error_type, _taxonomy_per_label(per_type))
    return TaxonomyTest(q["article"] if q else TAXONOMY_ARTICLE, q["reference"] if q else TAXONOMY_REFERENCE, tuple(edits))


def accuracy_test(secret: str, campaign_id: int, worker_id: int, attempt: int, material: Mapping[str, Any] | None = None) -> AccuracyTest:
    """The Task 2 test of one worker's attempt, from the campaign's pool (imported, or the default)."""
    q = (material or {}).get("qualification")
    pool = tuple(KeyedSummary(**s) for s in q["pool"]) if q else ACCURACY_POOL
    accurate = q["accurate_per_test"] if q else ACCURACY_ACCURATE_PER_TEST
    per_type = q["errors_per_type"] if q else ACCURACY_ERRORS_PER_TYPE
    rng = qualification_pool.attempt_rng(secret, "bump-accuracy-qualification", campaign_id, worker_id, attempt)
    summaries = qualification_pool.draw(rng, pool, lambda s: s.error_type, _accuracy_per_label(accurate, per_type))
    return AccuracyTest(q["article"] if q else ACCURACY_ARTICLE, tuple(summaries))


def _types() -> list[dict[str, str]]:
    return [{"code": t.code, "name": t.name} for t in bump_taxonomy.REQUESTABLE]


def taxonomy_public_view(test: TaxonomyTest) -> dict[str, Any]:
    """What the Task 1 qualification page shows: article, reference, edits (position ids and texts) and the types."""
    return {
        "article": present(test.article), "reference": present(test.reference),
        "edits": [{"id": f"e{n}", "edited": present(e.edited)} for n, e in enumerate(test.edits, start=1)],
        "types": _types(),
    }


def accuracy_public_view(test: AccuracyTest) -> dict[str, Any]:
    """What the Task 2 qualification page shows: the article and the summaries (position ids), no answers."""
    return {
        "article": present(test.article),
        "summaries": [{"id": f"s{n}", "summary": present(s.summary)} for n, s in enumerate(test.summaries, start=1)],
        "types": _types(),
    }


# ---------------------------------------------------------------- scoring

class QualificationAnswerError(ValueError):
    """An unanswered or malformed qualification answer; the message names the question."""


def score_taxonomy(answers: Mapping[str, Any], test: TaxonomyTest) -> tuple[float, dict[str, bool]]:
    """Score Task 1 answers ``{"e1": type code, ...}``: ``(share correct, {edit id: correct})``.

    Every edit must be answered with a requestable type code.
    """
    marks: dict[str, bool] = {}
    for number, edit in enumerate(test.edits, start=1):
        value = answers.get(f"e{number}")
        if not value:
            raise QualificationAnswerError(f"Edit {number}: choose its error type.")
        if value not in REQUESTABLE_CODES:
            raise QualificationAnswerError(f"Edit {number}: {value!r} is not one of the seven error types.")
        marks[f"e{number}"] = value == edit.error_type
    return sum(marks.values()) / len(marks), marks


def score_accuracy(answers: Mapping[str, Any], test: AccuracyTest) -> tuple[float, dict[str, bool]]:
    """Score Task 2 answers ``{"s1": "yes" | "no", "s1_type": type code (for "no"), ...}``.

    A summary is answered right when "yes" is said of an accurate one, or "no" of an erroneous one together
    with its error type. Returns ``(share correct, {summary id: correct})``.
    """
    marks: dict[str, bool] = {}
    for number, summary in enumerate(test.summaries, start=1):
        key = f"s{number}"
        value = answers.get(key)
        if value not in ("yes", "no"):
            raise QualificationAnswerError(f"Summary {number}: answer Yes or No.")
        if value == "yes":
            marks[key] = summary.error_type is None
            continue
        chosen = answers.get(f"{key}_type")
        if not chosen:
            raise QualificationAnswerError(f"Summary {number}: you answered No; choose the error's type.")
        if chosen not in REQUESTABLE_CODES:
            raise QualificationAnswerError(f"Summary {number}: {chosen!r} is not one of the seven error types.")
        marks[key] = chosen == summary.error_type
    return sum(marks.values()) / len(marks), marks


# ---------------------------------------------------------------- campaign material (admin import)

def _error_type(raw: Any, where: str, *, accurate_allowed: bool) -> str | None:
    if raw is None and accurate_allowed:
        return None
    try:
        code = bump_taxonomy.normalize(raw if isinstance(raw, str) else "")
    except ValueError:
        code = ""
    if code not in REQUESTABLE_CODES:
        allowed = ("null (accurate) or " if accurate_allowed else "") + ", ".join(REQUESTABLE_CODES)
        raise MaterialError(f"{where}: unknown error type {raw!r}; expected {allowed}")
    return code


def _pool(raw: Any, where: str) -> list:
    if not isinstance(raw, list) or not raw:
        raise MaterialError(f"{where}: expected a non-empty list")
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise MaterialError(f"{where}[{i}]: expected an object")
    return raw


def _problems(pool: list, label_of, per_label, describe, where: str) -> None:
    problems = qualification_pool.pool_problems(pool, label_of, per_label, describe)
    if problems:
        raise MaterialError(f"{where}: " + "; ".join(problems))


def parse_material(data: Any, *, taxonomy: bool) -> dict[str, Any]:
    """Validate a BUMP campaign's qualification material (format in docs/training-material.md) and return
    it normalised (type names become codes). ``taxonomy``: Task 1 material, else Task 2. Raises ``MaterialError``.

    Task 1: ``{"qualification": {"article", "reference", "edits_per_type": 2, "pool": [{"edited", "error_type"}]}}``;
    Task 2: ``{"qualification": {"article", "accurate_per_test": 4, "errors_per_type": 1,
    "pool": [{"summary", "error_type": null | type}]}}``.
    """
    if not isinstance(data, dict) or set(data) != {"qualification"} or not isinstance(data["qualification"], dict):
        raise MaterialError("expected an object with 'qualification' (BUMP campaigns have no tutorial page)")
    q = data["qualification"]
    article = text_field(q.get("article"), "qualification.article")
    if taxonomy:
        reference = text_field(q.get("reference"), "qualification.reference")
        per_type = qualification_pool.positive_int(q.get("edits_per_type", TAXONOMY_EDITS_PER_TYPE), "qualification.edits_per_type")
        edits = []
        for i, entry in enumerate(_pool(q.get("pool"), "qualification.pool")):
            where = f"qualification.pool[{i}]"
            edited = text_field(entry.get("edited"), f"{where}.edited")
            if " ".join(edited.split()) == " ".join(reference.split()):
                raise MaterialError(f"{where}.edited: the edit is the reference itself; change one thing")
            edits.append(KeyedEdit(edited, _error_type(entry.get("error_type"), f"{where}.error_type", accurate_allowed=False)))
        _problems(edits, lambda e: e.error_type, _taxonomy_per_label(per_type), _describe_edit, "qualification.pool")
        return {"qualification": {"article": article, "reference": reference, "edits_per_type": per_type,
                                  "pool": [asdict(e) for e in edits]}}
    accurate = qualification_pool.positive_int(q.get("accurate_per_test", ACCURACY_ACCURATE_PER_TEST), "qualification.accurate_per_test")
    per_type = qualification_pool.positive_int(q.get("errors_per_type", ACCURACY_ERRORS_PER_TYPE), "qualification.errors_per_type")
    summaries = [
        KeyedSummary(text_field(entry.get("summary"), f"qualification.pool[{i}].summary"),
                     _error_type(entry.get("error_type"), f"qualification.pool[{i}].error_type", accurate_allowed=True))
        for i, entry in enumerate(_pool(q.get("pool"), "qualification.pool"))
    ]
    _problems(summaries, lambda s: s.error_type, _accuracy_per_label(accurate, per_type), _describe_summary, "qualification.pool")
    return {"qualification": {"article": article, "accurate_per_test": accurate, "errors_per_type": per_type,
                              "pool": [asdict(s) for s in summaries]}}


assert not qualification_pool.pool_problems(TAXONOMY_POOL, lambda e: e.error_type, _taxonomy_per_label(TAXONOMY_EDITS_PER_TYPE), _describe_edit)
assert not qualification_pool.pool_problems(
    ACCURACY_POOL, lambda s: s.error_type, _accuracy_per_label(ACCURACY_ACCURATE_PER_TEST, ACCURACY_ERRORS_PER_TYPE), _describe_summary,
)
