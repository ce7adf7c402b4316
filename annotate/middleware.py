"""Headers of every page (CSP, frames, cookies) and who may open a crowd worker's campaign pages.

Every response carries a Content-Security-Policy whose ``script-src 'self'`` runs no inline script and no
script from elsewhere (pages keep their scripts in ``static/``). Crowd platforms show the worker pages in
their frame (MTurk external questions): only the campaign pages ``/c/...`` of a crowd worker (or of a visitor
not yet signed in) may be framed, and only by the origins listed in ``FACTLAB_CROWD_FRAME_ANCESTORS``; every
other page, the reviewer's and the admin's included, refuses frames. A framed page gets its cookies only when
they are ``SameSite=None``: only crowd workers' session, CSRF and message cookies are, every other account's
stay ``Lax``, so no other site can send requests carrying an admin's, researcher's or reviewer's session.

A crowd identity (a Prolific or MTurk worker) opens only the campaigns of the study links it came in
through (:class:`CrowdScopeMiddleware`); a new study link (platform parameters in the URL) is the arrival
itself and always goes through.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage

#: The policy of every page; ``{frame_ancestors}`` is filled per response. Styles may be inline (the pages set
#: progress bar widths in ``style`` attributes); scripts, the part an injected payload would need, may not.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'self'; "
    "frame-ancestors {frame_ancestors}"
)


def crowd_worker_of(request):
    """The crowd worker (Prolific, MTurk) signed in on this request, else None (the worker is loaded with the
    user by ``annotate.auth_backend``; staff, researchers, reviewers and local accounts are never crowd workers)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    worker = getattr(user, "worker", None)
    return worker if worker is not None and worker.provider else None


def may_be_framed(request) -> bool:
    """A worker page (``/c/...``) seen by a crowd worker or by a visitor not signed in (a crowd arrival)."""
    if not settings.FACTLAB_CROWD_FRAME_ANCESTORS or not request.path.startswith("/c/"):
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated or crowd_worker_of(request) is not None


class SecurityHeadersMiddleware:
    """CSP and frame rules on every response; crowd workers' cookies made ``SameSite=None`` when the site is
    framed (listed before ``SessionMiddleware`` so that it sees the cookies every inner middleware set)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if may_be_framed(request):
            ancestors = "'self' " + " ".join(settings.FACTLAB_CROWD_FRAME_ANCESTORS)
            if "X-Frame-Options" in response:
                del response["X-Frame-Options"]
        else:
            ancestors = "'none'"
            response["X-Frame-Options"] = "DENY"
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.format(frame_ancestors=ancestors)
        samesite = settings.FACTLAB_CROWD_COOKIE_SAMESITE
        cookies = (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME, CookieStorage.cookie_name)
        set_here = [name for name in cookies if name in response.cookies]
        if set_here and samesite != settings.SESSION_COOKIE_SAMESITE and crowd_worker_of(request) is not None:
            for name in set_here:
                response.cookies[name]["samesite"] = samesite
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
        from annotate.views.arrival import other_campaign_refusal

        if detect_provider(request) is not None:
            return None
        worker = getattr(request.user, "worker", None)  # loaded with the user (annotate.auth_backend)
        return other_campaign_refusal(request, slug, worker)
