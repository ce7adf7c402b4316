"""Rows on the claim and submit paths: lookups by a unique key read their row without an ORDER BY; ledger rows
are appended once per key in one statement."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from annotate.models import BonusEntry, Participation, PayDecision, PayDecisionKind
from annotate.rows import insert_unless_present, unique_row
from annotate.services.ledger import add_ledger_entry
from tests.factories import make_campaign, make_worker, qualify

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
