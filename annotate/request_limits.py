"""Refuse malformed requests with a 400 before any view parses them (no 5xx from bad input).

* JSON bodies nested deeper than ``FACTLAB_MAX_JSON_DEPTH`` (Python's parser would raise RecursionError);
* NUL characters in the query string, a form body or a JSON body (PostgreSQL text cannot hold them).

The depth scan skips string literals, so brackets inside texts do not count; it reads the body once
(Django caches it for the view). Multipart uploads are left to the upload handlers.
"""
from __future__ import annotations

import re

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_JSON_NUL = re.compile(rb'(?<!\\)(?:\\\\)*\\u0000', re.IGNORECASE)


def json_too_deep(body: bytes, limit: int) -> bool:
    depth = 0
    for match in _JSON_TOKENS.finditer(body):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def problem(request: HttpRequest) -> str | None:
    """What is wrong with the request, or None."""
    query = request.META.get("QUERY_STRING", "")
    if "%00" in query or "\x00" in query:
        return "the query string contains a NUL character"
    content_type = request.META.get("CONTENT_TYPE", "")
    if request.method not in ("POST", "PUT", "PATCH", "DELETE") or content_type.startswith("multipart/"):
        return None
    body = request.body
    if not body:
        return None
    if "json" in content_type:
        if b"\x00" in body or _JSON_NUL.search(body):
            return "the JSON body contains a NUL character"
        limit = int(getattr(settings, "FACTLAB_MAX_JSON_DEPTH", 32))
        if json_too_deep(body, limit):
            return f"the JSON body is nested deeper than {limit} levels"
    elif b"\x00" in body or b"%00" in body:
        return "the request body contains a NUL character"
    return None


class RequestSanityMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            wrong = problem(request)
        except Exception:  # e.g. a body above DATA_UPLOAD_MAX_MEMORY_SIZE: the view answers that one
            wrong = None
        if wrong is None:
            return self.get_response(request)
        if request.path.startswith("/api/") or "json" in request.META.get("CONTENT_TYPE", "") or "json" in request.META.get("HTTP_ACCEPT", ""):
            return JsonResponse({"detail": wrong}, status=400)
        return HttpResponse(f"Bad request: {wrong}.", status=400, content_type="text/plain; charset=utf-8")
