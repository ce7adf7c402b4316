"""``GET /healthz/``: what a supervisor asks a web process (docker compose's health check, a load balancer).

Answered first in the middleware chain: no HTTPS redirect (the check speaks plain HTTP inside the
container), no host check (it calls 127.0.0.1, not the public name), no session. 200 when the database
answers and the sign-in page renders (templates and, in production, the hashed static names of the
manifest: without ``collectstatic`` every page would answer 500); else 503 naming what failed (the
details go to the log, not to whoever asks).
"""
from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

HEALTH_PATH = "/healthz/"


def problems() -> dict[str, str]:
    """What fails, by part: ``{"database": "...", "sign-in page": "..."}``; empty when healthy."""
    found = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        found["database"] = str(exc)
    try:
        from django.contrib.auth.forms import AuthenticationForm

        render_to_string("registration/login.html", {"form": AuthenticationForm()})
    except Exception as exc:
        found["sign-in page"] = str(exc)
    return found


class HealthCheckMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path != HEALTH_PATH or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        found = problems()
        if found:
            logger.error("health check failed: %s", "; ".join(f"{part}: {detail}" for part, detail in found.items()))
            return HttpResponse("unhealthy: " + ", ".join(found), status=503, content_type="text/plain")
        return HttpResponse("ok", content_type="text/plain")
