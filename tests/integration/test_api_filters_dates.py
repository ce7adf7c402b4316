"""Date filters accept any ISO 8601 offset Python accepts (PostgreSQL stops at ±15:59): found by the schema fuzzer."""
from __future__ import annotations

import pytest

from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db


def test_far_offsets_are_moved_to_utc_and_bad_dates_are_400(campaign, admin_client):
    far = admin_client.get(f"/api/campaigns/{campaign.slug}/edits/", {"created_after": "0718-09-16T00:43:09.200000-17:37"})
    assert far.status_code == 200 and far.json()["results"]  # every edit is after the year 718
    future = admin_client.get(f"/api/campaigns/{campaign.slug}/judgements/", {"created_after": "9999-12-31T23:00:00-22:00"})
    assert future.status_code == 400 and "created_after" in future.json()
