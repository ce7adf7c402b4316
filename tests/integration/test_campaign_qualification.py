"""A campaign's qualification comes from its own material: its imported material or its own gold, whose keys
are not in the source; the protocol's shipped pool (keys in the source code) only once an admin accepts it."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotate.frank import content as frank_content
from annotate.frank.protocol import qualification_exercise
from annotate.models import GoldLabel, Participation, QualificationStatus
from annotate.protocols import protocol_for
from annotate.services.control_items import set_gold_label
from tests.factories import make_campaign, make_document, make_worker

pytestmark = pytest.mark.django_db

SUMMARIES = [
    ["The council approved the budget on Monday.", "The mayor praised the vote."],
    ["The council rejected the budget on Friday.", "The mayor resigned in protest."],
    ["The council met in Greenvale.", "Its members approved a new budget."],
]
ARTICLE = ["The Greenvale council met on Monday.", "It approved the budget.", "The mayor praised the vote."]


def _gold_campaign(**settings):
    campaign = make_campaign(qualification_required=True, shipped_qualification_accepted=False, **settings)
    document = make_document(campaign, article=ARTICLE, summaries=SUMMARIES)
    for summary in document.summaries.order_by("pk"):
        wrong = "rejected" in summary.text
        for index in range(2):
            set_gold_label(summary, index, not wrong, "CircE" if wrong and index == 0 else "")
    return campaign


def _answers(exercise, *, right: bool = True) -> dict:
    """The form of the key's answers (or of "Yes" everywhere, what a script holding the shipped keys does
    with sentences it has never seen)."""
    form = {}
    for s, summary in enumerate(exercise.summaries):
        for i, key in enumerate(summary):
            factual = key.factual if right else True
            form[f"s{s}_{i}_factual"] = "yes" if factual else "no"
            form[f"s{s}_{i}_cat"] = [] if factual else [key.category or "OtherE"]
    return form


def _participant(campaign):
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    client.get(reverse("annotate:campaign", args=[campaign.slug]))
    participation = Participation.objects.select_related("campaign").get(worker=worker, campaign=campaign)
    return client, participation


def test_a_frank_campaign_with_gold_draws_its_qualification_from_it_and_the_shipped_keys_do_not_pass():
    campaign = _gold_campaign()
    assert protocol_for(campaign.kind).qualification_source(campaign) == "campaign"
    url = reverse("annotate:frank-qualification", args=[campaign.slug])
    client, participation = _participant(campaign)
    exercise = qualification_exercise(participation)
    shown = {key.text for summary in exercise.summaries for key in summary}
    assert shown <= {s for row in SUMMARIES for s in row} and not shown & {k.text for k in frank_content.QUALIFICATION_POOL}
    page = client.get(url).content.decode()
    assert "Greenvale council" in page and "chemical plant" not in page
    # A script holding the shipped pool knows none of these sentences: "Yes" everywhere fails.
    failed = client.post(url, _answers(exercise, right=False)).content.decode()
    assert "You did not pass" in failed
    participation.refresh_from_db()
    assert participation.qualification_status == QualificationStatus.FAILED
    # A worker who judges as the campaign's gold says passes.
    client2, participation2 = _participant(campaign)
    passed = client2.post(url, _answers(qualification_exercise(participation2))).content.decode()
    assert "You passed" in passed


def test_private_gold_is_preferred_to_public_labels_for_the_test():
    campaign = _gold_campaign()
    GoldLabel.objects.filter(summary__document__campaign=campaign).update(public=True)
    # Factual and erroneous sentences as close to the article (the test is balanced within overlap bands).
    private_doc = make_document(campaign, article=["Rivertown opened a new bridge on Monday.", "Workers built it in a year."], summaries=[
        ["A new bridge opened on Monday in Rivertown.", "Workers built it in a single year."],
        ["Rivertown opened a bridge on Sunday.", "Workers built it in a week."],
    ])
    for summary in private_doc.summaries.order_by("pk"):
        for index in range(2):
            set_gold_label(summary, index, "Sunday" not in summary.text)
    _, participation = _participant(campaign)
    texts = {key.text for summary in qualification_exercise(participation).summaries for key in summary}
    assert "Rivertown opened a bridge on Sunday." in texts and not texts & {s for row in SUMMARIES for s in row}


def test_without_material_the_shipped_pool_waits_for_the_admin_s_acceptance():
    campaign = make_campaign(qualification_required=True, shipped_qualification_accepted=False)
    make_document(campaign, summaries=[["The council met."]])
    assert protocol_for(campaign.kind).qualification_source(campaign) == "shipped"
    url = reverse("annotate:frank-qualification", args=[campaign.slug])
    client, participation = _participant(campaign)
    refused = client.get(url)
    assert refused.status_code == 503 and b"qualification-unavailable" in refused.content
    assert client.post(url, {}).status_code == 503
    participation.refresh_from_db()
    assert participation.qualification_attempts == 0 and participation.qualification_status == QualificationStatus.NOT_TAKEN
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    control = reverse("annotate:manage-control", args=[campaign.slug])
    page = admin.get(control).content.decode()
    assert 'id="qualification-not-ready"' in page and "whose keys are in the source code" in page
    admin.post(reverse("annotate:manage-shipped-qualification", args=[campaign.slug]), {"accept": "1"})
    campaign.refresh_from_db()
    assert campaign.shipped_qualification_accepted and 'id="shipped-qualification-in-use"' in admin.get(control).content.decode()
    shown = client.get(url)
    assert shown.status_code == 200 and b"Northfield" in shown.content


def test_bump_campaigns_need_their_own_material_or_the_admin_s_acceptance():
    campaign = make_campaign(kind="bump_taxonomy", qualification_required=True, shipped_qualification_accepted=False)
    assert protocol_for(campaign.kind).qualification_source(campaign) == "shipped"
    client, _ = _participant(campaign)
    assert client.get(reverse("annotate:bump-qualification", args=[campaign.slug])).status_code == 503
