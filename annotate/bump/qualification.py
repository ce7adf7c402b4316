"""BUMP's qualification pages: Task 1 names the error type of each edit, Task 2 tells accurate from inaccurate pairs."""
from __future__ import annotations

from typing import Any

from annotate.bump import content as bump_content
from annotate.bump import edits
from annotate.protocols.base import QualificationForm
from annotate.services.errors import InvalidSubmission
from taxonomies import bump as bump_taxonomy


def qualification_form(taxonomy: bool, test, post=None) -> QualificationForm:
    """The worker's drawn ``test`` (no key) with their choices ``post`` kept (shown again after an error)."""
    if taxonomy:
        view = bump_content.taxonomy_public_view(test)
        for number, edit in enumerate(view["edits"], start=1):
            edit["number"] = number
            edit["chosen"] = post.get(edit["id"], "") if post else ""
            edit["diff"] = edits.word_diff(view["reference"], edit["edited"])
        return QualificationForm("bump/qualification_taxonomy.html", {"exercise": view, "types": bump_taxonomy.REQUESTABLE, "taxonomy": True})
    view = bump_content.accuracy_public_view(test)
    for number, summary in enumerate(view["summaries"], start=1):
        summary["number"] = number
        summary["chosen"] = post.get(summary["id"], "") if post else ""
        summary["chosen_type"] = post.get(f"{summary['id']}_type", "") if post else ""
    return QualificationForm("bump/qualification_accuracy.html", {"exercise": view, "types": bump_taxonomy.REQUESTABLE, "taxonomy": False})


def score(taxonomy: bool, test, answers: dict[str, Any]) -> float:
    """The share of right answers; an unanswered or unknown choice is refused with its name."""
    scorer = bump_content.score_taxonomy if taxonomy else bump_content.score_accuracy
    try:
        return scorer(answers, test)[0]
    except bump_content.QualificationAnswerError as exc:
        raise InvalidSubmission(str(exc)) from exc
