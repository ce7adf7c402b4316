"""An LLM as a span annotator, through the same protocol as a person.

The model reads the article and the summary's numbered words and answers under a JSON schema
(:func:`response_format`): "no error", or errors with their types and words (each word named
``"<index>:<word>"``, so a constrained decoder can only pick words of the summary). Its answer is turned into the task page's payload (consecutive words of one
type become one span) and checked by :func:`annotate.spans.protocol.parse_answer`, the check a worker's submit
passes; an unusable answer is asked again with the reason. Answers are stored as ``SpanAnswer`` rows with
``source="model"`` by the model's pseudo-worker, which the report sets beside the humans.

The chat call is given by the caller (``ask(messages, response_format) -> text``), so this module needs no
client of its own: the metrics service's LLM client, or any OpenAI-compatible one, fits.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotate.models import Campaign, Summary, Worker
from annotate.services.errors import InvalidSubmission
from taxonomies.unified import UNIFIED_TYPES

from . import taxonomy
from .models import AnswerSource, SpanAnswer
from .protocol import parse_answer
from .words import as_json, words

Ask = Callable[[list[dict[str, str]], dict[str, Any]], str]
#: Words the model may mark per type (a summary-length limit keeps constrained decoding short).
MAX_WORDS_PER_TYPE = 12


def word_ids(word_list: list[str]) -> list[str]:
    return [f"{i}:{w}" for i, w in enumerate(word_list)]


def response_format(word_list: list[str]) -> dict[str, Any]:
    """The answer's JSON schema (OpenAI ``response_format``): ``{"verdict": "no_error"}``, or ``{"verdict":
    "errors", "type": T, "words": [...at least one...], "more_<type>": [...], ...}`` so that an answer with errors
    names at least one, and every word is one of the summary's."""
    ids = word_ids(word_list)
    limit = min(len(ids), MAX_WORDS_PER_TYPE)

    def marked(low: int) -> dict[str, Any]:
        return {"type": "array", "items": {"enum": ids}, "minItems": low, "maxItems": limit}

    errors = {"verdict": {"const": "errors"}, "type": {"enum": list(UNIFIED_TYPES)}, "words": marked(1),
              **{f"more_{t}": marked(0) for t in UNIFIED_TYPES}}
    schema = {"anyOf": [
        {"type": "object", "properties": {"verdict": {"const": "no_error"}}, "required": ["verdict"], "additionalProperties": False},
        {"type": "object", "properties": errors, "required": list(errors), "additionalProperties": False},
    ]}
    return {"type": "json_schema", "json_schema": {"name": "typed_error_spans", "schema": schema}}


def messages(article: str, word_list: list[str]) -> list[dict[str, str]]:
    definitions = "\n".join(f"- {t.code}: {t.definition}" for t in taxonomy.TYPES)
    return [
        {"role": "system", "content": "You mark factual errors in summaries: words the article does not support."},
        {"role": "user", "content": (
            f"Article:\n{article}\n\nSummary words (index:word):\n{' '.join(word_ids(word_list))}\n\n"
            f"Error types:\n{definitions}\n\nAnswer {{\"verdict\": \"no_error\"}} when the article supports the whole "
            "summary; otherwise verdict \"errors\" with the type and words of one error, and the words of any other "
            "errors under more_<type>. Answer with the JSON object only.")},
    ]


def to_payload(answer: dict[str, Any], word_list: list[str]) -> dict[str, Any]:
    """The task page's payload for a model answer (consecutive marked words of one type: one span).

    Examples
    --------
    >>> to_payload({"verdict": "errors", "type": "extrinsic_np", "words": ["3:Friday", "2:on"], "more_extrinsic_np": ["5:x"]},
    ...            ["a", "b", "on", "Friday", "c", "x"])
    {'no_error': False, 'spans': [{'start': 2, 'end': 4, 'type': 'extrinsic_np'}, {'start': 5, 'end': 6, 'type': 'extrinsic_np'}]}
    >>> to_payload({"verdict": "no_error"}, ["a"])
    {'no_error': True, 'spans': []}
    """
    verdict = answer.get("verdict")
    if verdict == "no_error":
        return {"no_error": True, "spans": []}
    if verdict != "errors":
        raise InvalidSubmission("verdict must be no_error or errors")
    ids = {wid: i for i, wid in enumerate(word_ids(word_list))}
    by_type: dict[str, set[int]] = {}
    for key, error_type in [("words", answer.get("type")), *((f"more_{t}", t) for t in UNIFIED_TYPES)]:
        marked = answer.get(key) or []
        if not isinstance(marked, list) or any(m not in ids for m in marked):
            raise InvalidSubmission(f"{key} must list words of the summary as index:word")
        if marked and error_type not in UNIFIED_TYPES:
            raise InvalidSubmission(f"type must be one of {', '.join(UNIFIED_TYPES)}")
        by_type.setdefault(error_type, set()).update(ids[m] for m in marked)
    spans: list[dict[str, Any]] = []
    for error_type in UNIFIED_TYPES:
        for i in sorted(by_type.get(error_type, ())):
            if spans and spans[-1]["type"] == error_type and spans[-1]["end"] == i:
                spans[-1]["end"] = i + 1
            else:
                spans.append({"start": i, "end": i + 1, "type": error_type})
    return {"no_error": False, "spans": spans}


def model_answer(ask: Ask, summary: Summary, *, attempts: int = 2) -> list:
    """The model's checked spans for one summary; ``InvalidSubmission`` after ``attempts`` unusable answers."""
    word_list = words(summary.text)
    prompt = messages(summary.document.text, word_list)
    conversation = list(prompt)
    error: InvalidSubmission | None = None
    for _ in range(max(1, attempts)):
        text = ask(conversation, response_format(word_list))
        try:
            answer = json.loads(text.strip().strip("`").removeprefix("json"))
            if not isinstance(answer, dict):
                raise InvalidSubmission("the answer must be a JSON object")
            return parse_answer(word_list, to_payload(answer, word_list))[0]
        except (ValueError, InvalidSubmission) as exc:
            error = exc if isinstance(exc, InvalidSubmission) else InvalidSubmission(f"the answer is not JSON: {exc}")
            conversation = [*prompt, {"role": "user", "content": f"Your previous answer was unusable: {error.message}. Answer again."}]
    assert error is not None
    raise error


def annotate_campaign(campaign: Campaign, worker: Worker, ask: Ask, *, attempts: int = 2) -> int:
    """Store the model's answer on every summary of the campaign's items (replacing its earlier ones); returns
    how many were stored. ``worker``: the model's pseudo-worker."""
    summaries = Summary.objects.filter(items__campaign=campaign).distinct().select_related("document").order_by("pk")
    answers = [(summary, model_answer(ask, summary, attempts=attempts)) for summary in summaries]
    with transaction.atomic():
        for summary, spans in answers:
            SpanAnswer.objects.update_or_create(summary=summary, worker=worker, source=AnswerSource.MODEL,
                                                defaults={"spans": as_json(spans), "n_words": len(words(summary.text))})
    return len(answers)
