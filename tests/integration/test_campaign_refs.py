"""The campaign references the reading check and the submit read from the cache: forgotten when the campaign is
saved (renamed too) or deleted, and a campaign of another protocol is 404 there like a missing one."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Campaign
from annotate.services.campaign_refs import campaign_reference
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db


def test_a_reference_is_read_once_then_from_the_cache_and_forgotten_on_save_and_delete():
    campaign = make_campaign()
    first = campaign_reference(campaign.slug)
    assert (first.pk, first.slug, first.kind) == (campaign.pk, campaign.slug, campaign.kind)
    with CaptureQueriesContext(connection) as queries:
        again = campaign_reference(campaign.slug)
    assert len(queries) == 0 and again.pk == campaign.pk
    # Renamed by a save: the old slug names nothing any more, the new one the campaign.
    loaded = Campaign.objects.get(pk=campaign.pk)
    loaded.slug = "refs-renamed"
    loaded.save()
    assert campaign_reference(campaign.slug) is None
    assert campaign_reference("refs-renamed").pk == campaign.pk
    Campaign.objects.get(pk=campaign.pk).delete()
    assert campaign_reference("refs-renamed") is None
    assert campaign_reference("no-such-campaign") is None


def test_the_submit_of_another_protocols_campaign_is_404():
    bump = make_campaign(kind="bump_taxonomy")
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    for slug in (bump.slug, "refs-missing"):
        response = client.post(reverse("annotate:frank-submit", args=[slug, 1]), {}, content_type="application/json")
        assert response.status_code == 404
        response = client.post(reverse("annotate:frank-entity", args=[slug, 1]), {"choice": 0}, content_type="application/json")
        assert response.status_code == 404
