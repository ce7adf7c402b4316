"""Guarantee: no gold answer reaches an annotator.

Gold: qualification keys and explanations, trap labels and positions, which entity-question option is the
negative entity. The test crawls every page an annotator can reach by following links (session), calls the
JSON endpoints of the task, fetches every project JavaScript file, and calls every API endpoint as an
annotator with a session and with a token, scanning every response.
"""
from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import NoReverseMatch, get_resolver, reverse

from annotate.frank import content as frank_content
from annotate.models import Assignment, Participation, Trap
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db

NEGATIVE = "Zanzibar Quorn"
TRAPS = {"F1": "The city council did not approve a new budget.", "F6": "She said he expects the schools to open in 2026."}
KEY_FIELDS = re.compile(r"expected_factual|expected_category|negative_entity|\"answer\"|\btrap|layout|gold", re.IGNORECASE)
LINK = re.compile(r"""(?:href|src|action)=["'](/[^"'#?]*)""")
MAX_PAGES = 120


def _explanations(exercise) -> list[str]:
    return [key.explanation for summary in exercise.summaries for key in summary if len(key.explanation) > 12]


QUALIFICATION_KEYS = _explanations(frank_content.QUALIFICATION)
TUTORIAL_KEYS = _explanations(frank_content.TUTORIAL)


def assert_no_gold(text: str, where: str, *, schema: bool = False, tutorial_feedback: bool = False, task_page: bool = False) -> None:
    """Fail when ``text`` carries gold. The API schema may name fields (it describes admin endpoints) but no values."""
    for explanation in QUALIFICATION_KEYS:
        assert explanation not in text, f"{where}: qualification key explanation leaked"
    if not tutorial_feedback:
        for explanation in TUTORIAL_KEYS:
            assert explanation not in text, f"{where}: tutorial key before any answer"
    if not schema:
        leak = KEY_FIELDS.search(text)
        assert leak is None, f"{where}: {leak.group(0)!r} in the response"
    if not task_page:
        assert NEGATIVE not in text, f"{where}: the negative entity is shown outside the entity question"
        for trap in TRAPS.values():
            assert trap not in text, f"{where}: a trap sentence outside the task page"


@pytest.fixture
def world():
    campaign = make_campaign(trap_rate=1.0, tutorial_required=True, qualification_required=True, entity_check_enabled=True)
    document = make_document(campaign, traps=TRAPS, negative_entity=NEGATIVE)
    make_document(campaign, traps=TRAPS, negative_entity=NEGATIVE)
    annotator = make_worker("leak-annotator", password="annotator-pass-123")
    qualify(annotator, campaign)
    newcomer = make_worker("leak-newcomer", password="newcomer-pass-123")
    return {"campaign": campaign, "document": document, "annotator": annotator, "newcomer": newcomer}


def crawl(client: Client, starts: list[str]) -> dict[str, str]:
    """GET every same-site page reachable from ``starts`` by links (bounded); returns final path -> body."""
    pages: dict[str, str] = {}
    requested: set[str] = set()
    queue = deque(starts)
    while queue and len(requested) < MAX_PAGES:
        path = queue.popleft()
        if path in requested or path.startswith(("/accounts/logout", "/admin/logout")):
            continue
        requested.add(path)
        response = client.get(path, follow=True)
        body = b"".join(response.streaming_content).decode(errors="replace") if response.streaming else response.content.decode(errors="replace")
        pages[response.request["PATH_INFO"]] = body  # keyed by where the redirects ended
        if "html" in response.get("Content-Type", ""):
            queue.extend(link for link in LINK.findall(body) if link not in requested)
    return pages


def test_crawled_pages_and_static_files_carry_no_gold(world):
    campaign, annotator, newcomer = world["campaign"], world["annotator"], world["newcomer"]
    slug = campaign.slug

    # A newcomer goes through the tutorial and the qualification (answering everything "correct").
    client = Client()
    client.force_login(newcomer.user)
    pages = crawl(client, ["/", f"/c/{slug}/"])
    for s, summary in enumerate(frank_content.TUTORIAL.summaries):
        for i in range(len(summary)):
            feedback = client.post(
                reverse("annotate:frank-tutorial-check", args=[slug]),
                {"summary": s, "index": i, "factual": True, "categories": []}, content_type="application/json",
            )
            assert feedback.status_code == 200
            assert_no_gold(feedback.content.decode(), "tutorial feedback", tutorial_feedback=True)
    client.post(reverse("annotate:frank-tutorial-done", args=[slug]))
    form = {f"s{s}_{i}_factual": "yes" for s in range(3) for i in range(5)}  # covers any test drawn from the pool
    result = client.post(reverse("annotate:frank-qualification", args=[slug]), form)
    assert result.status_code == 200
    pages["qualification result"] = result.content.decode()
    pages.update({f"newcomer {k}": v for k, v in crawl(client, ["/", f"/c/{slug}/"]).items()})

    # A qualified annotator reaches the task page, answers the entity question and submits.
    client = Client()
    client.force_login(annotator.user)
    task_pages = crawl(client, ["/", f"/c/{slug}/"])
    task_path = reverse("annotate:frank-task", args=[slug])
    assert task_path in task_pages, "the crawl did not reach the task page"
    task_html = task_pages.pop(task_path)
    pages.update(task_pages)
    assignment = Assignment.objects.get(worker=annotator)
    data = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', task_html, re.DOTALL).group(1))
    assert NEGATIVE in data["entity_options"] and "answer" not in data
    assert all(set(sentence) == {"text", "relevant"} for summary in data["summaries"] for sentence in summary["sentences"])
    assert_no_gold(task_html, "task page", task_page=True)

    entity = client.post(
        reverse("annotate:frank-entity", args=[slug, assignment.pk]),
        {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json",
    )
    assert entity.status_code == 200 and entity.json()["correct"] is True
    pages["entity answer"] = entity.content.decode()
    assignment.refresh_from_db()
    rows = [{"answers": [{"factual": True, "categories": [], "seconds": 5}] * (spec["sentences"] + bool(spec["trap"]))} for spec in assignment.layout["summaries"]]
    submitted = client.post(
        reverse("annotate:frank-submit", args=[slug, assignment.pk]), {"summaries": rows, "submission_key": "k"}, content_type="application/json"
    )
    pages["submit"] = submitted.content.decode()
    pages.update({f"after {k}": v for k, v in crawl(client, [f"/c/{slug}/done/?submitted=1", "/"]).items() if k != task_path})

    # Someone who answers the entity question wrongly learns nothing about the right option.
    wrong_worker = make_worker("leak-wrong")
    qualify(wrong_worker, campaign)
    wrong_client = Client()
    wrong_client.force_login(wrong_worker.user)
    wrong_client.get(task_path)
    wrong_assignment = Assignment.objects.get(worker=wrong_worker)
    right = wrong_assignment.layout["entity"]["answer"]
    response = wrong_client.post(
        reverse("annotate:frank-entity", args=[slug, wrong_assignment.pk]), {"choice": (right + 1) % 3}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["correct"] is False
    pages["wrong entity answer"] = response.content.decode()
    # The first wrong answer is forgiven (Prolific's rule), and the item's page, reloaded, still tells nothing.
    assert not Participation.objects.get(worker=wrong_worker).is_blocked
    assert_no_gold(wrong_client.get(task_path).content.decode(), "task page after a wrong entity answer", task_page=True)

    assert len(pages) >= 8, sorted(pages)
    for where, body in pages.items():
        assert_no_gold(body, where)

    # Every JavaScript file the project serves.
    static_roots = [Path(d) for d in settings.STATICFILES_DIRS] + [Path(settings.BASE_DIR) / app / "static" for app in ("annotate", "metrics_service")]
    scripts = [p for root in static_roots if root.is_dir() for p in root.rglob("*.js")]
    assert scripts, "no project JavaScript found"
    for script in scripts:
        assert_no_gold(script.read_text(), str(script))
    # The two traps of the document, plus the factual copies of summary-like article sentences added once.
    traps = Trap.objects.filter(document=world["document"])
    assert traps.exclude(code="F0").count() == 2 and traps.filter(code="F0").count() <= 4


def _api_paths(campaign, document) -> list[str]:
    """Every API route, filled with a real campaign slug and object id."""
    resolver = get_resolver().namespace_dict["api"][1]
    names = sorted(k for k in resolver.reverse_dict if isinstance(k, str))
    paths = []
    for name in names:
        for kwargs in (
            {}, {"slug": campaign.slug}, {"pk": document.pk}, {"slug": campaign.slug, "pk": document.pk},
            {"slug": campaign.slug, "filename": "correlations.csv"},
        ):
            try:
                paths.append(reverse(f"api:{name}", kwargs=kwargs))
                break
            except NoReverseMatch:
                continue
    assert len(paths) == len(names), "an API route could not be filled"
    return paths


def test_api_gives_annotators_no_data_with_session_or_token(world):
    campaign, annotator = world["campaign"], world["annotator"]
    session = Client()
    session.force_login(annotator.user)
    token_response = Client().post("/api/auth/token/", {"username": "leak-annotator", "password": "annotator-pass-123"}, content_type="application/json")
    assert token_response.status_code in (200, 201)
    token = token_response.json()["token"]
    with_token = Client(HTTP_AUTHORIZATION=f"Token {token}")
    paths = _api_paths(campaign, world["document"])
    assert len(paths) >= 20
    open_paths = {"/api/", "/api/auth/token/"}
    for path in paths:
        for label, client in (("session", session), ("token", with_token)):
            response = client.get(path, HTTP_ACCEPT="application/json")
            body = response.content.decode(errors="replace")
            describes_api = path.startswith(("/api/schema", "/api/docs", "/api/redoc"))
            if not describes_api and path not in open_paths:
                assert response.status_code in (401, 403, 404, 405), f"{label} {path}: {response.status_code}"
            assert_no_gold(body, f"{label} GET {path}", schema=describes_api)


def test_bump_pages_carry_no_qualification_key():
    """BUMP Task 1 (which edit has which error type) and Task 2 (which summary is accurate, and its error type)
    keys stay on the server."""
    from annotate.bump import content as bump_content
    from annotate.bump.services import create_bump_campaign
    from annotate.models import CampaignStatus
    from tests.factories import make_bump_document

    task1 = create_bump_campaign("leak-t1", "Task 1", "bump_taxonomy", status=CampaignStatus.RUNNING, shipped_qualification_accepted=True)
    task2 = create_bump_campaign("leak-t2", "Task 2", "bump_free", status=CampaignStatus.RUNNING, shipped_qualification_accepted=True)
    make_bump_document(task1, types=["extrinsic_entity"])
    make_bump_document(task2)
    pages: dict[str, str] = {}
    for campaign in (task1, task2):
        newcomer = make_worker()
        client = Client()
        client.force_login(newcomer.user)
        pages.update({f"{campaign.slug} newcomer {k}": v for k, v in crawl(client, [f"/c/{campaign.slug}/"]).items()})
        annotator = make_worker()
        qualify(annotator, campaign)
        client.force_login(annotator.user)
        pages.update({f"{campaign.slug} annotator {k}": v for k, v in crawl(client, [f"/c/{campaign.slug}/"]).items()})
    qualification_pages = [body for where, body in pages.items() if "qualification" in where]
    assert len(qualification_pages) >= 2 and any("bump/task" in where for where in pages)
    for where, body in pages.items():
        # a pre-selected option is an attribute inside a tag; the words in the page's prose are no leak
        leak = re.search(r"error_type|\"accurate\"|data-(?:answer|key|gold|type)=|<[^>]*\b(?:selected|checked)\b[^>]*>", body)
        assert leak is None, f"{where}: {leak.group(0)!r}"
        for n in range(1, 7 * bump_content.TAXONOMY_EDITS_PER_TYPE + 1):  # never a question next to a type's code
            for code in bump_content.REQUESTABLE_CODES:
                assert f'e{n}" value="{code}' not in body and f"e{n}:{code}" not in body and f"s{n}:{code}" not in body
