"""Lookups by a unique key on the claim and submit paths read their row without an ORDER BY."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Participation
from annotate.rows import unique_row
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
