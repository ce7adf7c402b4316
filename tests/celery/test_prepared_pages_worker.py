"""FRANK pages are prepared by a real Celery worker once an import commits (the query counts and the rest of
the page preparation are in tests/integration/test_prepared_pages.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotate.frank import prepared
from annotate.models import Document, DocumentPage
from annotate.services.imports import import_dataset

SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_prepares_the_pages_after_an_import_commits(settings):
    """The import sends ``annotate.prepare_campaign_pages`` once it commits; a Celery worker on Redis
    prepares every document (nothing runs in the importing process)."""
    from tests.celery_helpers import CeleryWorker, broker, wait_for

    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = True
    with broker(redis_db=7) as url, CeleryWorker(broker_url=url) as worker:
        import_dataset("frank", [SUBSET], campaign_slug="by-worker", campaign_kind="frank")
        assert DocumentPage.objects.count() < 20  # the import itself prepared nothing (the job is queued)
        wait_for(
            lambda: DocumentPage.objects.filter(document__campaign__slug="by-worker", version=prepared.VERSION).count() == 20,
            timeout=180, what="the worker to prepare 20 pages", workers=[worker],
        )
    assert all("absent" in d.metadata["entity_pool"] for d in Document.objects.filter(campaign__slug="by-worker"))
