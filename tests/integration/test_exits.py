"""An exit on every way out: each page where a crowd worker may leave shows the right code as text, a copy
button and the way back to the platform, and a crowd identity never sees another campaign."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotate.bump.services import create_bump_campaign
from annotate.models import Participation, QualificationStatus, Worker
from tests.factories import make_campaign, make_document
from tests.integration.test_crowd_identity import an_ip, mturk_url, prolific_url, submit_current, uid

pytestmark = pytest.mark.django_db


def code_shown(page: bytes, element_id: str) -> str | None:
    match = re.search(rf'id="{element_id}">([^<]+)</code>', page.decode())
    return match.group(1) if match else None


def arrive(campaign, client: Client | None = None) -> tuple[Client, Worker]:
    client = client or Client()
    pid = uid()
    client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    return client, Worker.objects.get(external_id=pid)


def test_completion_shows_the_code_as_text_with_a_copy_button_and_the_return_link():
    campaign = make_campaign(prolific_completion_code="DONE7", prolific_screenout_code="OUT7")
    make_document(campaign)
    make_document(campaign)
    client, worker = arrive(campaign)
    submit_current(client, campaign, worker)
    page = client.get(reverse("annotate:campaign-done", args=[campaign.slug])).content
    assert code_shown(page, "completion-code") == "DONE7" and code_shown(page, "screenout-code") is None
    assert b'data-copy="DONE7"' in page and b"cc=DONE7" in page and b"Back to the campaigns" not in page


@pytest.mark.parametrize("kind", ["frank", "bump_free"])
def test_a_failed_qualification_shows_the_screen_out_code_and_a_return_link(kind):
    if kind == "frank":
        campaign = make_campaign(prolific_completion_code="DONE8", prolific_screenout_code="OUT8", qualification_required=True)
        url = reverse("annotate:frank-qualification", args=[campaign.slug])
    else:
        campaign = create_bump_campaign(uid("b").lower(), "Bump", kind, status="running", shipped_qualification_accepted=True)
        campaign.prolific_completion_code, campaign.prolific_screenout_code = "DONE8", "OUT8"
        campaign.save()
        url = reverse("annotate:bump-qualification", args=[campaign.slug])
    client, worker = arrive(campaign)
    Participation.objects.filter(worker=worker).update(qualification_status=QualificationStatus.FAILED, qualification_attempts=9)
    page = client.get(url).content
    assert b'id="qualification-failed"' in page
    assert code_shown(page, "screenout-code") == "OUT8" and b"cc=OUT8" in page and b"DONE8" not in page


def test_a_blocked_worker_sees_the_screen_out_code_as_text():
    campaign = make_campaign(prolific_completion_code="DONE9", prolific_screenout_code="OUT9")
    make_document(campaign)
    make_document(campaign)
    client, worker = arrive(campaign)
    submit_current(client, campaign, worker, entity_right=False)  # forgiven once (Prolific's rule)
    submit_current(client, campaign, worker, entity_right=False)  # blocked at the second
    page = client.get(reverse("annotate:campaign", args=[campaign.slug])).content
    assert code_shown(page, "screenout-code") == "OUT9" and b'data-copy="OUT9"' in page


def test_no_work_left_gives_a_code_before_and_after_some_work():
    campaign = make_campaign(prolific_completion_code="DONE10", prolific_screenout_code="OUT10", completion_min_items=5, redundancy=1)
    make_document(campaign)
    client, worker = arrive(campaign)
    submit_current(client, campaign, worker)
    # One item done of five required, and the campaign has nothing left: the work done is paid.
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content
    assert b"Nothing left to do" in page and code_shown(page, "completion-code") == "DONE10"
    # A newcomer who finds nothing at all is screened out (paid for the time), never left without a code.
    newcomer, _ = arrive(campaign)
    page = newcomer.get(reverse("annotate:frank-task", args=[campaign.slug])).content
    assert b"Nothing left to do" in page and code_shown(page, "screenout-code") == "OUT10"


def test_mturk_worker_with_nothing_done_is_told_to_return_the_hit():
    campaign = make_campaign(redundancy=1)
    client = Client()
    client.get(mturk_url(campaign, uid("W"), uid("A")), REMOTE_ADDR=an_ip())
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content
    assert b"Nothing left to do" in page and b'id="mturk-return"' in page


def test_a_crowd_identity_sees_only_the_campaign_of_its_study_link():
    mine = make_campaign(prolific_completion_code="C1", prolific_screenout_code="S1")
    other = make_campaign()
    bump = create_bump_campaign(uid("b").lower(), "BUMP Task 2", "bump_free", status="running", shipped_qualification_accepted=True)
    make_document(mine)
    client, _ = arrive(mine)
    home = client.get(reverse("annotate:home"))
    assert home.status_code == 302 and home["Location"] == reverse("annotate:campaign", args=[mine.slug])
    for url in (reverse("annotate:campaign", args=[other.slug]), reverse("annotate:frank-task", args=[other.slug]),
                reverse("annotate:bump-task", args=[bump.slug]), reverse("annotate:campaign-done", args=[other.slug])):
        response = client.get(url)
        assert response.status_code == 403 and b"This study is not yours" in response.content, url
        assert reverse("annotate:campaign", args=[mine.slug]).encode() in response.content
    # Its own study still opens, and a local account still sees every running campaign.
    assert client.get(reverse("annotate:campaign", args=[mine.slug])).status_code in (200, 302)
