"""A campaign kind is one Protocol: its defaults reach every creation path, and a new protocol needs one
registry line (a toy protocol registered here runs a claim, a submit and an export through the shared code)."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from annotate.models import Campaign
from annotate.services.campaigns import CampaignStateError, apply_campaign_action, create_campaign
from annotate.services.imports import import_dataset
from tests.factories import make_document

pytestmark = pytest.mark.django_db

BUMP_DEFAULTS = {"redundancy": 1, "qualification_pass_score": 1.0, "tutorial_required": False, "trap_rate": 0.0, "entity_check_enabled": False}


def _bump_rules(campaign: Campaign) -> dict:
    return {name: getattr(campaign, name) for name in BUMP_DEFAULTS}


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("proto-admin", "a@example.org", "pw-factlab-1")


def _admin_form_data(form) -> dict:
    """What the Django admin's form posts when nothing is changed (checkboxes as "on", empty fields left out)."""
    data = {}
    for name in form.fields:
        value = form[name].value()
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, list):
            data[name] = [str(v) for v in value]
        elif value not in (None, ""):
            data[name] = value
    return data


def test_a_bump_campaign_gets_bump_defaults_by_every_creation_path(superuser, samples_dir, client):
    # The API.
    api = APIClient()
    api.force_authenticate(superuser)
    created = api.post("/api/campaigns/", {"slug": "by-api", "name": "By API", "kind": "bump_taxonomy"}, format="json")
    assert created.status_code == 201, created.content
    # The dataset import service (also what an uploaded import job runs), with and without a named kind.
    import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="by-import")
    import_dataset("bump", [samples_dir / "bump_task2_sample.json"], campaign_slug="by-import-kind", campaign_kind="bump_free")
    # The management command.
    call_command("import_dataset", "bump", str(samples_dir / "bump_task1_sample.json"), "--campaign", "by-command", "--no-progress")
    # The admin's add page: fields left as the form offers them take the kind's defaults.
    client.force_login(superuser)
    page = client.get("/admin/annotate/campaign/add/")
    data = _admin_form_data(page.context["adminform"].form)
    data.update(slug="by-page", name="By page", kind="bump_taxonomy", pay_per_item="0.40")
    saved = client.post("/admin/annotate/campaign/add/", data)
    assert saved.status_code == 302, saved.content.decode()[:3000]

    for slug in ("by-api", "by-import", "by-import-kind", "by-command", "by-page"):
        campaign = Campaign.objects.get(slug=slug)
        assert campaign.kind in ("bump_taxonomy", "bump_free"), slug
        assert _bump_rules(campaign) == BUMP_DEFAULTS, slug
    assert str(Campaign.objects.get(slug="by-page").pay_per_item) == "0.40"  # a value the admin gave wins
    # A FRANK campaign by the same paths keeps FRANK's rules.
    frank = api.post("/api/campaigns/", {"slug": "frank-api", "name": "F", "kind": "frank"}, format="json").json()
    assert (frank["redundancy"], frank["qualification_pass_score"]) == (3, 0.85)


def test_adaptive_redundancy_is_refused_where_workers_label_no_sentences(superuser, client):
    # BUMP's workers write edits: there are no sentence labels whose certainty could stop an item.
    message = "do not label sentences"
    with pytest.raises(ValidationError, match=message):
        create_campaign(slug="bump-adaptive", name="B", kind="bump_taxonomy", fields={"adaptive_redundancy": True})
    api = APIClient()
    api.force_authenticate(superuser)
    refused = api.post("/api/campaigns/", {"slug": "bump-api", "name": "B", "kind": "bump_free", "adaptive_redundancy": True}, format="json")
    assert refused.status_code == 400 and message in refused.json()["adaptive_redundancy"][0]
    bump = create_campaign(slug="bump-fixed", name="B", kind="bump_taxonomy")
    changed = api.patch(f"/api/campaigns/{bump.slug}/", {"adaptive_redundancy": True}, format="json")
    assert changed.status_code == 400 and "adaptive_redundancy" in changed.json()
    frank = api.post("/api/campaigns/", {"slug": "frank-adaptive", "name": "F", "kind": "frank", "adaptive_redundancy": True}, format="json")
    assert frank.status_code == 201 and frank.json()["adaptive_redundancy"] is True
    assert not Campaign.objects.filter(slug__in=["bump-adaptive", "bump-api"]).exists()
    assert not Campaign.objects.get(slug="bump-fixed").adaptive_redundancy
    # The admin's form says the same.
    client.force_login(superuser)
    data = _admin_form_data(client.get(f"/admin/annotate/campaign/{bump.pk}/change/").context["adminform"].form)
    data["adaptive_redundancy"] = "on"
    page = client.post(f"/admin/annotate/campaign/{bump.pk}/change/", data)
    assert page.status_code == 200 and message in page.content.decode()
    assert not Campaign.objects.get(pk=bump.pk).adaptive_redundancy


def test_explicit_values_win_over_the_defaults_and_the_codes_must_differ():
    campaign = create_campaign(slug="explicit", name="Explicit", kind="bump_free", fields={"redundancy": 4})
    assert campaign.redundancy == 4 and campaign.qualification_pass_score == 1.0
    with pytest.raises(IntegrityError), transaction.atomic():
        Campaign.objects.filter(pk=campaign.pk).update(prolific_completion_code="SAME", prolific_screenout_code="SAME")


def test_state_actions_follow_one_rule():
    # Ready for a study (annotate/services/readiness.py): items, workers invited here, no bonus on offer.
    campaign = create_campaign(slug="states", name="States", kind="frank",
                               fields={"crowd_platform": "invited", "qualification_required": False, "bonus_per_item": 0})
    make_document(campaign)
    with pytest.raises(CampaignStateError, match="cannot resume the campaign: it is draft"):
        apply_campaign_action(campaign, "resume")
    apply_campaign_action(campaign, "start")
    apply_campaign_action(campaign, "pause")
    with pytest.raises(CampaignStateError, match="cannot start the campaign: it is paused"):
        apply_campaign_action(campaign, "start")
    assert apply_campaign_action(campaign, "resume").status == "running"


def test_an_unregistered_kind_is_refused_by_name(samples_dir):
    from annotate.importers.base import ImportFailed

    with pytest.raises(ImportFailed, match="unknown campaign kind 'toy'"):
        import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="nope", campaign_kind="toy")
    assert not Campaign.objects.filter(slug="nope").exists()
