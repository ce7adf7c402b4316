"""An import leaves PostgreSQL's planner statistics of what it filled up to date, so a new campaign's first claims
are planned on the tables' real sizes rather than on tables believed empty until autovacuum's next round."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from annotate.models import Assignment, Campaign, Item
from annotate.services.imports import DATASET_TABLES, import_dataset
from annotate.services.planner_statistics import refresh_planner_statistics, refresh_planner_statistics_on_commit

SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"


def _planner_rows(model) -> float:
    """The row count PostgreSQL's planner assumes for the model's table (-1: never analyzed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table])
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_committed_import_analyzes_the_tables_it_filled(settings):
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    import_dataset("frank", [SUBSET], campaign_slug="analyzed", campaign_kind="frank")
    campaign = Campaign.objects.get(slug="analyzed")
    # Small tables are sampled whole: the planner's count is the table's.
    for model in DATASET_TABLES:
        assert _planner_rows(model) == model.objects.count(), model.__name__
    assert _planner_rows(Item) == campaign.items.count() > 0


@pytest.mark.django_db(transaction=True)
def test_a_failed_import_analyzes_nothing(settings, tmp_path):
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    refresh_planner_statistics([Item])
    before = _planner_rows(Item)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "d1"}\n')
    with pytest.raises(Exception):
        import_dataset("jsonl", [broken], campaign_slug="broken", campaign_kind="frank")
    assert _planner_rows(Item) == before


def test_inside_a_transaction_the_analysis_waits_for_the_commit(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        refresh_planner_statistics_on_commit([Assignment])
    assert len(callbacks) == 1
