"""Regression tests of the server errors found by fuzzing: each case answers 4xx, never 5xx."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from annotate.request_limits import json_too_deep
from tests.test_api_fixtures import *
from tests.test_api_fixtures import client_for

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("stamp", ["2024-01-01T00:00:00+16:00", "2024-01-01T00:00:00-23:59", "2024-01-01T00:00:00+15:59"])
def test_created_after_with_any_valid_iso_offset_is_answered(campaign, admin_user, stamp):
    client = client_for(admin_user)
    for path in ("judgements", "assignments", "edits"):
        response = client.get(f"/api/campaigns/{campaign.slug}/{path}/", {"created_after": stamp, "created_before": stamp})
        assert response.status_code == 200, (path, response.content[:300])


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2024-13-01T00:00:00Z"])
def test_created_after_out_of_range_is_a_400(campaign, admin_user, stamp):
    response = client_for(admin_user).get(f"/api/campaigns/{campaign.slug}/judgements/", {"created_after": stamp})
    assert response.status_code == 400 and "created_after" in response.json()


def test_nul_byte_in_a_username_is_a_400():
    api = Client()
    token = api.post("/api/auth/token/", json.dumps({"username": "ad\u0000min", "password": "x"}), content_type="application/json")
    assert token.status_code == 400
    browser = Client()
    login = browser.post("/accounts/login/", {"username": "ad\x00min", "password": "x"})
    assert login.status_code == 200 and "_auth_user_id" not in browser.session  # the form refuses it
    encoded = Client().post("/accounts/login/", "username=ad%00min&password=x", content_type="application/x-www-form-urlencoded")
    assert encoded.status_code == 400


def test_nul_byte_in_a_query_parameter_is_a_400(admin_user):
    response = client_for(admin_user).get("/api/workers/", {"provider": "pro\x00lific"})
    assert response.status_code == 400 and "NUL" in response.json()["detail"]


@pytest.mark.parametrize("value", ["true", "0", "-1", "501", "1.5", "\u0661"])
def test_page_size_outside_the_schema_is_a_400(campaign, admin_user, value):
    response = client_for(admin_user).get("/api/campaigns/", {"page_size": value})
    assert response.status_code == 400 and "page_size" in response.json()
    cursor = client_for(admin_user).get(f"/api/campaigns/{campaign.slug}/judgements/", {"page_size": "2001" if value == "501" else value})
    assert cursor.status_code == 400


def test_valid_page_size_still_pages(campaign, admin_user):
    response = client_for(admin_user).get(f"/api/campaigns/{campaign.slug}/documents/", {"page_size": "1"})
    assert response.status_code == 200 and len(response.json()["results"]) == 1


def test_deeply_nested_submit_body_is_a_400(campaign, annotator):
    client = Client()
    client.force_login(annotator)
    body = '{"answers": ' + "[" * 50_000 + "]" * 50_000 + "}"
    response = client.post(f"/c/{campaign.slug}/frank/task/1/submit/", body, content_type="application/json")
    assert response.status_code == 400 and b"nested deeper than 32 levels" in response.content
    api = Client().post("/api/auth/token/", body, content_type="application/json")
    assert api.status_code == 400


def test_depth_scan_ignores_brackets_inside_strings():
    assert not json_too_deep(json.dumps({"text": "[" * 100, "a": [[1]]}).encode(), 4)
    assert json_too_deep(b'{"a": [[[[[1]]]]]}', 4)
    assert not json_too_deep(json.dumps({"t": 'quote \\" [[[[[[' }).encode(), 2)


# --- no existence oracles


def test_draft_campaign_preview_is_404_for_anyone_but_staff(campaign, admin_user):
    from annotate.models import CampaignStatus

    url = f"/c/{campaign.slug}/frank/preview/"
    campaign.status = CampaignStatus.DRAFT
    campaign.save(update_fields=["status"])
    anonymous = Client().get(url)
    assert anonymous.status_code == 404 and Client().get("/c/no-such-campaign/frank/preview/").status_code == 404
    assert b"Paris" not in anonymous.content
    staff = Client()
    staff.force_login(admin_user)
    assert staff.get(url).status_code == 200
    campaign.status = CampaignStatus.RUNNING
    campaign.save(update_fields=["status"])
    assert Client().get(url).status_code == 200


def test_report_of_a_campaign_not_granted_is_404_like_a_missing_one(campaign, django_user_model):
    from annotate.roles import make_researcher

    stranger = django_user_model.objects.create_user("stranger-researcher", password="pw-stranger-1")
    make_researcher(stranger)
    client = client_for(stranger)
    hidden = client.get(f"/api/campaigns/{campaign.slug}/report/")
    missing = client.get("/api/campaigns/no-such-campaign/report/")
    assert hidden.status_code == missing.status_code == 404 and hidden.json() == missing.json()
