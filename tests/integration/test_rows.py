"""Rows on the claim and submit paths: lookups by a unique key read their row without an ORDER BY; ledger rows
are appended once per key in one statement."""
from __future__ import annotations

import sys
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from annotate.models import BonusEntry, Participation, PayDecision, PayDecisionKind
from annotate.rows import (
    CompiledQuery,
    add_to_column,
    insert_all_unless_present,
    insert_groups_unless_present,
    insert_unless_present,
    unique_row,
)
from annotate.services.ledger import add_ledger_entry
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def test_unique_row_finds_the_row_or_none_without_ordering():
    participation = qualify(make_worker(), make_campaign())
    with CaptureQueriesContext(connection) as queries:
        found = unique_row(Participation.objects.filter(pk=participation.pk))
        missing = unique_row(Participation.objects.filter(pk=participation.pk + 1000))
    assert found == participation and missing is None
    assert len(queries) == 2 and not any("ORDER BY" in q["sql"] for q in queries.captured_queries)
    # What first() would have run on this model: sorted by its ordering.
    with CaptureQueriesContext(connection) as queries:
        Participation.objects.filter(pk=participation.pk).first()
    assert "ORDER BY" in queries.captured_queries[0]["sql"]


def test_insert_unless_present_appends_once_per_key_in_one_statement():
    participation = qualify(make_worker(), make_campaign())
    first = PayDecision(key="held-pay:1", kind=PayDecisionKind.HELD, worker_id=participation.worker_id,
                        campaign_id=participation.campaign_id, amount=Decimal("1.00"), reason="held for review")
    with CaptureQueriesContext(connection) as queries:
        inserted = insert_unless_present(first)
    assert inserted and first.pk is not None and not first._state.adding
    assert len(queries) == 1 and "SAVEPOINT" not in queries.captured_queries[0]["sql"]
    stored = PayDecision.objects.get(pk=first.pk)
    assert (stored.key, stored.amount, stored.reason, stored.created_at is not None) == ("held-pay:1", Decimal("1.00"), "held for review", True)
    # The same key again: nothing written, the first row unchanged, and the transaction still usable.
    again = PayDecision(key="held-pay:1", kind=PayDecisionKind.REFUSED, worker_id=participation.worker_id,
                        campaign_id=participation.campaign_id, amount=Decimal("9.00"), reason="other")
    assert not insert_unless_present(again) and again.pk is None
    assert list(PayDecision.objects.values_list("kind", "amount")) == [(PayDecisionKind.HELD, Decimal("1.00"))]


def test_insert_all_unless_present_appends_several_rows_in_one_statement_and_says_which():
    participation = qualify(make_worker(), make_campaign())

    def decision(key: str, amount: str = "1.00") -> PayDecision:
        return PayDecision(key=key, kind=PayDecisionKind.HELD, worker_id=participation.worker_id,
                           campaign_id=participation.campaign_id, amount=Decimal(amount), reason=f"held: {key}")

    assert insert_unless_present(decision("held-pay:1"))
    rows = [decision("held-pay:1", "9.99"), decision("held-bonus:1", "0.50"), decision("refused:1", "0.25")]
    with CaptureQueriesContext(connection) as queries:
        appended = insert_all_unless_present(rows, by="key")
    assert appended == {"held-bonus:1", "refused:1"} and len(queries) == 1
    assert rows[0].pk is None and all(row.pk is not None and not row._state.adding for row in rows[1:])
    stored = {d.key: (d.pk, d.amount, d.reason) for d in PayDecision.objects.all()}
    assert stored["held-pay:1"][1] == Decimal("1.00")  # the row there first is kept as it was
    assert stored["held-bonus:1"] == (rows[1].pk, Decimal("0.50"), "held: held-bonus:1")
    assert stored["refused:1"] == (rows[2].pk, Decimal("0.25"), "held: refused:1")
    assert insert_all_unless_present([], by="key") == set()
    # A bad row (here a missing reason) fails the whole statement: nothing of it is stored.
    bad = decision("held-pay:3")
    bad.reason = None
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_all_unless_present([decision("held-pay:2"), bad], by="key")
    assert not PayDecision.objects.filter(key__in=["held-pay:2", "held-pay:3"]).exists()


def test_groups_of_several_models_are_appended_unless_present_in_one_statement_and_say_which():
    """A submission's pay decisions and ledger entries: each group says which of its own keys are new (a ledger key
    and a decision key may be the same text), rows already there are left as they were, and on PostgreSQL the
    groups go in one statement."""
    participation = qualify(make_worker(), make_campaign())
    who = {"worker_id": participation.worker_id, "campaign_id": participation.campaign_id}

    def decision(key: str) -> PayDecision:
        return PayDecision(key=key, kind=PayDecisionKind.RELEASED, amount=Decimal("0.10"), reason=f"decided: {key}", **who)

    def entry(key: str) -> BonusEntry:
        return BonusEntry(key=key, amount=Decimal("0.10"), reason=f"paid: {key}", **who)

    assert insert_unless_present(entry("pay:1"))
    decisions = [decision("released:pending-pay:1"), decision("refused:2")]
    entries = [entry("released:pending-pay:1"), entry("pay:1"), entry("pay:2")]
    with CaptureQueriesContext(connection) as queries:
        appended = insert_groups_unless_present([decisions, [], entries], by="key")
    assert appended == [{"released:pending-pay:1", "refused:2"}, set(), {"released:pending-pay:1", "pay:2"}]
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    assert all(row.pk is not None for row in decisions) and entries[1].pk is None and entries[2].pk is not None
    assert BonusEntry.objects.get(key="pay:2").pk == entries[2].pk and PayDecision.objects.get(key="refused:2").pk == decisions[1].pk
    # Again: every key is there, nothing is written.
    assert insert_groups_unless_present([[decision("refused:2")], [entry("pay:2")]], by="key") == [set(), set()]
    assert BonusEntry.objects.count() == 3 and PayDecision.objects.count() == 2
    assert insert_groups_unless_present([[], []], by="key") == [set(), set()]


def test_add_to_column_adds_in_the_database_and_reads_the_result_back_in_one_statement():
    participation = qualify(make_worker(), make_campaign())
    stale = Participation.objects.get(pk=participation.pk)
    Participation.objects.filter(pk=participation.pk).update(bonus_items=7)  # another writer, after ``stale`` was read
    with CaptureQueriesContext(connection) as queries:
        assert add_to_column(stale, "bonus_items", 1) == 8
    assert stale.bonus_items == 8 == Participation.objects.get(pk=participation.pk).bonus_items and len(queries) == 1
    stale.pk += 1000
    with pytest.raises(Participation.DoesNotExist):
        add_to_column(stale, "bonus_items", 1)


def test_the_ledger_pays_a_key_once_and_other_errors_still_raise():
    participation = qualify(make_worker(), make_campaign())
    entry = {"key": "pay:7", "participation": participation, "assignment": None, "amount": Decimal("0.50"), "reason": "pay per item"}
    assert add_ledger_entry(**entry) and not add_ledger_entry(**{**entry, "amount": Decimal("5.00")})
    assert list(BonusEntry.objects.values_list("key", "amount")) == [("pay:7", Decimal("0.50"))]
    # Only a duplicate key is skipped: a row naming a missing worker is refused by its foreign key.
    orphan = BonusEntry(key="pay:8", worker_id=participation.worker_id + 1000, campaign_id=participation.campaign_id,
                        amount=Decimal("0.50"), reason="pay per item")
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # Django's foreign keys are checked at commit otherwise
        insert_unless_present(orphan)


def test_a_compiled_query_reads_what_its_queryset_reads_without_compiling_again(monkeypatch):
    from datetime import datetime, timedelta

    from django.contrib.auth import get_user_model
    from django.db.models.sql.compiler import SQLCompiler
    from django.utils import timezone

    from annotate.models import Assignment
    from annotate.rows import CompiledQuery
    from annotate.services.assignments import request_assignment

    User = get_user_model()
    campaign = make_campaign()
    make_document(campaign)
    first, second = qualify(make_worker(), campaign), qualify(make_worker(), campaign)
    with_worker = CompiledQuery(lambda user_id: User.objects.select_related("worker").filter(pk=user_id)[:1], user_id=int)
    by_name = CompiledQuery(lambda name: User.objects.filter(username=name).values_list("pk", "is_active"), name=str)
    recent = CompiledQuery(
        lambda worker_id, since: Assignment.objects.filter(worker_id=worker_id, created_at__gte=since).values_list("pk", flat=True),
        worker_id=int, since=datetime,
    )
    user = with_worker.row(user_id=first.worker.user_id)
    assert user == first.worker.user and user.worker == first.worker
    assert by_name.rows(name=second.worker.user.username) == [(second.worker.user_id, True)]
    assignment = request_assignment(first.worker, campaign)
    assert recent.rows(worker_id=first.worker_id, since=timezone.now() - timedelta(minutes=1)) == [assignment.pk]
    assert recent.rows(worker_id=first.worker_id, since=timezone.now() + timedelta(minutes=1)) == []

    # Compiled: later calls with other values compile nothing and run one query each, with the new values.
    compiles = []
    original = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiles.append(1) or original(self, *a, **k))
    with CaptureQueriesContext(connection) as queries:
        other = with_worker.row(user_id=second.worker.user_id)
        missing = with_worker.row(user_id=second.worker.user_id + 1000)
        names = by_name.rows(name="nobody")
    assert other.worker == second.worker and missing is None and names == []
    assert compiles == [] and len(queries) == 3
    assert str(second.worker.user_id) in queries.captured_queries[0]["sql"]


def test_a_compiled_query_reads_each_kind_of_row_as_its_queryset_does():
    """Models with related rows and annotations, dicts, tuples, flat values and named tuples (read by the queryset
    itself): what the compiled query returns equals what the queryset built with the same values returns, JSON
    decoded and times aware, in the same order."""
    from django.db.models import Count, F

    from annotate.models import Assignment
    from annotate.services.assignments import request_assignment

    campaign = make_campaign()
    for _ in range(3):
        make_document(campaign)
    worker = qualify(make_worker(), campaign).worker
    claimed = [request_assignment(worker, campaign) for _ in range(2)]
    Assignment.objects.filter(pk=claimed[0].pk).update(layout={"summaries": [{"sentences": 2, "trap": None}], "note": "é"})

    shapes = {
        "models": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).select_related("item__campaign", "worker__user")
        .annotate(item_position=F("item__position")).order_by("id"),
        "dicts": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).values("id", "layout", "created_at").order_by("id"),
        "tuples": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).values_list("id", "layout", "expires_at").order_by("id"),
        "flat": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).values_list("layout", flat=True).order_by("id"),
        "named": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).values_list("id", "status", named=True).order_by("id"),
        "grouped": lambda worker_id: Assignment.objects.filter(worker_id=worker_id).values("status").annotate(n=Count("id")).order_by("status"),
    }
    for name, build in shapes.items():
        compiled = CompiledQuery(build, worker_id=int).rows(worker_id=worker.pk)
        expected = list(build(worker.pk))
        assert compiled == expected, name
        assert len(compiled) in (1, 2), name
    models = CompiledQuery(shapes["models"], worker_id=int).rows(worker_id=worker.pk)
    first = models[0]
    with CaptureQueriesContext(connection) as queries:  # the related rows came with it
        assert first.item.campaign == campaign and first.worker.user == worker.user
        assert first.item_position == first.item.position
        assert first.layout["note"] == "é" and first.created_at.tzinfo is not None
    assert len(queries) == 0
    assert not first._state.adding and first._state.db == "default"


def test_a_compiled_query_refuses_what_it_cannot_bind():
    from annotate.models import Assignment
    from annotate.rows import CompiledQuery

    with pytest.raises(TypeError, match="int, str or datetime"):
        CompiledQuery(lambda ids: Assignment.objects.filter(pk__in=ids), ids=list)
    # An integer compared with a text column reaches the SQL as text: refused when first compiled, by name.
    cast = CompiledQuery(lambda key: PayDecision.objects.filter(key=key), key=int)
    with pytest.raises(TypeError, match="'key' does not reach the SQL as one value"):
        cast.rows(key=3)
    locked = CompiledQuery(lambda pk: Participation.objects.select_for_update().filter(pk=pk), pk=int)
    with pytest.raises(TypeError, match="exactly the parameters"):
        locked.rows(id=1)


def test_compiled_queries_are_made_once_per_key_and_forgotten_past_their_limit():
    from annotate.rows import CompiledQueries, CompiledQuery

    made = []

    def make(kind):
        def build(pk):
            return Participation.objects.filter(pk=pk, campaign__kind=kind)
        made.append(kind)
        return CompiledQuery(build, pk=int)

    queries = CompiledQueries(limit=2)
    frank = queries.get("frank", lambda: make("frank"))
    assert queries.get("frank", lambda: make("frank")) is frank and made == ["frank"]
    queries.get("bump", lambda: make("bump"))
    queries.get("spans", lambda: make("spans"))  # a third key: the two kept are forgotten
    assert queries.get("frank", lambda: make("frank")) is not frank and made == ["frank", "bump", "spans", "frank"]


def test_insert_row_and_update_row_write_as_save_does_with_sql_built_once(monkeypatch):
    from django.db.models.sql.compiler import SQLCompiler
    from django.utils import timezone

    from annotate.models import Assignment, CheckedAnswerCounts, Item
    from annotate.rows import insert_row, update_row

    campaign = make_campaign()
    make_document(campaign)
    item = Item.objects.get(campaign=campaign)
    first, second = qualify(make_worker(), campaign), qualify(make_worker(), campaign)
    expires = timezone.now() + timezone.timedelta(minutes=30)
    made = Assignment(item=item, worker=first.worker, expires_at=expires, layout={"summaries": [{"summary": 1, "trap": None}]})
    insert_row(made)
    stored = Assignment.objects.get(pk=made.pk)
    assert not made._state.adding and stored.created_at == made.created_at is not None  # auto_now_add, as save() sets it
    assert stored.layout == made.layout and stored.status == "active" and stored.expires_at == expires
    # A unique conflict raises as save() does (the claim's savepoint catches it).
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_row(Assignment(item=item, worker=first.worker, expires_at=expires))

    # Only the named fields are written; an auto_now field named is set to now.
    counts = CheckedAnswerCounts.objects.create(participation=first, checks_version=1, items_counted=0, cells=[], recent=[])
    before = counts.updated_at
    counts.items_counted, counts.cells, counts.checks_version = 3, [[True, True, "gold", False, False, "x/0", True, 3, 3.0]], 9
    assert update_row(counts, ["items_counted", "cells", "updated_at"])
    again = CheckedAnswerCounts.objects.get(pk=first.pk)
    assert (again.items_counted, again.cells, again.checks_version) == (3, counts.cells, 1) and again.updated_at > before
    assert not update_row(CheckedAnswerCounts(participation_id=second.pk, items_counted=1), ["items_counted"])  # no such row

    # The statements are built once: later writes compile nothing and run one statement each.
    compiles = []
    original = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiles.append(1) or original(self, *a, **k))
    with CaptureQueriesContext(connection) as queries:
        other = Assignment(item=item, worker=second.worker, expires_at=expires)
        insert_row(other)
        other.status = "submitted"
        update_row(other, ["status"])
    assert compiles == [] and len(queries) == 2
    assert Assignment.objects.get(pk=other.pk).status == "submitted"


def test_rows_of_several_models_are_inserted_and_updated_together_in_one_statement_each():
    from django.utils import timezone

    from annotate.frank.models import EntityAnswer
    from annotate.models import Assignment, Item, SentenceJudgement
    from annotate.rows import write_together

    campaign = make_campaign()
    make_document(campaign)
    item = Item.objects.select_related("summary").get(campaign=campaign)
    participation = qualify(make_worker(), campaign)
    worker = participation.worker
    assignment = Assignment.objects.create(item=item, worker=worker, expires_at=timezone.now() + timezone.timedelta(minutes=30))
    summary = item.summary or item.document.summaries.first()
    answer = EntityAnswer(assignment=assignment, choice=1, correct=False)
    judgements = [SentenceJudgement(summary=summary, sentence_index=i, worker=worker, assignment=assignment, factual=i % 2 == 0,
                                    categories=[] if i % 2 == 0 else ["EntE"]) for i in range(3)]
    with CaptureQueriesContext(connection) as queries:
        write_together(insert=[[answer], [], judgements])  # an empty group is left out
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    stored = list(SentenceJudgement.objects.filter(assignment=assignment).order_by("sentence_index"))
    assert [j.pk for j in judgements] == [j.pk for j in stored] and all(j.pk for j in judgements)  # keys set, in order
    assert [(j.factual, j.categories) for j in stored] == [(True, []), (False, ["EntE"]), (True, [])]
    assert stored[0].created_at is not None and EntityAnswer.objects.get(pk=assignment.pk).choice == 1
    # A unique conflict raises, and nothing of the statement is stored.
    with pytest.raises(IntegrityError), transaction.atomic():
        write_together(insert=[[SentenceJudgement(summary=summary, sentence_index=9, worker=worker, assignment=assignment, factual=True)],
                               [EntityAnswer(assignment=assignment, choice=0, correct=True)]])
    assert not SentenceJudgement.objects.filter(assignment=assignment, sentence_index=9).exists()

    assignment.status, participation.items_submitted = "submitted", 4
    with CaptureQueriesContext(connection) as queries:
        write_together(update=[(assignment, ["status"]), (participation, ["items_submitted"])])
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    assert Assignment.objects.get(pk=assignment.pk).status == "submitted"
    assert type(participation).objects.get(pk=participation.pk).items_submitted == 4
    # A row that is gone is named, and the other is not written.
    gone = Assignment(pk=assignment.pk + 10_000, status="expired")
    participation.items_submitted = 5
    with pytest.raises(Assignment.DoesNotExist, match=f"no assignment row with key {gone.pk}"), transaction.atomic():
        write_together(update=[(participation, ["items_submitted"]), (gone, ["status"])])
    assert type(participation).objects.get(pk=participation.pk).items_submitted == 4


def test_a_query_compiled_by_many_threads_at_once_compiles_the_same_sql_in_each():
    # gthread workers: several requests of one process may be the first to run a compiled query at the same moment.
    # Compiling one Django query object from several threads at once mixes up its table aliases (a submit's
    # locked-assignment query came out without its campaign's join: "missing FROM-clause entry").
    from django.db.models import F

    from annotate.models import Assignment

    def build(assignment_id, worker_id):
        return (Assignment.objects.select_related("item__campaign", "item__document")
                .annotate(turn=F("item__position") + 1).filter(pk=assignment_id, worker_id=worker_id, item__campaign__slug="x")[:1])

    expected = CompiledQuery(build, assignment_id=int, worker_id=int)._compile("default").sql
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns every few bytecodes, as a busy process's threads may
    try:
        _compile_at_once(build, expected)
    finally:
        sys.setswitchinterval(switch_interval)


def _compile_at_once(build, expected: str) -> None:
    import threading

    for _ in range(30):
        query = CompiledQuery(build, assignment_id=int, worker_id=int)
        start, found, errors = threading.Barrier(8), [], []

        def compile_now():
            start.wait()
            try:
                found.append(query._compiled.get(("default", connection.vendor)) or query._compile("default"))
            except Exception as exc:  # a corrupted query may also fail to compile at all
                errors.append(exc)
            finally:
                connection.close()  # this thread's own

        threads = [threading.Thread(target=compile_now) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors and {compiled.sql for compiled in found} == {expected}


def test_rows_inserted_together_send_one_statement_whatever_their_number():
    # On PostgreSQL several rows go as one array a column: the same SQL with the same number of parameters for 2
    # and for 7 rows (psycopg keeps no statement of over 50 parameters converted, and each row count would be
    # a statement of its own for PostgreSQL to prepare), each row stored with its own values, keys in order.
    from django.utils import timezone

    from annotate.frank.models import EntityAnswer
    from annotate.models import Assignment, Item, SentenceJudgement
    from annotate.rows import write_together

    campaign = make_campaign()
    make_document(campaign)
    item = Item.objects.select_related("summary").get(campaign=campaign)
    summary = item.summary or item.document.summaries.first()
    sent = []

    def capture(execute, sql, params, many, context):
        sent.append((sql, len(params or ())))
        return execute(sql, params, many, context)

    for count in (2, 7):
        worker = qualify(make_worker(), campaign).worker
        assignment = Assignment.objects.create(item=item, worker=worker, expires_at=timezone.now() + timezone.timedelta(minutes=30))
        judgements = [SentenceJudgement(summary=summary, sentence_index=i, worker=worker, assignment=assignment, factual=i % 3 == 0,
                                        categories=[] if i % 3 == 0 else ["EntE", "CircE"][: 1 + i % 2],
                                        lead_time_seconds=None if i == 1 else 1.5 * i)
                      for i in range(count)]
        with connection.execute_wrapper(capture):
            write_together(insert=[[EntityAnswer(assignment=assignment, choice=2, correct=True)], judgements])
        stored = list(SentenceJudgement.objects.filter(assignment=assignment).order_by("sentence_index"))
        assert [j.pk for j in judgements] == [j.pk for j in stored]
        assert [(j.factual, j.categories, j.lead_time_seconds) for j in stored] == [
            (j.factual, j.categories, j.lead_time_seconds) for j in judgements]
    if connection.vendor == "postgresql":
        assert len(sent) == 2 and sent[0] == sent[1] and "UNNEST" in sent[0][0] and sent[0][1] <= 50
