"""Let crowd platforms show the worker pages in their frame (MTurk external questions).

Only the worker-facing campaign pages (``/c/...``) may be framed, and only by the origins listed in
``FACTLAB_CROWD_FRAME_ANCESTORS``; every other page keeps ``X-Frame-Options``.
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
