"""The statements every task page, claim and submission runs read what their answer needs, whatever PostgreSQL
believes of the tables: psycopg prepares a statement after its second run on a connection, and PostgreSQL then
plans it once for any parameters (a generic plan), from the statistics of the moment. For a new campaign those
say the assignment, judgement and ledger tables are empty (the import analyzed them so); a plan chosen for empty
tables that reads a worker's whole history, every gold label or the whole ledger costs more at every item as the
campaign runs. The test plans each statement as it was run, generically, on statistics taken before any work,
and checks how each table is read."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone
from psycopg import sql as psycopg_sql

from annotate.models import Assignment, AssignmentStatus, BonusEntry, Item, PayDecision, PayDecisionKind, Worker
from benchmarks.adversary_bot import SlipReader, run_worker, setup_campaign
from tests.factories import make_worker

pytestmark = pytest.mark.django_db

TABLES = (
    "annotate_item", "annotate_document", "annotate_goldlabel", "annotate_trap", "annotate_assignment",
    "annotate_sentencejudgement", "annotate_trapanswer", "annotate_paydecision", "annotate_bonusentry", "annotate_participation",
)


def statements_of_one_item(frank_dir) -> list[tuple[str, tuple | dict]]:
    """The (SQL, parameters) a worker's claim and submission of an item run, after 12 items of history, on
    statistics analyzed when the campaign had no work yet."""
    if connection.vendor != "postgresql":
        pytest.skip("generic plans are PostgreSQL's")
    campaign = setup_campaign(frank_dir, 16, slug="generic-plans", private_gold=True, min_seconds_per_sentence=0.0,
                              control_block_threshold=0.0, trap_block_threshold=0.0)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(TABLES)}")  # in the test's transaction: undone with it
    worker = make_worker()
    fill_another_campaign(frank_dir, worker)
    client = Client()
    client.force_login(worker.user)
    run_worker(client, campaign.slug, SlipReader(slips=0.1), items=12, seconds_per_sentence=5.0)
    seen: list[tuple[str, tuple | dict]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, dict(params) if isinstance(params, dict) else tuple(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        run = run_worker(client, campaign.slug, SlipReader(slips=0.1), items=1, seconds_per_sentence=5.0)
    assert run.submitted == 1 and not run.stopped, run
    return seen


def fill_another_campaign(frank_dir, worker: Worker, workers: int = 200) -> None:
    """Work in another campaign, added after the statistics were taken (as a running platform has): 3,200
    submitted assignments of other workers and as many pay decisions, and 1,000 ledger entries of ``worker``, so
    that reading every row costs what it would."""
    other = setup_campaign(frank_dir, 16, slug="generic-plans-elsewhere")
    items = list(Item.objects.filter(campaign=other))
    users = get_user_model().objects.bulk_create(get_user_model()(username=f"elsewhere-{i}") for i in range(workers))
    crowd = Worker.objects.bulk_create(Worker(user=user) for user in users)
    now = timezone.now()
    done = Assignment.objects.bulk_create(
        Assignment(item=item, worker=worker, status=AssignmentStatus.SUBMITTED, submitted_at=now, expires_at=now)
        for worker in crowd for item in items
    )
    PayDecision.objects.bulk_create(
        PayDecision(key=f"refused:elsewhere:{a.pk}", kind=PayDecisionKind.REFUSED, worker_id=a.worker_id, campaign=other,
                    assignment=a, amount=Decimal("0.10"), reason="filler")
        for a in done
    )
    BonusEntry.objects.bulk_create(
        BonusEntry(key=f"pay:elsewhere:{worker.pk}:{i}", worker=worker, campaign=other, amount=Decimal("0.10"), reason="filler")
        for i in range(1000)
    )


def generic_plan(sql: str, params: tuple | dict) -> dict:
    """PostgreSQL's generic plan of the statement (``EXPLAIN`` of a prepared statement forced generic)."""
    if isinstance(params, dict):  # named placeholders: each name one parameter, wherever it appears
        names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
        numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", sql).replace("%%", "%")
        params = tuple(params[name] for name in names)
    else:
        counter = iter(range(1, 10_000))
        numbered = re.sub(r"%s", lambda _: f"${next(counter)}", sql).replace("%%", "%")
    raw = connection.connection
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE generic_probe AS {numbered}")
        try:
            values = ", ".join(psycopg_sql.Literal(value).as_string(raw) for value in params)
            cursor.execute(f"EXPLAIN (FORMAT JSON) EXECUTE generic_probe({values})")
            (plan,) = cursor.fetchone()
        finally:
            cursor.execute("DEALLOCATE generic_probe")
    return (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]


def scans(plan: dict, inside: tuple[str, ...] = ()) -> Iterator[tuple[dict, tuple[str, ...]]]:
    """Every node that reads a table, with the node types above it."""
    if "Relation Name" in plan:
        yield plan, inside
    for child in plan.get("Plans", []):
        yield from scans(child, (*inside, plan["Node Type"]))


def the_statement(statements, *marks: str) -> tuple[str, tuple | dict]:
    found = [(sql, params) for sql, params in statements if all(mark in sql for mark in marks)]
    assert found, f"no statement with {marks}"
    return found[-1]


def test_the_hot_statements_read_what_their_answer_needs(frank_dir):
    # One campaign's setup for every statement (each check names the statement it failed on).
    statements = statements_of_one_item(frank_dir)
    a_claim_probes_the_worker_s_assignments_by_item(statements)
    a_submission_reads_its_own_assignment_and_its_gold_by_key(statements)
    the_pending_pay_question_reads_the_worker_s_decisions_only(statements)
    the_page_sums_what_is_owed_in_this_campaign_only(statements)
    the_independence_check_reads_the_submission_s_assignment_by_key(statements)


def a_claim_probes_the_worker_s_assignments_by_item(statements) -> None:
    plan = generic_plan(*the_statement(statements, '"annotate_item"."is_control" FROM "annotate_item"', "LIMIT 100"))
    assignment_reads = [(node, above) for node, above in scans(plan) if node["Relation Name"] == "annotate_assignment"]
    assert assignment_reads
    for node, above in assignment_reads:
        # One index probe per candidate item: never the worker's assignments read whole (and hashed or kept in
        # memory for every candidate), which grows with every item the worker submits.
        assert "item_id" in node.get("Index Cond", ""), (node, above)
        assert above[-1] not in ("Materialize", "Hash"), (node, above)


def a_submission_reads_its_own_assignment_and_its_gold_by_key(statements) -> None:
    plan = generic_plan(*the_statement(statements, "WITH gold(", "SELECT g.factual", "SELECT t.expected_factual"))
    reads = list(scans(plan))
    for node, above in reads:
        if node["Relation Name"] == "annotate_assignment":
            assert node.get("Index Name") == "annotate_assignment_pkey", (node, above)
        if node["Relation Name"] == "annotate_goldlabel":
            assert node["Node Type"] != "Seq Scan" and "summary_id" in node.get("Index Cond", ""), (node, above)
    assert {node["Relation Name"] for node, _ in reads} >= {"annotate_assignment", "annotate_goldlabel"}


def the_pending_pay_question_reads_the_worker_s_decisions_only(statements) -> None:
    plan = generic_plan(*the_statement(statements, 'FROM "annotate_participation"', "annotate_paydecision", "FOR UPDATE"))
    ledger_reads = [node for node, _ in scans(plan) if node["Relation Name"] == "annotate_paydecision"]
    assert ledger_reads
    assert all(node["Node Type"] != "Seq Scan" for node in ledger_reads), ledger_reads


def the_page_sums_what_is_owed_in_this_campaign_only(statements) -> None:
    plan = generic_plan(*the_statement(statements, 'FROM "annotate_participation"', '"annotate_bonusentry"'))
    ledger_reads = [node for node, _ in scans(plan) if node["Relation Name"] == "annotate_bonusentry"]
    assert ledger_reads
    # The worker's entries of this campaign only, from the index: not their entries of every campaign.
    assert all("campaign_id" in node.get("Index Cond", "") for node in ledger_reads), [(n.get("Index Name"), n.get("Index Cond"), n.get("Filter")) for n in ledger_reads]


def the_independence_check_reads_the_submission_s_assignment_by_key(statements) -> None:
    plan = generic_plan(*the_statement(statements, "WITH mine AS", "shared AS"))
    # The submission's own assignment (the one whose item it compares with the co-workers'): by its key, not among
    # all of the worker's assignments by worker and status.
    worker_reads = [node for node, _ in scans(plan)
                    if node["Relation Name"] == "annotate_assignment" and "worker_id =" in node.get("Index Cond", "")]
    assert not worker_reads, [(n.get("Index Name"), n.get("Index Cond"), n.get("Filter")) for n in worker_reads]
    assert any(node.get("Index Name") == "annotate_assignment_pkey" for node, _ in scans(plan))
