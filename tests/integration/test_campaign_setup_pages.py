"""The admin's campaign settings page and people page on /manage/: grouped settings with the API's rules, saved
all together or not at all, staff only; invitations of a campaign's reviewers and researchers; who is working now."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.bump.models import Edit
from annotate.bump.review import review_edit
from annotate.bump.services import create_bump_campaign
from annotate.models import Campaign, CampaignStatus
from annotate.roles import RESEARCHER, can_review, role_of
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.campaign_settings import campaign_sections
from annotate.services.errors import NotEligible
from annotate.services.people import invite_to_campaign, working_now
from annotate.services.researchers import ResearcherError, accept_invitation
from tests.factories import make_bump_document, make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def settings_url(campaign: Campaign) -> str:
    return reverse("annotate:manage-settings", args=[campaign.slug])


def form_values(page_campaign: Campaign, **changes) -> dict:
    """What the page's form posts back unchanged, with ``changes`` (booleans left out when false, as a browser does)."""
    from annotate.forms import CampaignSettingsForm

    values = {}
    for name, value in CampaignSettingsForm(page_campaign).initial.items():
        value = changes.get(name, value)
        if value is True:
            values[name] = "on"
        elif value is not False and value is not None:
            values[name] = str(value)
    return values


def test_the_settings_page_groups_every_setting_with_help_and_only_those_of_the_protocol(client):
    client.force_login(make_worker(staff=True).user)
    frank = make_campaign(status=CampaignStatus.DRAFT)
    page = client.get(settings_url(frank)).content.decode()
    for section in ("crowd", "pay", "qualification", "quality", "redundancy"):
        assert f'id="settings-{section}"' in page
    assert "Prolific completion code" in page and "The code Prolific gave your study" in page
    assert 'name="trap_rate"' in page and 'name="adaptive_redundancy"' in page and 'name="max_edit_distance"' not in page
    bump = create_bump_campaign("bump-settings", "BUMP", "bump_free")
    fields = {name for section in campaign_sections(bump) for name in section.fields}
    assert {"max_edit_distance", "unreviewed_paid_edits", "prolific_completion_code", "redundancy"} <= fields
    assert not fields & {"trap_rate", "adaptive_redundancy", "control_share"}  # BUMP's work is checked by review


def test_settings_are_saved_together_and_a_refusal_names_its_field_and_saves_nothing(client):
    client.force_login(make_worker(staff=True).user)
    campaign = make_campaign(status=CampaignStatus.DRAFT)
    same_codes = form_values(campaign, prolific_completion_code="SAME", prolific_screenout_code="SAME", redundancy=4, pay_per_item="0.50")
    answer = client.post(settings_url(campaign), same_codes)
    assert answer.status_code == 400
    page = answer.content.decode()
    assert 'id="error-prolific_screenout_code"' in page and "must differ from the completion code" in page
    campaign.refresh_from_db()
    assert (campaign.redundancy, campaign.prolific_completion_code, campaign.pay_per_item) == (3, "", Decimal("0.00"))

    too_few = form_values(campaign, adaptive_redundancy=True, min_workers=6, max_workers=3)
    page = client.post(settings_url(campaign), too_few).content.decode()
    assert 'id="error-min_workers"' in page and "must not exceed the maximum" in page
    out_of_range = client.post(settings_url(campaign), form_values(campaign, trap_rate="1.5")).content.decode()
    assert 'id="error-trap_rate"' in out_of_range and "Trap rate:" in out_of_range

    good = form_values(campaign, prolific_completion_code="C-DONE", prolific_screenout_code="S-OUT", redundancy=4,
                       pay_per_item="0.50", qualification_required=True)
    assert client.post(settings_url(campaign), good).status_code == 302
    campaign.refresh_from_db()
    assert (campaign.redundancy, campaign.prolific_completion_code, campaign.prolific_screenout_code, campaign.pay_per_item,
            campaign.qualification_required) == (4, "C-DONE", "S-OUT", Decimal("0.50"), True)


def test_the_api_refuses_what_the_settings_page_refuses():
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(make_worker(staff=True).user)
    bump = create_bump_campaign("bump-api-settings", "BUMP", "bump_free")
    answer = api.patch(f"/api/campaigns/{bump.slug}/", {"adaptive_redundancy": True}, format="json")
    assert answer.status_code == 400 and "adaptive_redundancy" in answer.json()
    answer = api.patch(f"/api/campaigns/{bump.slug}/", {"prolific_completion_code": "X", "prolific_screenout_code": "X"}, format="json")
    assert answer.status_code == 400 and "prolific_screenout_code" in answer.json()


def test_only_staff_open_the_settings_and_people_pages(client):
    campaign = make_campaign()
    for url in (settings_url(campaign), reverse("annotate:manage-people", args=[campaign.slug])):
        assert client.get(url).status_code == 302  # to the login page
        client.force_login(make_worker().user)
        assert client.get(url).status_code == 403
        assert client.post(url, {"redundancy": "9", "username": "x", "role": "reviewer"}).status_code == 403
        client.logout()
    assert Campaign.objects.get(pk=campaign.pk).redundancy == 3


def test_a_reviewer_invited_for_one_campaign_reviews_it_and_no_other(client):
    mine = create_bump_campaign("bump-mine", "Mine", "bump_free", status=CampaignStatus.RUNNING, qualification_required=False)
    other = create_bump_campaign("bump-other", "Other", "bump_free", status=CampaignStatus.RUNNING, qualification_required=False)
    edits = []
    for campaign in (mine, other):
        make_bump_document(campaign)
        editor = make_worker(f"editor-{campaign.slug}")
        assignment = request_assignment(editor, campaign)
        words = assignment.item.summary.text.split()
        words[0] = "Officials"
        submit_assignment(assignment.pk, editor, {"checkpoint": assignment.checkpoint.code, "edited": " ".join(words)})
        edits.append(Edit.objects.get(assignment=assignment))

    client.force_login(make_worker(staff=True).user)
    answer = client.post(reverse("annotate:manage-people", args=[mine.slug]), {"role": "reviewer", "username": "rita", "email": "rita@example.org"})
    link = answer.context["link"]
    assert answer.status_code == 200 and "/accounts/invite/" in link
    assert 'data-user="rita"' in answer.content.decode() and "invited, link not used yet" in answer.content.decode()
    client.logout()

    uid, token = link.rstrip("/").split("/")[-2:]
    rita = accept_invitation(uid, token, "a-long-pass-phrase-9")
    assert can_review(rita, mine.pk) and not can_review(rita, other.pk)
    assert role_of(rita) != RESEARCHER  # reviewing grants no access to the campaign's data
    assert review_edit(edits[0].pk, rita, "correct", campaign_id=mine.pk, corrected_type="extrinsic_entity").reviewer == rita
    with pytest.raises(NotEligible):
        review_edit(edits[1].pk, rita, "correct", campaign_id=other.pk, corrected_type="extrinsic_entity")
    client.force_login(rita)
    assert client.get(f"/c/{other.slug}/bump/review/").status_code == 403
    assert client.get(f"/c/{mine.slug}/bump/review/").status_code == 200


def test_researchers_are_granted_the_campaign_and_admins_cannot_be_invited():
    campaign = make_campaign()
    invited = invite_to_campaign(campaign, role="researcher", username="rob")
    assert invited.invitation is not None and campaign.researchers.filter(username="rob").exists()
    again = invite_to_campaign(make_campaign(), role="researcher", username="rob")
    assert again.invitation is not None  # still not signed in: a fresh link
    make_worker("boss", staff=True)
    with pytest.raises(ResearcherError, match="username: 'boss' is an admin account"):
        invite_to_campaign(campaign, role="reviewer", username="boss")
    with pytest.raises(ResearcherError, match="role:"):
        invite_to_campaign(campaign, role="owner", username="x")


def test_working_now_lists_each_held_item_with_its_worker_time_and_state(client):
    campaign = make_campaign(qualification_required=False, tutorial_required=False)
    document = make_document(campaign)
    worker = make_worker("ann")
    qualify(worker, campaign)
    assignment = request_assignment(worker, campaign)
    rows = working_now(campaign, now=assignment.created_at + timedelta(minutes=7))
    assert [(r.worker, r.document, round(r.minutes_on_item), r.last_seen_at) for r in rows] == [("ann", document.external_id, 7, None)]
    assert [(r.items_submitted, r.items_claimed) for r in rows] == [(0, 1)]
    client.force_login(make_worker(staff=True).user)
    page = client.get(reverse("annotate:manage-people", args=[campaign.slug])).content.decode()
    assert 'data-worker="ann"' in page and document.external_id in page and "page not open" in page
    row = page.split('data-worker="ann"', 1)[1].split("</tr>", 1)[0]
    assert "<td>0</td><td>1</td>" in row  # submitted, claimed
    assignment.last_seen_at = timezone.now()
    assignment.save(update_fields=["last_seen_at"])
    assert working_now(campaign)[0].last_seen_at is not None

    participation = qualify(worker, campaign)
    people = reverse("annotate:manage-people", args=[campaign.slug])
    answer = client.post(reverse("annotate:manage-block", args=[campaign.slug, participation.pk]), {"reason": "copied text", "back": "people"})
    assert answer.status_code == 302 and answer.url == people
    participation.refresh_from_db()
    assert participation.is_blocked and participation.blocked_reason == "copied text"
    assert working_now(campaign) == [] and 'data-worker="ann"' not in client.get(people).content.decode()  # the item went back
