"""Rate limits on the login and submission endpoints (django-ratelimit, counted in the shared cache).

Which requests are limited is decided from the resolved URL name, so the protocol views need no decorator:

* **login**: POSTs to a login view (``LOGIN_VIEW_NAMES`` plus ``settings.FACTLAB_RATELIMIT_LOGIN_VIEWS``),
  counted per client IP and, separately, per username tried; rate ``settings.FACTLAB_RATELIMIT_LOGIN``.
* **submit**: POSTs to a view whose URL name ends in ``submit`` (every protocol's and the API's submit
  endpoints follow that naming) or is listed in ``settings.FACTLAB_RATELIMIT_SUBMIT_VIEWS``, counted per
  account (session user, else API token, else IP); rate ``settings.FACTLAB_RATELIMIT_SUBMIT``.

With the cache (Redis) unreachable the limits fail open: requests pass and a warning is logged.
A limited request gets a 429 with a message saying what to do (JSON for API/JSON clients) and a
``Retry-After`` header; the view never runs, so nothing is stored.
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from django_ratelimit.core import _split_rate, get_usage

from annotate import json_input

LOGIN_VIEW_NAMES = frozenset({"login", "admin:login", "api:token"})
SUBMIT_SUFFIX = "submit"
logger = logging.getLogger(__name__)


#: IPv6 prefix length treated as one network: a single subscriber or host is usually given a whole /64,
#: so counting full IPv6 addresses would hand one attacker 2**64 fresh "addresses".
IPV6_NETWORK_PREFIX = 64


def network_key(raw_address: str) -> str:
    """The network an address counts for in every per-address limit: the IPv4 address itself, or the
    IPv6 /64 it lies in ("" for anything that is not an IP address).

    One function for all limits (new crowd identities, qualification attempts, logins, anonymous submits),
    so that they all count a network the same way.
    """
    try:
        ip = ipaddress.ip_address((raw_address or "").strip())
    except ValueError:
        return ""
    if ip.version == 6:
        if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 client a.b.c.d
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_NETWORK_PREFIX}", strict=False))
    return str(ip)


def _client_ip(request: HttpRequest) -> str:
    """The request's network key (:func:`network_key`), "unknown" without a usable address."""
    return network_key(request.META.get("REMOTE_ADDR", "")) or "unknown"


def account_key(group: str, request: HttpRequest) -> str:
    """Who is submitting: the session user, else a hash of the API token, else the client IP."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    auth = request.META.get("HTTP_AUTHORIZATION", "")
    if auth:
        return "token:" + hashlib.sha256(auth.encode()).hexdigest()
    return f"ip:{_client_ip(request)}"


def ip_key(group: str, request: HttpRequest) -> str:
    return _client_ip(request)


def username_key(group: str, request: HttpRequest) -> str:
    """The username tried (case-folded), so one account cannot be guessed at from many addresses."""
    username = request.POST.get("username", "")
    if not username and "application/json" in request.META.get("CONTENT_TYPE", ""):
        try:
            body = json_input.loads(request.body or b"{}")
        except ValueError:
            body = {}
        username = body.get("username", "") if isinstance(body, dict) else ""
    return str(username).strip().casefold()[:150]


def limited_group(request: HttpRequest, view_name: str) -> str | None:
    """The rate-limit group of a request to ``view_name``: "login", "submit" or None (not limited)."""
    if request.method != "POST" or not view_name:
        return None
    if view_name in LOGIN_VIEW_NAMES or view_name in getattr(settings, "FACTLAB_RATELIMIT_LOGIN_VIEWS", ()):
        return "login"
    if view_name.rsplit(":", 1)[-1].endswith(SUBMIT_SUFFIX) or view_name in getattr(settings, "FACTLAB_RATELIMIT_SUBMIT_VIEWS", ()):
        return "submit"
    return None


def _checks(group: str) -> list[tuple[str, Callable[[str, HttpRequest], str], str]]:
    """(counter name, key function, rate) triples that must all pass for a request of ``group``."""
    if group == "login":
        rate = settings.FACTLAB_RATELIMIT_LOGIN
        return [("login-ip", ip_key, rate), ("login-username", username_key, rate)]
    return [("submit", account_key, settings.FACTLAB_RATELIMIT_SUBMIT)]


def exceeded(request: HttpRequest, group: str) -> int | None:
    """Count this request; return the seconds to wait when one of the group's rates is exceeded, else None."""
    wait = None
    for counter, key, rate in _checks(group):
        try:
            usage = get_usage(request, group=f"factlab-{counter}", key=key, rate=rate, method="POST", increment=True)
        except Exception as exc:  # a cache backend that raises instead of missing
            logger.warning("rate limit %s not counted, the cache is unreachable (failing open): %s", counter, exc)
            continue
        if usage is None:  # RATELIMIT_FAIL_OPEN: the count could not be read or written
            logger.warning("rate limit %s not counted, the cache is unreachable (failing open)", counter)
            continue
        if usage["should_limit"]:
            left = usage["time_left"] if usage["time_left"] > 0 else _split_rate(rate)[1]
            wait = max(wait or 0, left)
    return wait


def _wants_json(request: HttpRequest) -> bool:
    return (
        request.path.startswith("/api/")
        or "application/json" in request.META.get("CONTENT_TYPE", "")
        or "application/json" in request.META.get("HTTP_ACCEPT", "")
    )


def too_many_requests(request: HttpRequest, *, group: str, retry_after: int) -> HttpResponse:
    """The 429 answer: what was limited and when to try again."""
    what = "login attempts" if group == "login" else "submissions"
    message = f"Too many {what} from your account or address. Please wait {retry_after} seconds and try again."
    if _wants_json(request):
        response: HttpResponse = JsonResponse({"error": "rate_limited", "detail": message}, status=429)
    else:
        response = HttpResponse(
            f"<!doctype html><title>Too many requests</title><h1>Too many requests</h1><p>{escape(message)}</p>",
            status=429,
        )
    response["Retry-After"] = str(retry_after)
    return response


class RateLimitMiddleware:
    """Answer 429 before the view runs when a login or submission rate is exceeded."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        match = getattr(request, "resolver_match", None)
        group = limited_group(request, match.view_name if match else "")
        if group is None:
            return None
        wait = exceeded(request, group)
        if wait is None:
            return None
        return too_many_requests(request, group=group, retry_after=wait)
