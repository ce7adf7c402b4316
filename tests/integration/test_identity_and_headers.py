"""Identity and headers: a crowd identity never changes inside a session, only crowd workers' pages may be
framed and only their cookies are SameSite=None, and every page carries a CSP that runs no inline script.

Requests go through the real middleware stack and views (Django test client, PostgreSQL, the Redis cache).
"""
from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.bump.review import make_reviewer
from annotate.models import Worker
from annotate.providers import study_token
from tests.conftest import REPO_ROOT
from tests.factories import (
    make_bump_document,
    make_campaign,
    make_document,
    make_worker,
)
from tests.integration.test_security import production_env, run_python

pytestmark = pytest.mark.django_db

CSP_SCRIPTS = "script-src 'self';"


def an_ip() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def prolific_link(campaign, pid: str) -> str:
    return f"/c/{campaign.slug}/?study={study_token(campaign)}&PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se-{pid}"


def mturk_link(campaign, worker_id: str) -> str:
    return (
        f"/c/{campaign.slug}/?study={study_token(campaign)}&workerId={worker_id}&assignmentId=A-{worker_id}&hitId=H1"
        "&turkSubmitTo=https://workersandbox.mturk.com"
    )


def signed_in_user_id(client: Client) -> int | None:
    value = client.session.get("_auth_user_id")
    return int(value) if value is not None else None


# --- a crowd identity never changes inside a session


@pytest.mark.parametrize("link", [prolific_link, mturk_link])
def test_a_link_with_another_identity_does_not_switch_the_session(link):
    """Attack: one cross-site GET of a study link with a new id switched the participant's session to that id,
    and the work done afterwards was credited to it."""
    campaign = make_campaign()
    make_document(campaign)
    browser = Client(enforce_csrf_checks=True)
    first, second = f"A{uuid.uuid4().hex[:12]}", f"B{uuid.uuid4().hex[:12]}"
    assert browser.get(link(campaign, first), REMOTE_ADDR=an_ip()).status_code == 302
    original = Worker.objects.get(external_id=first)

    conflict = browser.get(link(campaign, second), REMOTE_ADDR=an_ip())
    page = conflict.content.decode()
    assert conflict.status_code == 409 and "This link is for another participant" in page
    assert f"{original.provider} {first}" in page and f"{original.provider} {second}" in page
    assert signed_in_user_id(browser) == original.user_id
    assert not Worker.objects.filter(external_id=second).exists()
    # The same link with the identity signed in goes on as before.
    assert browser.get(link(campaign, first), REMOTE_ADDR=an_ip()).status_code == 302
    assert signed_in_user_id(browser) == original.user_id

    # The page offers to sign out (a POST with the CSRF token) and come back to the link.
    form = re.search(r'<form method="post" action="([^"]+)" id="sign-out-and-continue">(.*?)</form>', page, re.DOTALL)
    assert form and form.group(1) == reverse("logout")
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(2)))
    assert browser.post(form.group(1), {"next": fields["next"]}).status_code == 403  # no CSRF token: nothing happens
    assert signed_in_user_id(browser) == original.user_id
    signed_out = browser.post(form.group(1), {k: v.replace("&amp;", "&") for k, v in fields.items()})
    assert signed_out.status_code == 302 and signed_out["Location"] == link(campaign, second)
    assert signed_in_user_id(browser) is None
    assert browser.get(signed_out["Location"], REMOTE_ADDR=an_ip()).status_code == 302
    assert signed_in_user_id(browser) == Worker.objects.get(external_id=second).user_id


def test_a_signed_in_account_is_offered_to_sign_out_too():
    campaign = make_campaign()
    staff = make_worker(f"staff-{uuid.uuid4().hex[:6]}", staff=True)
    browser = Client()
    browser.force_login(staff.user)
    pid = f"P{uuid.uuid4().hex[:12]}"
    response = browser.get(prolific_link(campaign, pid), REMOTE_ADDR=an_ip())
    page = response.content.decode()
    assert response.status_code == 403 and "You are signed in with your own account" in page
    assert staff.user.username in page and f"prolific {pid}" in page and 'id="sign-out-and-continue"' in page
    assert signed_in_user_id(browser) == staff.user_id


# --- frames and cookies


def test_only_crowd_workers_pages_may_be_framed():
    campaign = make_campaign(kind="bump_taxonomy")
    make_bump_document(campaign)
    crowd = Client()
    crowd.get(prolific_link(campaign, f"P{uuid.uuid4().hex[:12]}"), REMOTE_ADDR=an_ip())
    task = crowd.get(reverse("annotate:bump-qualification", args=[campaign.slug]))
    assert task.status_code == 200
    assert "X-Frame-Options" not in task
    assert "frame-ancestors 'self' " + " ".join(settings.FACTLAB_CROWD_FRAME_ANCESTORS) in task["Content-Security-Policy"]

    reviewer = make_worker(f"reviewer-{uuid.uuid4().hex[:6]}")
    make_reviewer(reviewer.user)
    staff = make_worker(f"staff-{uuid.uuid4().hex[:6]}", staff=True)
    for worker in (reviewer, staff):
        browser = Client()
        browser.force_login(worker.user)
        review = browser.get(reverse("annotate:bump-review", args=[campaign.slug]))
        assert review.status_code == 200
        assert review["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in review["Content-Security-Policy"]
    manage = browser.get(reverse("annotate:manage-campaign", args=[campaign.slug]))
    assert manage["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in manage["Content-Security-Policy"]


@override_settings(FACTLAB_CROWD_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=True, CSRF_COOKIE_SECURE=True)
def test_only_crowd_workers_cookies_are_samesite_none():
    campaign = make_campaign()
    make_document(campaign)
    crowd = Client()
    arrival = crowd.get(prolific_link(campaign, f"P{uuid.uuid4().hex[:12]}"), REMOTE_ADDR=an_ip())
    assert arrival.cookies[settings.SESSION_COOKIE_NAME]["samesite"] == "None"
    assert arrival.cookies["factlab_crowd"]["samesite"] == "None"
    task = crowd.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert task.status_code == 200
    csrf = arrival.cookies.get(settings.CSRF_COOKIE_NAME) or task.cookies.get(settings.CSRF_COOKIE_NAME)
    assert csrf is not None and csrf["samesite"] == "None"

    for role in ("staff", "researcher", "reviewer"):
        user = make_worker(f"{role}-{uuid.uuid4().hex[:6]}", staff=role == "staff").user
        if role == "researcher":
            from annotate.roles import make_researcher

            make_researcher(user)
        if role == "reviewer":
            make_reviewer(user)
        browser = Client()
        login_page = browser.get(reverse("login"))
        assert login_page.cookies[settings.CSRF_COOKIE_NAME]["samesite"] == "Lax"
        signed_in = browser.post(reverse("login"), {"username": user.username, "password": "pw-factlab-1"}, REMOTE_ADDR=an_ip())
        assert signed_in.status_code == 302, role
        assert signed_in.cookies[settings.SESSION_COOKIE_NAME]["samesite"] == "Lax", role
        assert signed_in.cookies[settings.CSRF_COOKIE_NAME]["samesite"] == "Lax", role


def test_production_settings_keep_sessions_lax_and_crowd_cookies_none():
    proc = run_python(
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps([settings.SESSION_COOKIE_SAMESITE, settings.CSRF_COOKIE_SAMESITE, "
        "settings.FACTLAB_CROWD_COOKIE_SAMESITE, settings.X_FRAME_OPTIONS]))",
        production_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["Lax", "Lax", "None", "DENY"]


# --- Content-Security-Policy


def _concrete_paths(resolver: URLResolver, prefix: str, slug: str) -> list[str]:
    """Every route of the URL configuration with its parameters filled in (slugs with a real campaign's)."""
    paths = []
    for entry in resolver.url_patterns:
        route = str(entry.pattern)
        if route.startswith("^"):  # regex routes (the admin's catch-all and a few of its views)
            route = re.sub(r"\(\?P<\w+>[^)]*\)", "1", route).strip("^$").replace("\\", "")
            if any(c in route for c in "()[]?*+"):
                continue
        route = re.sub(r"<slug:\w+>", slug, route)
        route = re.sub(r"<(int:)?\w+>", "1", route)
        route = re.sub(r"<(str|path):\w+>", "x", route)
        if isinstance(entry, URLResolver):
            paths += _concrete_paths(entry, prefix + route, slug)
        elif isinstance(entry, URLPattern):
            paths.append(prefix + route)
    return sorted(set(paths))


def test_every_page_carries_a_csp_that_runs_no_inline_script(admin_client):
    campaign = make_campaign()
    make_document(campaign)
    paths = _concrete_paths(get_resolver(), "/", campaign.slug)
    assert len(paths) > 80 and f"/c/{campaign.slug}/frank/task/" in paths and "/api/docs/" in paths
    anonymous = Client()
    for path in paths:
        for client in (admin_client, anonymous):
            response = client.get(path)
            policy = response.get("Content-Security-Policy", "")
            assert CSP_SCRIPTS in policy and "object-src 'none'" in policy and "frame-ancestors" in policy, (path, response.status_code)


def test_templates_hold_no_inline_script_or_handler():
    """The CSP would refuse them: scripts live in static files and take their data from data-* attributes."""
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)
    handler = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
    found = []
    for template in sorted(Path(REPO_ROOT, "templates").rglob("*.html")):
        text = template.read_text()
        found += [f"{template.name}: {m.group(0)[:60]}" for pattern in (inline_script, handler) for m in pattern.finditer(text)]
        found += [f"{template.name}: javascript: URL" for _ in re.finditer(r"javascript:", text, re.IGNORECASE)]
    assert found == []
