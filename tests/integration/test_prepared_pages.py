"""FRANK pages prepared after import: claims and page loads do no NLP, and show exactly what the
database path (``present_page`` over the stored rows) shows."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.frank import prepared
from annotate.frank.entities import entity_pool, entity_question, usable_pool
from annotate.frank.protocol import (
    _task_page_data_from_database,
    build_layout,
    task_page_data,
)
from annotate.models import (
    Assignment,
    Campaign,
    CampaignStatus,
    Document,
    DocumentPage,
    PayDecision,
    PayDecisionKind,
    Trap,
)
from annotate.services.imports import import_dataset
from annotate.services.overlap import sentence_page_features
from annotate.services.predictable_answers import enough_contradicted
from annotate.services.quality import worker_checks
from tests.celery_helpers import worker_database_url
from tests.conftest import REPO_ROOT
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db

SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"
TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)


def imported_subset(settings, slug: str = "prepared") -> Campaign:
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = True
    import_dataset("frank", [SUBSET], campaign_slug=slug, campaign_kind="frank")
    campaign = Campaign.objects.get(slug=slug)
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.RUNNING, trap_rate=1.0)
    campaign.refresh_from_db()
    return campaign


def test_import_prepares_every_page_once(settings):
    campaign = imported_subset(settings)
    documents = Document.objects.filter(campaign=campaign)
    assert DocumentPage.objects.filter(document__campaign=campaign, version=prepared.VERSION).count() == documents.count() == 20
    for document in documents:
        pool = document.metadata["entity_pool"]
        assert set(pool) == {"present", "absent"} and pool["present"]
    # Re-running the job finds nothing left to do.
    assert prepared.prepare_campaign(campaign) == 0


def test_claim_and_page_of_a_prepared_document_need_no_spacy_and_few_queries(client, settings, monkeypatch):
    campaign = imported_subset(settings)

    def refuse(*args, **kwargs):
        raise AssertionError("spaCy was called on the request path")

    monkeypatch.setattr("annotate.nlp.get_nlp", refuse)
    worker = make_worker()
    qualify(worker, campaign)
    client.force_login(worker.user)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert page.status_code == 200
    data = json.loads(TASK_DATA.search(page.content.decode()).group(1))
    assert data["summaries"] and data["entity_options"]
    # No query per summary, trap or other document: a fixed number whatever the campaign's size.
    assert len(queries) <= 40, [q["sql"][:80] for q in queries.captured_queries]
    assert not any("annotate_trap" in q["sql"] or "annotate_summary" in q["sql"] for q in queries.captured_queries)


def test_prepared_page_shows_exactly_what_the_database_path_shows(settings):
    campaign = imported_subset(settings)
    checked = 0
    for item in campaign.items.select_related("document")[:20]:
        for seed in range(3):
            layout = build_layout(item.document, 1.0, random.Random(seed))
            assignment = Assignment(pk=1, item=item, layout=layout)
            for k in (1, 2, 3):
                fast = task_page_data(assignment, k)
                slow = _task_page_data_from_database(assignment, k)
                assert fast == slow
                checked += 1
    assert checked == 180


def test_a_claim_copies_the_page_features_and_reading_check_names_the_page_keeps(settings):
    """The features and reading-check names kept in a prepared page are those computed from the sentences
    the layout shows (a trap in place of a summary sentence) and from the article's entity pool."""
    campaign = imported_subset(settings)
    trapped = 0
    for item in campaign.items.select_related("document")[:15]:
        document = item.document
        page = prepared.prepared_page(document)
        assert page["entity_pool"] == usable_pool(document.text, entity_pool(document))
        raw = {s["id"]: s["raw"] for s in page["summaries"]}
        trap_text = {t["id"]: t["text"] for t in page["traps"]}
        for seed in range(2):
            layout = build_layout(document, 1.0, random.Random(seed))
            for row in layout["summaries"]:
                shown = list(raw[row["summary"]])
                if row["trap"] is not None:
                    shown[row["trap_at"]] = trap_text[row["trap"]]
                    trapped += 1
                assert row["features"] == sentence_page_features(shown, page["article"])
            # The same question as filtering the pool in the claim would ask, for the same worker's random source.
            assert entity_question(document, random.Random(seed), page["entity_pool"]) == entity_question(document, random.Random(seed))
    assert trapped > 10


def test_stale_or_missing_pages_are_prepared_on_the_first_claim():
    campaign = make_campaign(trap_rate=1.0)
    document = make_document(campaign)
    make_document(campaign, article=["Pedro Alvarez met Laura Chen in Lisbon.", "The Orbis Trust paid for it."])
    assert not DocumentPage.objects.exists()
    first = prepared.prepared_page(document)
    stored = DocumentPage.objects.get(document=document)
    assert stored.version == prepared.VERSION and stored.data == first
    DocumentPage.objects.filter(pk=stored.pk).update(version="older-code", data={})
    assert prepared.prepared_page(Document.objects.get(pk=document.pk)) == first  # recomputed, not served stale
    assert DocumentPage.objects.get(document=document).version == prepared.VERSION


def test_a_layout_with_a_trap_the_page_does_not_know_is_shown_from_the_database():
    campaign = make_campaign(trap_rate=1.0)
    document = make_document(campaign)
    item = campaign.items.get(document=document)
    layout = build_layout(document, 1.0, random.Random(3))
    extra = Trap.objects.create(document=document, code="F1", text="The council did not approve the budget.", expected_factual=False, expected_category="RelE")
    layout["summaries"][0]["trap"] = extra.pk
    data = task_page_data(Assignment(pk=1, item=item, layout=layout), 2)
    shown_at = layout["summaries"][0].get("trap_at", -1)  # in place of a sentence, or after the last one
    assert data["summaries"][0]["sentences"][shown_at]["text"].lower().startswith("the council did not approve the budget")


def test_prepare_pages_command(settings):
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    import_dataset("frank", [SUBSET], campaign_slug="by-hand", campaign_kind="frank")
    assert not DocumentPage.objects.exists()
    out = StringIO()
    call_command("prepare_pages", "--campaign", "by-hand", "--no-progress", stdout=out)
    assert "by-hand: 20 document(s) prepared" in out.getvalue()
    out = StringIO()
    call_command("prepare_pages", "--campaign", "by-hand", "--no-progress", stdout=out)
    assert "0 document(s) prepared" in out.getvalue()
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command("prepare_pages", "--campaign", "nope", "--no-progress")


def test_an_item_cycle_costs_a_fixed_small_number_of_queries(client, settings, django_capture_on_commit_callbacks):
    """Task page and submit (with the reading check's answer) of a prepared campaign: the query counts the load benchmark's
    throughput rests on (ORM work is most of a web worker's CPU per cycle), whatever the campaign's size."""
    campaign = imported_subset(settings)
    # As in production: a claim looks for abandoned slots at most every few seconds per campaign and process
    # (the tests' setting of 0 makes every claim look), so the first cycle does and the others do not.
    settings.FACTLAB_SLOT_SWEEP_SECONDS = 5
    # No blocking: the worker answers "factual" everywhere, so with random traps its score could fall below
    # the threshold within three items, and a blocked worker's page has no task (as in the load benchmark).
    Campaign.objects.filter(pk=campaign.pk).update(trap_rate=0.5, pay_per_item="0.10", trap_block_threshold=0.0, control_block_threshold=0.0)
    worker = make_worker()
    qualify(worker, campaign)
    client.force_login(worker.user)
    counts, rule_applied = [], False
    for _ in range(3):
        with CaptureQueriesContext(connection) as page_queries:
            page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
        data = json.loads(TASK_DATA.search(page.content.decode()).group(1))
        document_text = Assignment.objects.get(pk=data["assignment"]).item.document.text.lower()
        # The reading check's answer goes with the submission (no request of its own).
        choice = next(i for i, option in enumerate(data["entity_options"]) if option.lower() not in document_text)
        answers = [{"answers": [{"factual": True, "categories": []} for _ in s["sentences"]]} for s in data["summaries"]]
        released_before = PayDecision.objects.filter(worker=worker, kind=PayDecisionKind.RELEASED).count()
        # As in production, what the submission keeps once it commits (its answers for later checks) is kept.
        with CaptureQueriesContext(connection) as submit_queries, django_capture_on_commit_callbacks(execute=True):
            response = client.post(data["urls"]["submit"], {"submission_key": data["submission_key"], "summaries": answers,
                                                             "entity_choice": choice}, content_type="application/json")
        assert response.status_code == 200 and response.json()["ok"] and not response.json()["reading_check_missed"]
        # Once per worker, the submit whose score first exists pays the items held until then: a fixed 5 more
        # queries (read the holds and their settled keys, one insert of decisions, read ledger keys, one insert).
        settles = PayDecision.objects.filter(worker=worker, kind=PayDecisionKind.RELEASED).count() > released_before
        # Once per worker, the submit whose answers against known labels first reach the predictable-answers rule's
        # minimum reads the earlier items' layouts and answers, which no cache kept since nothing compared them yet:
        # 2 more queries. Which submit that is depends on the item claimed and its traps' places (random per item).
        rule_applies = enough_contradicted(worker_checks(worker, campaign))
        catches_up = rule_applies and not rule_applied and len(counts) > 0
        rule_applied = rule_applied or rule_applies
        counts.append((len(page_queries), len(submit_queries) - (5 if settles else 0) - (2 if catches_up else 0)))
    # The first cycle may run one-off queries of a fresh process (caches of content types and the like).
    page_n, submit_n = (max(c[i] for c in counts[1:]) for i in range(2))
    print("queries per item cycle (page, submit less a settlement of held pay and a first read of earlier answers):", counts)
    # submit: the participation locked, with whether pay held until the worker's score existed is left to settle
    # (trusted when the row locked is the one the statement saw); the assignment locked with its item's turn and the
    # expected answers of the item's traps; the reading check's answer, the sentence answers and the trap answers
    # inserted in one statement, and the assignment and the participation's counters written in another; the
    # submission's own gold and trap answers added to the worker's kept counts (1 read of both, 1 update: the
    # history is not scored again), the co-workers an independence check compares on this item alone (1; with
    # co-workers, 1 more adds it to the pairs' tallies), the pay decisions (this worker's bonus refused: too fast)
    # appended with the pay and bonus ledger entries in one statement; the page's attention signals ride in the
    # submit's own update of the assignment, with the item's reading words counted when the page was prepared and
    # kept in the layout by the claim; a worker with answers against known labels (this one: "factual" on
    # erroneous traps) also has them compared with the page features (1: the recent items, whose answers the cache
    # keeps, with the submitted item's answers with known labels). The submit finds the campaign in the cache.
    # page: the campaign comes with the participation and what the ledger owes the worker (shown on the page); the
    # participation locked with the worker's live assignment (none here: trusted when the row locked is the one the
    # statement saw, since every claim writes its count of claims); the candidates; the prepared page with the
    # claim's locked item; the new assignment, the item's live count and the participation's claims in one
    # statement; the worker's first candidate claimed without a savepoint of its own (a contended one retries the
    # claim), its live assignments counted with its lock (read again only when that count and the stored one differ).
    # In this test's transaction each request's transaction is a savepoint (2 of the counts), as it is BEGIN and
    # COMMIT in production.
    assert page_n <= 8 and submit_n <= 12, counts
    # PostgreSQL binds the parameters (settings: server_side_binding), so each of the cycle's statements has one
    # text whatever the worker and item, and psycopg prepared it after its second run on this connection: the
    # claim's lock of the item and the submit's update of the assignment are parsed and planned once, not per cycle.
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('UPDATE "annotate_assignment"' in sql for sql in prepared), prepared
    assert any('FROM "annotate_item"' in sql and "FOR UPDATE" in sql for sql in prepared), prepared


# A statement run three times on one connection, then the connection's prepared statements, in a process of its own
# (settings read DB_SERVER_SIDE_BINDING when they load).
_PREPARED_AFTER_REPEATS = """
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    for value in (1, 2, 3):
        cursor.execute("SELECT %s::int + 1", [value])
    cursor.execute("SELECT count(*) FROM pg_prepared_statements")
    print(cursor.fetchone()[0])
"""


@pytest.mark.parametrize("switch, prepared", [(None, 1), ("1", 1), ("0", 0)])
def test_statements_are_prepared_per_connection_unless_switched_off_for_a_pooler(db, switch, prepared):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "factlab.settings", "DATABASE_URL": worker_database_url()}
    env.pop("DB_SERVER_SIDE_BINDING", None)
    if switch is not None:
        env["DB_SERVER_SIDE_BINDING"] = switch
    run = subprocess.run([sys.executable, "-c", _PREPARED_AFTER_REPEATS], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) == prepared
