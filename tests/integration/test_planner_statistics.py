"""An import leaves PostgreSQL's planner statistics of what it filled up to date, so a new campaign's first claims
are planned on the tables' real sizes rather than on tables believed empty until autovacuum's next round."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection, transaction

from annotate.importers.base import ImportFailed
from annotate.models import Campaign, Item
from annotate.services.imports import DATASET_TABLES, import_dataset

SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"


def _planner_rows(model) -> float:
    """The row count PostgreSQL's planner assumes for the model's table (-1: never analyzed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table])
        return cursor.fetchone()[0]


def _times_analyzed(model) -> int:
    """How many times the model's table has been analyzed by hand (PostgreSQL's cumulative statistics, read afresh)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = %s::regclass", [model._meta.db_table])
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_committed_import_analyzes_the_tables_it_filled(settings):
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    analyzed_before = _times_analyzed(Item)
    import_dataset("frank", [SUBSET], campaign_slug="analyzed", campaign_kind="frank")
    assert _times_analyzed(Item) == analyzed_before + 1
    campaign = Campaign.objects.get(slug="analyzed")
    # Small tables are sampled whole: the planner's count is the table's.
    for model in DATASET_TABLES:
        assert _planner_rows(model) == model.objects.count(), model.__name__
    assert _planner_rows(Item) == campaign.items.count() > 0


@pytest.mark.django_db(transaction=True)
def test_an_import_rolled_back_by_its_caller_analyzes_nothing(settings):
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    analyzed_before = _times_analyzed(Item)
    with pytest.raises(ImportFailed), transaction.atomic():
        import_dataset("frank", [SUBSET], campaign_slug="rolled-back", campaign_kind="frank")
        raise ImportFailed("the caller's next step failed")
    assert not Campaign.objects.filter(slug="rolled-back").exists()
    assert _times_analyzed(Item) == analyzed_before
