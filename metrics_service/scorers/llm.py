"""Talking to an LLM behind an OpenAI-compatible endpoint (vLLM, SGLang, Ollama, llama.cpp, OpenAI).

* :class:`LLMEndpoint` — where and what: ``FACTLAB_LLM_BASE_URL`` (e.g. ``http://gpu-host:8000/v1``),
  ``FACTLAB_LLM_MODEL`` (the served model name) and ``FACTLAB_LLM_API_KEY`` (optional; local servers
  accept any key), each overridable per scorer.
* :class:`ResponseCache` — every successful answer is stored in a SQLite file keyed by
  ``sha256(model, request)`` (the full request: messages and decoding parameters), so a rerun of a job,
  or a retried chunk, costs no request. Path: ``FACTLAB_LLM_CACHE`` (default
  ``~/.cache/factlab/llm-responses.sqlite3``). SQLite in WAL mode is safe across worker processes.
* :class:`RateLimiter` — at most ``requests_per_minute`` request starts per process (0: no limit).
* :class:`LLMClient` — the ``openai`` client (its own retries with exponential backoff cover connection
  errors, 408/409/429 and 5xx), the cache, the rate limit and a thread pool for concurrent requests.

Plain Python (no Django). Nothing here downloads weights: the model runs in the server.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .base import ScorerError

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CACHE = "~/.cache/factlab/llm-responses.sqlite3"


class LLMAnswerError(ValueError):
    """The model's answer cannot be used (not the requested format); the message says what is wrong."""


@dataclass(frozen=True)
class LLMEndpoint:
    base_url: str
    model: str
    api_key: str

    @classmethod
    def resolve(cls, base_url: str | None = None, model: str | None = None) -> LLMEndpoint:
        """The ``FACTLAB_LLM_*`` environment, with a model name and an allowed URL given as arguments.

        The key only ever comes from the environment (a job's configuration is stored and shown), and a
        ``base_url`` argument must be ``FACTLAB_LLM_BASE_URL`` or listed in ``FACTLAB_LLM_BASE_URLS``
        (comma-separated): a job configuration cannot send requests to an arbitrary host.
        """
        default_url = os.environ.get("FACTLAB_LLM_BASE_URL", "").strip()
        if base_url:
            allowed = {u.strip().rstrip("/") for u in [default_url, *os.environ.get("FACTLAB_LLM_BASE_URLS", "").split(",")] if u.strip()}
            if base_url.rstrip("/") not in allowed:
                raise ScorerError(
                    f"base_url {base_url!r} is not an allowed LLM endpoint; set FACTLAB_LLM_BASE_URL or list it in FACTLAB_LLM_BASE_URLS"
                )
        base_url = base_url or default_url
        model = model or os.environ.get("FACTLAB_LLM_MODEL", "")
        if not base_url:
            raise ScorerError("no LLM endpoint: set FACTLAB_LLM_BASE_URL (e.g. http://localhost:8000/v1)")
        if not model:
            raise ScorerError("no LLM model name: set FACTLAB_LLM_MODEL (the name the server serves) or pass model=")
        # Local servers ignore the key, but the client insists on one.
        key = os.environ.get("FACTLAB_LLM_API_KEY", "")
        return cls(base_url.rstrip("/"), model, key or "not-needed")


def request_key(model: str, endpoint: str, request: dict[str, Any]) -> str:
    """The cache key of a request: a hash of the model, the endpoint kind and the full request."""
    payload = json.dumps({"model": model, "endpoint": endpoint, "request": request}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    """Answers by request hash in a SQLite file (one connection per thread)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path or os.environ.get("FACTLAB_LLM_CACHE") or DEFAULT_CACHE).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, response TEXT, created REAL)")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", (key, model, json.dumps(response), time.time()))


class RateLimiter:
    """Spaces request starts at least ``60 / requests_per_minute`` seconds apart (thread-safe)."""

    def __init__(self, requests_per_minute: float = 0):
        self.interval = 60.0 / requests_per_minute if requests_per_minute and requests_per_minute > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class LLMClient:
    """Cached, rate-limited, concurrent chat completions against one endpoint and model.

    Args:
        endpoint: where to send requests.
        cache: answers already obtained (None: no cache).
        concurrency: requests in flight at once (threads).
        requests_per_minute: rate limit (0: none).
        max_retries: the ``openai`` client's retries of failed HTTP requests (backoff included).
        timeout: seconds per request.
    """

    def __init__(self, endpoint: LLMEndpoint, cache: ResponseCache | None = None, concurrency: int = 8,
                 requests_per_minute: float = 0, max_retries: int = 4, timeout: float = 120.0):
        from openai import OpenAI

        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.endpoint, self.cache, self.concurrency = endpoint, cache, int(concurrency)
        self.limiter = RateLimiter(requests_per_minute)
        self.client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=max_retries, timeout=timeout)
        self.requests_sent = 0
        self._count_lock = threading.Lock()

    def chat(self, messages: list[dict[str, str]], *, validate: Callable[[dict[str, Any]], Any] | None = None,
             **params: Any) -> tuple[dict[str, Any], Any]:
        """One chat completion as ``(answer, validate(answer))``; from the cache when asked before.

        ``answer`` is ``{"text": str, "top_logprobs": [{token: logprob}, ...] | None}`` (one dict per
        generated token when the server returned log-probabilities). ``validate`` raises
        :class:`LLMAnswerError` for an unusable answer, which is then not cached. ``params`` are passed
        to the API (``extra_body`` included).
        """
        request = {"messages": messages, **params}
        key = request_key(self.endpoint.model, "chat", request)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            return cached, validate(cached) if validate else None
        self.limiter.wait()
        from openai import OpenAIError

        try:
            response = self.client.chat.completions.create(model=self.endpoint.model, messages=messages, **params)
        except OpenAIError as exc:
            raise ScorerError(f"the LLM endpoint {self.endpoint.base_url} failed for model {self.endpoint.model!r}: {exc}") from exc
        with self._count_lock:
            self.requests_sent += 1
        answer = _answer(response)
        value = validate(answer) if validate else None
        if self.cache is not None:
            self.cache.put(key, self.endpoint.model, answer)
        return answer, value

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``[function(item) for item in items]`` with up to ``concurrency`` calls at once, in order."""
        items = list(items)
        if self.concurrency == 1 or len(items) <= 1:
            return [function(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(function, items))


def _answer(response: Any) -> dict[str, Any]:
    if not response.choices:
        raise ScorerError("the LLM endpoint returned no choice")
    choice = response.choices[0]
    text = choice.message.content or ""
    top: list[dict[str, float]] | None = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        top = []
        for token in content:
            alternatives = {alt.token: float(alt.logprob) for alt in (token.top_logprobs or [])}
            alternatives.setdefault(token.token, float(token.logprob))
            top.append(alternatives)
    return {"text": text, "top_logprobs": top}


def parse_json_object(text: str, what: str) -> dict[str, Any]:
    """The JSON object in ``text`` (code fences tolerated); :class:`LLMAnswerError` naming the problem otherwise."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMAnswerError(f"{what}: the answer is not valid JSON ({exc.msg} at character {exc.pos}): {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise LLMAnswerError(f"{what}: expected a JSON object, got {type(value).__name__}: {text[:200]!r}")
    return value


def ask_until_valid(client: LLMClient, messages: list[dict[str, str]], validate: Callable[[dict[str, Any]], R],
                    attempts: int, **params: Any) -> R:
    """Ask, and on an unusable answer ask again with the error appended (a new prompt, so not a cache hit).

    Raises the last :class:`LLMAnswerError` after ``attempts`` unusable answers.
    """
    error: LLMAnswerError | None = None
    conversation = list(messages)
    for _ in range(max(1, attempts)):
        try:
            return client.chat(conversation, validate=validate, **params)[1]
        except LLMAnswerError as exc:
            error = exc
            conversation = [*messages, {"role": "user", "content": f"Your previous answer was unusable: {exc}. Answer again in the requested format only."}]
    assert error is not None
    raise error


def choice_constraint(style: str, choices: Sequence[str]) -> dict[str, Any]:
    """``extra_body`` restricting the answer to ``choices``: ``structured_outputs`` (vLLM >= 0.10), ``guided``
    (older vLLM and SGLang's ``guided_choice``...), or ``none`` (servers without constrained decoding)."""
    if style == "structured_outputs":
        return {"structured_outputs": {"choice": list(choices)}}
    if style == "guided":
        return {"guided_choice": list(choices)}
    if style == "none":
        return {}
    raise ValueError(f"unknown constraint style {style!r}; use structured_outputs, guided or none")
