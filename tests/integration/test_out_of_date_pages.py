"""After a deploy that changes the page rules, the beat prepares the stale pages of every campaign not finished
instead of leaving each page to the first claim that reads it (spaCy inside a web request)."""
from __future__ import annotations

import pytest

from annotate.frank import prepared
from annotate.models import CampaignStatus, DocumentPage, ImportStatus, PagePreparation
from annotate.tasks import heal_page_preparations
from tests.factories import make_campaign, make_document
from tests.integration.test_prepared_pages import imported_subset

pytestmark = pytest.mark.django_db


def test_the_beat_prepares_pages_left_by_other_code(settings, monkeypatch):
    campaign = imported_subset(settings, slug="deployed")  # its pages prepared after the import
    assert PagePreparation.objects.filter(campaign=campaign, code_version=prepared.VERSION).count() == 1
    pages = DocumentPage.objects.filter(document__campaign=campaign)
    assert pages.exclude(version=prepared.VERSION).count() == 0
    # The import's run is of this version: nothing to queue.
    assert heal_page_preparations() == []

    # A deploy whose page rules differ: the stored pages name the code that computed them.
    monkeypatch.setattr(prepared, "VERSION", "rules-after-deploy")
    stale_documents = set(pages.values_list("document_id", flat=True))
    # A finished campaign keeps its stale pages (nobody claims them); one whose run of this version failed waits
    # for its admin (a run that fails on a document would otherwise be queued again every minute).
    finished = make_campaign(status=CampaignStatus.FINISHED)
    make_document(finished)
    failed = make_campaign()
    make_document(failed)
    PagePreparation.objects.create(campaign=failed, code_version="rules-after-deploy", status=ImportStatus.FAILED)

    queued = heal_page_preparations()  # the beat task (its preparation runs here: eager in tests)
    run = PagePreparation.objects.get(campaign=campaign, code_version="rules-after-deploy")
    assert queued == [run.pk] and (run.status, run.done, run.total) == (ImportStatus.SUCCEEDED, 20, 20), run.error
    assert set(pages.filter(version="rules-after-deploy").values_list("document_id", flat=True)) == stale_documents
    assert not PagePreparation.objects.filter(campaign=finished).exists()
    assert PagePreparation.objects.filter(campaign=failed).count() == 1

    assert heal_page_preparations() == []  # nothing left out of date

    # A worker of the old code took that run during a rolling deploy: its pages are of the old version, so the run
    # of this version that succeeded is followed by another.
    pages.update(version="rules-before-deploy")
    again = heal_page_preparations()
    assert again != [run.pk] and len(again) == 1
    assert PagePreparation.objects.get(pk=again[0]).status == ImportStatus.SUCCEEDED
    assert pages.exclude(version="rules-after-deploy").count() == 0
    assert PagePreparation.objects.filter(campaign=failed).count() == 1 and not PagePreparation.objects.filter(campaign=finished).exists()


def test_no_run_is_queued_where_automatic_preparation_is_off(settings):
    campaign = make_campaign()
    make_document(campaign)  # no page prepared yet
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    assert heal_page_preparations() == []
    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = True
    queued = heal_page_preparations()
    assert [run.pk for run in PagePreparation.objects.filter(campaign=campaign)] == queued and len(queued) == 1
    assert DocumentPage.objects.filter(document__campaign=campaign, version=prepared.VERSION).count() == 1
