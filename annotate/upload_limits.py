"""Refuse a request body that is too large from its declared ``Content-Length``, before anything reads it.

Without this, Django's CSRF check (``request.POST``) or DRF's parser would read a whole upload, spooling it to
disk, before any view could compare its size with the limit. A multipart body may be
``FACTLAB_MAX_UPLOAD_BYTES`` plus the multipart headers around the file (:data:`MULTIPART_SLACK_BYTES`); any
other body ``DATA_UPLOAD_MAX_MEMORY_SIZE``. The answer is a 413: JSON for the API, a page that explains
for the browser. The upload services check the size of what was actually received as well
(``annotate.services.import_jobs.check_upload_size``).
"""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

MULTIPART_SLACK_BYTES = 64 * 1024  # multipart headers and form fields around the file


def declared_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def body_limit(request: HttpRequest) -> tuple[int, str]:
    """The largest body this request may declare, and the setting that says so."""
    if request.META.get("CONTENT_TYPE", "").startswith("multipart/"):
        return int(settings.FACTLAB_MAX_UPLOAD_BYTES) + MULTIPART_SLACK_BYTES, "FACTLAB_MAX_UPLOAD_BYTES"
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE), "DATA_UPLOAD_MAX_MEMORY_SIZE"


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


class UploadSizeMiddleware:
    """413 for a body declared above its limit, answered without reading the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size = declared_length(request)
        limit, setting = body_limit(request)
        if size <= limit:
            return self.get_response(request)
        allowed = limit - MULTIPART_SLACK_BYTES if setting == "FACTLAB_MAX_UPLOAD_BYTES" else limit
        detail = f"the upload is about {size} bytes; the limit is {allowed} bytes ({setting})"
        if request.path.startswith("/api/") or "json" in request.META.get("HTTP_ACCEPT", ""):
            response = JsonResponse({"detail": detail}, status=413)
        else:
            response = render(request, "annotate/message.html", {
                "title": "The file is too large",
                "message": (
                    f"The upload is {_megabytes(size)}; this server takes files of at most {_megabytes(allowed)} ({setting}). "
                    "Nothing was received or stored. Split the file into smaller parts and upload them one by one, "
                    "or ask the administrator to raise the limit."
                ),
            }, status=413)
        return response
