"""LLM judges through an OpenAI-compatible endpoint: a factuality metric and a FRANK annotator.

**Metric** (:class:`LLMJudge`, ``llm_judge``): one request per summary with the prompt
:data:`JUDGE_SYSTEM` / :data:`JUDGE_USER` (document, summary, "Answer with exactly one word: Yes or No"),
greedy decoding of one token, ``top_logprobs`` asked for. The score is

* ``P(Yes) / (P(Yes) + P(No))`` from the first token's log-probabilities when the server returns them and
  at least one of the two answers is among them (tokens compared case- and space-insensitively);
* else the parsed answer: 1.0 for "yes", 0.0 for "no";
* NaN (the summary is left unscored) when the answer stays unusable after ``attempts`` tries.

By default the answer is constrained to "Yes"/"No" with vLLM's ``structured_outputs`` (``constraint=``
``"guided"`` for older vLLM/SGLang, ``"none"`` for servers without constrained decoding).

**Annotator** (:class:`LLMFrankAnnotator`, ``llm_frank``): the FRANK task a person does, sentence by
sentence: the prompt (:data:`FRANK_SYSTEM`, :func:`frank_messages`) gives the article, the whole summary
with the sentence to judge marked, and the error typology; the answer must be the JSON object of
:func:`frank_schema` (``{"factual": true, "categories": []}`` or ``{"factual": false, "categories": [codes]}``),
requested with ``response_format`` json_schema and validated by :func:`validate_frank_answer` (bad JSON or
a bad category: a clear error, asked again). As a metric it gives ``llm_frank_factual``, the share of the
summary's sentences judged factual (FRANK's human ``Factuality`` score computed from the LLM's labels).

Responses are cached by request (:mod:`.llm`), so a rerun costs nothing.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from taxonomies.frank import MAX_CATEGORIES_PER_ANSWER as MAX_CATEGORIES  # a plain data module

from .base import Scorer
from .llm import (
    LLMAnswerError,
    LLMClient,
    LLMEndpoint,
    ResponseCache,
    ask_until_valid,
    choice_constraint,
    parse_json_object,
)

JUDGE_SYSTEM = (
    "You are a careful fact-checker. You decide whether a summary is factually consistent with its source "
    "document: every piece of information in the summary must be stated in, or directly implied by, the document."
)
JUDGE_USER = (
    "Document:\n{document}\n\nSummary:\n{summary}\n\n"
    "Is the summary factually consistent with the document? Answer with exactly one word: Yes or No."
)
ANSWERS = ("Yes", "No")

FRANK_SYSTEM = (
    "You annotate the factuality of summary sentences against a news article, following the FRANK protocol. "
    "For the marked sentence decide whether everything it says is supported by the article. If not, name "
    "the error category that applies, or the two that apply (never more than two):\n{typology}\n"
    'Answer with a JSON object only: {{"factual": true, "categories": []}} or '
    '{{"factual": false, "categories": ["<code>", ...]}}.'
)
FRANK_USER = "Article:\n{document}\n\nSummary (the sentence to judge is between >> and <<):\n{marked}\n\nSentence to judge:\n{sentence}"


class _EndpointScorer(Scorer):
    """Shared settings of the scorers that ask an LLM server."""

    uses_model: ClassVar[bool] = False  # the model runs in the server: the chunks go to the cpu queue

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 concurrency: int = 8, requests_per_minute: float = 0, attempts: int = 3, max_retries: int = 4,
                 timeout: float = 120.0, use_cache: bool = True, **config: Any):
        for name, value in (("concurrency", concurrency), ("attempts", attempts)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if float(requests_per_minute) < 0:
            raise ValueError(f"requests_per_minute must be >= 0, got {requests_per_minute}")
        self.endpoint = LLMEndpoint.resolve(base_url, model)
        # The model and the prompt settings identify the scores; the URL, key and pacing do not.
        super().__init__(model=self.endpoint.model, **config)
        self.client_options = {"concurrency": int(concurrency), "requests_per_minute": float(requests_per_minute),
                               "max_retries": int(max_retries), "timeout": float(timeout)}
        self.attempts = int(attempts)
        self.use_cache = bool(use_cache)
        self._client: LLMClient | None = None

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            cache = ResponseCache() if self.use_cache else None
            self._client = LLMClient(self.endpoint, cache, **self.client_options)
        return self._client


# --------------------------------------------------------------------------- metric


def judge_messages(document: str, summary: str) -> list[dict[str, str]]:
    """The metric's prompt for one (document, summary) pair."""
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": JUDGE_USER.format(document=document, summary=summary)}]


def _norm(token: str) -> str:
    return re.sub(r"[^a-z]", "", token.lower())


def yes_probability(answer: dict[str, Any]) -> float:
    """``P(yes)`` from the first token's log-probabilities, else from the parsed text (1.0 / 0.0).

    :class:`LLMAnswerError` when neither tells yes from no.
    """
    top = answer.get("top_logprobs") or []
    if top:
        p_yes = sum(math.exp(lp) for tok, lp in top[0].items() if _norm(tok) == "yes")
        p_no = sum(math.exp(lp) for tok, lp in top[0].items() if _norm(tok) == "no")
        if p_yes + p_no > 0:
            return p_yes / (p_yes + p_no)
    words = answer.get("text", "").strip().split()
    first = _norm(words[0]) if words else ""
    if first in ("yes", "no"):
        return 1.0 if first == "yes" else 0.0
    raise LLMAnswerError(f"expected Yes or No, got {answer.get('text', '')[:100]!r}")


class LLMJudge(_EndpointScorer):
    """LLM-as-a-judge factuality: ``P(Yes)`` to "is the summary consistent with the document?".

    Args:
        model, base_url: the endpoint (default: ``FACTLAB_LLM_MODEL``, ``FACTLAB_LLM_BASE_URL``; another
            URL must be listed in ``FACTLAB_LLM_BASE_URLS``); the key is ``FACTLAB_LLM_API_KEY``.
        constraint: ``structured_outputs`` (default), ``guided`` or ``none`` (see :func:`.llm.choice_constraint`).
        top_logprobs: alternatives asked for the answer token (20 is the usual server maximum).
        concurrency, requests_per_minute, attempts, max_retries, timeout: request handling.
        use_cache: use the response cache (the SQLite file ``FACTLAB_LLM_CACHE``).
    """

    name: ClassVar[str] = "llm_judge"

    def __init__(self, constraint: str = "structured_outputs", top_logprobs: int = 20, **kwargs: Any):
        choice_constraint(constraint, ANSWERS)  # validates the style
        super().__init__(constraint=constraint, top_logprobs=int(top_logprobs), **kwargs)
        self.constraint, self.top_logprobs = constraint, int(top_logprobs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return (self.name,)

    def judge(self, document: str, summary: str) -> float:
        """P(consistent) for one pair; NaN when the answer stays unusable."""
        params: dict[str, Any] = {"max_tokens": 1, "temperature": 0.0, "logprobs": True, "top_logprobs": self.top_logprobs}
        extra = choice_constraint(self.constraint, ANSWERS)
        if extra:
            params["extra_body"] = extra
        try:
            return ask_until_valid(self.client, judge_messages(document, summary), yes_probability, self.attempts, **params)
        except LLMAnswerError:
            return math.nan

    def score(self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
              ) -> dict[str, list[float]]:
        self._check_lengths(documents, summaries, references)
        pairs = list(zip(documents, summaries))
        return {self.name: self.client.map(lambda pair: self.judge(*pair), pairs)}


# --------------------------------------------------------------------------- annotator


@dataclass(frozen=True)
class SentenceVerdict:
    """The LLM's FRANK judgement of one summary sentence."""

    sentence_index: int
    factual: bool
    categories: tuple[str, ...]


def frank_schema(codes: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of one FRANK answer: factual with no category, or not factual with 1-3 categories."""
    return {
        "anyOf": [
            {"type": "object", "properties": {"factual": {"const": True},
                                              "categories": {"type": "array", "items": {"enum": list(codes)}, "maxItems": 0}},
             "required": ["factual", "categories"], "additionalProperties": False},
            {"type": "object", "properties": {"factual": {"const": False},
                                              "categories": {"type": "array", "items": {"enum": list(codes)},
                                                             "minItems": 1, "maxItems": MAX_CATEGORIES, "uniqueItems": True}},
             "required": ["factual", "categories"], "additionalProperties": False},
        ]
    }


def validate_frank_answer(answer: dict[str, Any], codes: Sequence[str]) -> tuple[bool, tuple[str, ...]]:
    """``(factual, categories)`` from an answer; :class:`LLMAnswerError` naming what is wrong otherwise."""
    value = parse_json_object(answer.get("text", ""), "FRANK judgement")
    factual = value.get("factual")
    if not isinstance(factual, bool):
        raise LLMAnswerError(f"FRANK judgement: 'factual' must be true or false, got {factual!r}")
    categories = value.get("categories", [])
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise LLMAnswerError(f"FRANK judgement: 'categories' must be a list of category codes, got {categories!r}")
    unknown = [c for c in categories if c not in codes]
    if unknown:
        raise LLMAnswerError(f"FRANK judgement: unknown categories {unknown}; allowed: {', '.join(codes)}")
    if factual and categories:
        raise LLMAnswerError(f"FRANK judgement: a factual sentence has no error category, got {categories}")
    if not factual and not categories:
        raise LLMAnswerError("FRANK judgement: a non-factual sentence needs at least one error category")
    categories = list(dict.fromkeys(categories))
    if len(categories) > MAX_CATEGORIES:
        raise LLMAnswerError(f"FRANK judgement: at most {MAX_CATEGORIES} error categories (the human annotators' rule), got {categories}")
    return factual, tuple(categories)


def frank_messages(document: str, sentences: Sequence[str], index: int, typology: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The annotator's prompt for sentence ``index`` of a summary; ``typology`` is (code, description) pairs."""
    marked = " ".join(f">> {s} <<" if i == index else s for i, s in enumerate(sentences))
    listing = "\n".join(f"- {code}: {text}" for code, text in typology)
    return [{"role": "system", "content": FRANK_SYSTEM.format(typology=listing)},
            {"role": "user", "content": FRANK_USER.format(document=document, marked=marked, sentence=sentences[index])}]


class LLMFrankAnnotator(_EndpointScorer):
    """The FRANK annotation task done by an LLM, sentence by sentence, as validated structured JSON.

    Args:
        typology: (code, description) pairs of the error categories; FRANK's by default.
        json_schema: send ``response_format`` json_schema (constrained decoding on vLLM/SGLang/llama.cpp/OpenAI);
            False asks for JSON in the prompt only.
        Other arguments as for :class:`LLMJudge`.
    """

    name: ClassVar[str] = "llm_frank"

    def __init__(self, typology: Sequence[Sequence[str]] | None = None, json_schema: bool = True, **kwargs: Any):
        if typology is None:
            from taxonomies.frank import CATEGORIES

            typology = [(c.code, f"{c.name}: {c.description}") for c in CATEGORIES]
        pairs = [(str(code), str(text)) for code, text in typology]
        if not pairs:
            raise ValueError("typology must list at least one (code, description) pair")
        super().__init__(typology=pairs, json_schema=bool(json_schema), **kwargs)
        self.typology, self.codes, self.json_schema = pairs, tuple(code for code, _ in pairs), bool(json_schema)

    @property
    def output_names(self) -> tuple[str, ...]:
        return ("llm_frank_factual",)

    def judge_sentence(self, document: str, sentences: Sequence[str], index: int) -> SentenceVerdict:
        """One sentence's verdict; :class:`LLMAnswerError` when every attempt gave an unusable answer."""
        params: dict[str, Any] = {"temperature": 0.0, "max_tokens": 200}
        if self.json_schema:
            params["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "frank_judgement", "schema": frank_schema(self.codes)}}
        factual, categories = ask_until_valid(
            self.client, frank_messages(document, sentences, index, self.typology),
            lambda answer: validate_frank_answer(answer, self.codes), self.attempts, **params,
        )
        return SentenceVerdict(index, factual, categories)

    def judge_summaries(self, documents: Sequence[str], sentence_lists: Sequence[Sequence[str]]
                        ) -> list[list[SentenceVerdict] | LLMAnswerError]:
        """Verdicts per summary (all its sentences), or the error of the first unusable sentence."""
        tasks = [(k, i) for k, sents in enumerate(sentence_lists) for i in range(len(sents))]
        results = self.client.map(lambda task: self._safe(documents[task[0]], sentence_lists[task[0]], task[1]), tasks)
        out: list[list[SentenceVerdict] | LLMAnswerError] = [[] for _ in sentence_lists]
        for (k, _), result in zip(tasks, results):
            if isinstance(out[k], LLMAnswerError):
                continue
            out[k] = result if isinstance(result, LLMAnswerError) else [*out[k], result]
        return out

    def _safe(self, document: str, sentences: Sequence[str], index: int) -> SentenceVerdict | LLMAnswerError:
        try:
            return self.judge_sentence(document, sentences, index)
        except LLMAnswerError as exc:
            return LLMAnswerError(f"sentence {index}: {exc}")

    def score(self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
              ) -> dict[str, list[float]]:
        from metrics_service.text import split_sentences_many

        self._check_lengths(documents, summaries, references)
        verdicts = self.judge_summaries(documents, split_sentences_many(list(summaries)))
        return {"llm_frank_factual": [
            math.nan if isinstance(v, LLMAnswerError) or not v else sum(x.factual for x in v) / len(v) for v in verdicts
        ]}
