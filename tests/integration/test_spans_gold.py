"""Gold spans set by a reviewer: the same check as a worker's answer, reviewers only, and the gold never in a
worker's page."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotate.services.imports import import_dataset
from annotate.spans.models import GoldSpans
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"


@pytest.fixture
def summary():
    campaign = make_campaign(kind="spans")
    import_dataset("span_records", [SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    return campaign.documents.get(external_id="b2").summaries.get()


def test_only_reviewers_set_gold_and_their_answer_is_checked_like_a_workers(client, summary):
    slug = summary.document.campaign.slug
    url = reverse("annotate:spans-gold-edit", args=[slug, summary.pk])
    worker = make_worker()
    client.force_login(worker.user)
    assert client.get(url).status_code == 403
    assert client.post(url, {"no_error": True, "spans": []}, content_type="application/json").status_code == 403
    assert client.get(reverse("annotate:spans-gold", args=[slug])).status_code == 403

    reviewer = make_worker(staff=True)
    client.force_login(reviewer.user)
    page = client.get(url)
    assert page.status_code == 200 and page.context["data"]["initial_no_error"] is True  # imported: "no error"
    refused = client.post(url, {"no_error": False, "spans": [{"start": 0, "end": 99, "type": "extrinsic_np"}]}, content_type="application/json")
    assert refused.status_code == 400 and "not within the summary" in refused.json()["detail"]
    assert GoldSpans.objects.get(summary=summary).origin == "imported"
    saved = client.post(url, {"no_error": False, "spans": [{"start": 2, "end": 4, "type": "extrinsic_np"}]}, content_type="application/json")
    assert saved.status_code == 200, saved.content
    gold = GoldSpans.objects.get(summary=summary)
    assert (gold.spans, gold.origin, gold.set_by_id) == ([[2, 4, "extrinsic_np"]], "admin", reviewer.user.pk)
