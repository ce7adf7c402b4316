"""Crowd workers' campaign pages (``/c/<slug>/...``): who may frame them, and who may open them.

Let crowd platforms show the worker pages in their frame (MTurk external questions): only the
worker-facing campaign pages may be framed, and only by the origins listed in
``FACTLAB_CROWD_FRAME_ANCESTORS``; every other page keeps ``X-Frame-Options``.

A crowd identity (a Prolific or MTurk worker) opens only the campaigns of the study links it came in
through (:class:`CrowdScopeMiddleware`); a new study link (platform parameters in the URL) is the arrival
itself and always goes through.
"""
from __future__ import annotations

from django.conf import settings


class CrowdFrameMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        ancestors = settings.FACTLAB_CROWD_FRAME_ANCESTORS
        if ancestors and request.path.startswith("/c/"):
            response["Content-Security-Policy"] = "frame-ancestors 'self' " + " ".join(ancestors)
            response.xframe_options_exempt = True
        return response


class CrowdScopeMiddleware:
    """Refuse (403) a crowd identity's request for another campaign's pages (needs the session and user)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        slug = view_kwargs.get("slug")
        if not slug or not request.path.startswith("/c/") or not request.user.is_authenticated:
            return None
        from annotate.providers import detect_provider
        from annotate.views.common import other_campaign_refusal

        if detect_provider(request) is not None:
            return None
        worker = getattr(request.user, "worker", None)  # loaded with the user (annotate.auth_backend)
        return other_campaign_refusal(request, slug, worker)
