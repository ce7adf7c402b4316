"""FRANK's qualification form: the page's rows and the parse of its fields (the scoring is ``protocol.score_qualification``)."""
from __future__ import annotations

from typing import Any

from annotate.frank import content as frank_content
from annotate.services.errors import InvalidSubmission


def qualification_rows(exercise: frank_content.Exercise, post=None) -> list[dict[str, Any]]:
    """The test's sentences with the worker's current form values (for re-display after an error)."""
    rows = []
    for s, summary in enumerate(frank_content.public_view(exercise)["summaries"]):
        sentences = []
        for i, text in enumerate(summary):
            name = f"s{s}_{i}"
            sentences.append({
                "name": name, "text": text, "number": i + 1,
                "factual": post.get(f"{name}_factual", "") if post else "",
                "categories": post.getlist(f"{name}_cat") if post else [],
            })
        rows.append({"number": s + 1, "sentences": sentences})
    return rows


def parse_qualification_form(exercise: frank_content.Exercise, post) -> dict[str, Any]:
    """Form fields ``s<S>_<I>_factual`` (yes/no) and ``s<S>_<I>_cat`` (codes) -> the scoring structure."""
    summaries = []
    for s, summary in enumerate(exercise.summaries):
        answers = []
        for i in range(len(summary)):
            value = post.get(f"s{s}_{i}_factual")
            if value not in ("yes", "no"):
                raise InvalidSubmission(f"Summary {s + 1}, sentence {i + 1}: answer Yes or No.")
            factual = value == "yes"
            answers.append({"factual": factual, "categories": [] if factual else post.getlist(f"s{s}_{i}_cat")})
        summaries.append(answers)
    return {"summaries": summaries}
