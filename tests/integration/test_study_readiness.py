"""A campaign starts only when a real study can run: items, the crowd platform's exits, a qualification with
material of its own (or the shipped one accepted knowingly) and a bonus some check can pay."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import CampaignStatus, GoldLabel, Summary
from annotate.services.campaigns import CampaignNotReady, apply_campaign_action
from annotate.services.readiness import start_problems, study_readiness
from tests.factories import (
    make_bump_document,
    make_campaign,
    make_document,
    make_worker,
)

pytestmark = pytest.mark.django_db


def keys(items) -> set[str]:
    return {item.key for item in items}


def test_a_prolific_campaign_without_exit_codes_does_not_start_and_says_what_to_do():
    campaign = make_campaign(status=CampaignStatus.DRAFT, bonus_per_item=0)
    assert keys(start_problems(campaign)) == {"items", "exits"}
    make_document(campaign)
    with pytest.raises(CampaignNotReady, match="Set the completion code and the screen-out code"):
        apply_campaign_action(campaign, "start")
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT
    campaign.prolific_completion_code, campaign.prolific_screenout_code = "DONE-7", "OUT-7"
    campaign.save()
    assert apply_campaign_action(campaign, "start").status == CampaignStatus.RUNNING


def test_mturk_and_invited_campaigns_need_no_codes_and_a_qualification_needs_its_own_material():
    campaign = make_campaign(kind="bump_taxonomy", status=CampaignStatus.DRAFT, crowd_platform="mturk", qualification_required=True,
                             shipped_qualification_accepted=False)
    make_bump_document(campaign)
    assert keys(start_problems(campaign)) == {"qualification"}
    campaign.shipped_qualification_accepted = True  # knowingly: its keys are public
    campaign.save()
    assert start_problems(campaign) == []


def test_a_bonus_no_check_can_pay_is_flagged_until_private_erroneous_gold_exists():
    campaign = make_campaign(status=CampaignStatus.DRAFT, crowd_platform="invited")
    make_document(campaign)
    assert start_problems(campaign) == []  # warnings only: the pay rules pay no bonus without evidence anyway
    items = {item.key: item for item in study_readiness(campaign)}
    assert not items["checks"].ok and not items["checks"].blocking
    assert not items["bonus"].ok and "no check can ever pay it" in items["bonus"].detail
    summary = Summary.objects.filter(document__campaign=campaign).first()
    GoldLabel.objects.create(summary=summary, sentence_index=0, factual=False, category="EntE", public=True)
    assert not {item.key: item for item in study_readiness(campaign)}["bonus"].ok  # published labels pay no bonus
    GoldLabel.objects.filter(summary=summary).update(public=False)
    assert {item.key: item for item in study_readiness(campaign)}["bonus"].ok


def test_the_campaign_page_shows_the_checklist_and_the_crowd_form_sets_the_platform(client):
    campaign = make_campaign(status=CampaignStatus.DRAFT, bonus_per_item=0)
    make_document(campaign)
    client.force_login(make_worker(staff=True).user)
    page = client.get(reverse("annotate:manage-campaign", args=[campaign.slug])).content.decode()
    assert 'id="readiness"' in page and 'id="ready-exits"' in page and "needed" in page
    refused = client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "start"}, follow=True).content.decode()
    assert "Cannot start the campaign yet" in refused and "screen-out code" in refused
    client.post(reverse("annotate:manage-crowd", args=[campaign.slug]), {
        "crowd_platform": "prolific", "prolific_completion_code": "DONE-9", "prolific_screenout_code": "OUT-9",
        "completion_min_items": 1, "mturk_items_per_assignment": 1, "new_crowd_workers_per_hour": 100, "unattended_release_minutes": 5,
    })
    client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "start"})
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.RUNNING
