"""Posteriors leave the platform: after a refit of the campaign's label model, every judgement row of the
jsonl, csv and Parquet exports carries its sentence's label, posterior and interval and the judging worker's
ability, the dataset card says so, and the participations API shows each worker's ability."""
from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from annotate.models import Participation, SentenceJudgement, SentenceLabel
from metrics_service.label_reliability import refit_campaign_labels
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
C = "/api/campaigns/frank-api"


def _body(response) -> bytes:
    assert response.status_code == 200
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_exports_and_participations_carry_posteriors_after_a_refit(campaign, researcher_client, admin_client, tmp_path):
    before = [json.loads(x) for x in _body(researcher_client.get(f"{C}/export/?format=jsonl&rows=judgements")).decode().splitlines()]
    assert before and all(r["label_posterior"] is None for r in before)  # nothing fitted yet: empty, not invented

    state = refit_campaign_labels(campaign)
    labels = {(label.summary_id, label.sentence_index): label for label in SentenceLabel.objects.filter(summary__document__campaign=campaign)}
    assert state["sentences"] == len(labels) > 0
    assert all(0.0 <= label.posterior_low <= label.posterior <= label.posterior_high <= 1.0 and label.method == campaign.label_model for label in labels.values())

    rows = [json.loads(x) for x in _body(researcher_client.get(f"{C}/export/?format=jsonl&rows=judgements")).decode().splitlines()]
    assert len(rows) == SentenceJudgement.objects.filter(summary__document__campaign=campaign).count()
    for r in rows:
        label = labels[(r["summary_id"], r["sentence_index"])]
        assert r["label_posterior"] == pytest.approx(label.posterior) and r["label_factual"] == label.factual
        assert r["label_low"] <= r["label_posterior"] <= r["label_high"] and r["label_method"] == campaign.label_model
    # Each row also carries the judging worker's ability under the same model.
    # (a worker without a participation here, e.g. an imported annotator, has none: empty, not invented).
    ability = dict(Participation.objects.filter(campaign=campaign).values_list("worker_id", "label_ability"))
    expected = [ability.get(w) for w in SentenceJudgement.objects.filter(summary__document__campaign=campaign).values_list("worker_id", flat=True)]
    exported = [r["worker_ability"] for r in rows]
    assert any(a is not None for a in expected) and exported.count(None) == expected.count(None)
    assert sorted(a for a in exported if a is not None) == pytest.approx(sorted(a for a in expected if a is not None))
    assert all(r["worker_ability"] is None for r in before)
    text = _body(researcher_client.get(f"{C}/export/?format=csv&rows=judgements")).decode()
    cells = list(csv.DictReader(io.StringIO(text)))
    assert all(float(c["label_low"]) <= float(c["label_posterior"]) <= float(c["label_high"]) for c in cells)

    with zipfile.ZipFile(io.BytesIO(_body(researcher_client.get(f"{C}/export/?format=parquet&rows=judgements")))) as archive:
        archive.extractall(tmp_path)
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "data" / "judgements.parquet")
    assert str(table.schema.field("label_posterior").type) == "double"
    parquet_ability = [a for a in table.column("worker_ability").to_pylist() if a is not None]
    assert sorted(parquet_ability) == pytest.approx(sorted(a for a in exported if a is not None))
    assert sorted(table.column("label_posterior").to_pylist()) == pytest.approx(sorted(r["label_posterior"] for r in rows))
    assert "## Label uncertainty" in (tmp_path / "README.md").read_text()

    frank = json.loads(_body(researcher_client.get(f"{C}/export/?format=frank&file=summaries")))
    judged = [r for r in frank if "Factuality_posterior" in r]
    assert judged and all(r["Factuality_low"] <= r["Factuality_posterior"] <= r["Factuality_high"] for r in judged)
    assert all(abs(r["Factuality_posterior"] - r["Factuality"]) <= 0.5 for r in judged)

    results = admin_client.get(f"{C}/participations/").json()["results"]
    stored = dict(Participation.objects.filter(campaign=campaign).values_list("worker_id", "label_ability"))
    with_judgements = [r for r in results if r["items_submitted"] or r["label_ability"] is not None]
    assert with_judgements and all(r["label_ability"] == pytest.approx(stored[r["worker"]]) for r in with_judgements)
    assert any(r["reliability"] and "glad_ability" in r["reliability"] for r in results)


def test_campaign_api_sets_adaptive_redundancy_and_refuses_min_above_max(campaign, admin_client):
    bad = admin_client.patch(f"{C}/", {"adaptive_redundancy": True, "min_workers": 4, "max_workers": 3}, content_type="application/json")
    assert bad.status_code == 400 and "min_workers" in bad.json() and "must not exceed the maximum" in str(bad.json())
    campaign.refresh_from_db()
    assert not campaign.adaptive_redundancy  # nothing stored half-way
    good = admin_client.patch(f"{C}/", {"adaptive_redundancy": True, "min_workers": 2, "max_workers": 4, "stop_posterior": 0.9}, content_type="application/json")
    assert good.status_code == 200 and good.json()["max_workers"] == 4 and good.json()["label_model"] == "glad"
    wrong = admin_client.patch(f"{C}/", {"stop_posterior": 0.3}, content_type="application/json")
    assert wrong.status_code == 400 and "stop_posterior" in wrong.json()


def test_a_refit_asked_for_through_the_api_gives_imported_judgements_their_posteriors(
        campaign, researcher_client, django_capture_on_commit_callbacks):
    before = researcher_client.get(f"{C}/labels/").json()
    assert before["labels"] == 0 and before["judgements"] > 0 and before["stale"] is True and before["refitted_at"] is None

    with django_capture_on_commit_callbacks(execute=True):
        asked = researcher_client.post(f"{C}/labels/")
    assert asked.status_code == 202, asked.content
    assert asked.json()["already_queued"] is False
    after = researcher_client.get(f"{C}/labels/").json()
    judged = {(s, i) for s, i in SentenceJudgement.objects.filter(summary__document__campaign=campaign).values_list("summary_id", "sentence_index")}
    assert after["labels"] == len(judged) > 0 and after["stale"] is False and after["methods"] == [campaign.label_model]
    assert after["queued"] is False  # the worker's refit clears the request: the next one may queue again
    rows = [json.loads(x) for x in _body(researcher_client.get(f"{C}/export/?format=jsonl&rows=judgements")).decode().splitlines()]
    assert rows and all(r["label_posterior"] is not None and r["label_low"] <= r["label_posterior"] <= r["label_high"] for r in rows)

    # A judgement newer than the labels makes them stale again.
    judgement = SentenceJudgement.objects.filter(summary__document__campaign=campaign).first()
    SentenceJudgement.objects.filter(pk=judgement.pk).update(created_at=judgement.created_at.replace(year=2100))
    assert researcher_client.get(f"{C}/labels/").json()["stale"] is True


def test_a_second_refit_request_joins_the_queued_one_and_bump_campaigns_have_none(campaign, researcher_client, admin_client, settings):
    from django.core.cache import cache

    from annotate.models import Campaign
    from factlab.celery import app

    cache.clear()
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False  # a broker and no worker: the refit waits in the queue
    try:
        first = researcher_client.post(f"{C}/labels/")
        second = researcher_client.post(f"{C}/labels/")
    finally:
        app.conf.task_always_eager = eager
        cache.clear()
    assert first.status_code == second.status_code == 202
    assert first.json()["already_queued"] is False and second.json()["already_queued"] is True and second.json()["queued"] is True
    assert SentenceLabel.objects.filter(summary__document__campaign=campaign).count() == 0  # nothing fitted in the request

    bump = Campaign.objects.create(slug="bump-labels", name="BUMP", kind="bump_free")
    refused = admin_client.post("/api/campaigns/bump-labels/labels/")
    assert refused.status_code == 400 and "no sentence labels" in refused.json()["detail"]
    assert bump.pk


def test_the_dashboard_offers_the_refit_and_its_button_queues_one(campaign, admin_user, django_capture_on_commit_callbacks):
    from django.test import Client

    browser = Client()
    browser.force_login(admin_user)
    page = browser.get("/campaigns/frank-api/dashboard/").content.decode()
    assert 'id="label-refit"' in page and "Refit now" in page and "out of date" in page
    with django_capture_on_commit_callbacks(execute=True):
        answer = browser.post("/campaigns/frank-api/labels/refit/", follow=True)
    assert answer.status_code == 200 and "refits the sentence labels now" in answer.content.decode()
    assert SentenceLabel.objects.filter(summary__document__campaign=campaign).count() > 0
    assert "out of date" not in browser.get("/campaigns/frank-api/dashboard/").content.decode()
