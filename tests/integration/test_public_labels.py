"""Labels released with a published benchmark are not secret: gold derived from them is public, shown as
such on import and on the control page, and earns no bonus unless the admin accepts the risk knowingly.

End to end on FRANK data through the real views: a bot holding FRANK's released annotations (answers as they
say, "Yes" elsewhere) is owed no bonus on FRANK data, while a worker checked against private gold is.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import (
    Assignment,
    BonusEntry,
    Document,
    GoldLabel,
    GoldSource,
    Participation,
    PayDecision,
    PayDecisionKind,
)
from annotate.services.control_items import (
    mark_gold_public,
    set_gold_label,
    worker_quality,
)
from annotate.services.imports import import_dataset
from benchmarks.adversary_bot import (
    GoldFollower,
    PublicLabelBot,
    run_worker,
    setup_campaign,
    worker_figures,
)
from tests.factories import make_campaign, make_document, make_worker

pytestmark = pytest.mark.django_db

ITEMS = 12
# The worker checked against private gold works longer: how soon its score is decisive varies (see its test).
PRIVATE_GOLD_ITEMS = 16
SUBSET = Path(__file__).resolve().parents[2] / "data" / "frank-subset"


def _bonuses(worker) -> int:
    return BonusEntry.objects.filter(worker=worker, key__startswith="item-bonus").count()


def _admin() -> Client:
    client = Client()
    client.force_login(make_worker(staff=True).user)
    return client


def test_benchmark_imports_mark_their_labels_public_and_jsonl_labels_stay_private(tmp_path):
    report = import_dataset("frank", [SUBSET], campaign_slug="public-frank")
    assert report.public_labels == "FRANK" and report.as_dict()["public_labels"] == "FRANK"
    assert "Its labels are public (FRANK's release)" in report.summary_line()
    documents = Document.objects.filter(campaign__slug="public-frank")
    assert documents.exists() and set(documents.values_list("public_labels", flat=True)) == {"FRANK"}
    gold = GoldLabel.objects.filter(summary__document__campaign__slug="public-frank")
    assert gold.exists() and not gold.filter(public=False).exists()
    assert all("public: released with FRANK" in note for note in gold.values_list("note", flat=True)[:50])
    # New data of one's own (FactLab's JSONL) carries labels nobody published.
    path = tmp_path / "own.jsonl"
    path.write_text(
        '{"id": "d1", "text": "The council met on Monday. It approved a budget.", "summaries": '
        '[{"system": "s1", "text": "The council met on Monday.", "human_scores": {"Factuality": 1.0}}]}\n',
        encoding="utf-8",
    )
    own = import_dataset("jsonl", [path], campaign_slug="own-data")
    assert own.public_labels == "" and "public" not in own.summary_line()
    own_gold = GoldLabel.objects.filter(summary__document__campaign__slug="own-data")
    assert own_gold.exists() and not own_gold.filter(public=True).exists()


def test_a_bot_holding_frank_s_released_labels_earns_no_bonus_on_frank_data(frank_dir):
    campaign = setup_campaign(frank_dir, 16, slug="public-gold", min_seconds_per_sentence=2.0, trap_rate=0.0)
    assert GoldLabel.objects.filter(summary__document__campaign=campaign, public=True, factual=False).exists()
    bot = make_worker()
    client = Client()
    client.force_login(bot.user)
    run = run_worker(client, campaign.slug, PublicLabelBot(), items=ITEMS, seconds_per_sentence=6.0)
    figures = worker_figures(bot, campaign)
    # It agrees with every public label, so it is never blocked, and it is paid for its items...
    assert run.submitted == ITEMS and figures["status"] == "working" and figures["balanced_score"] == 1.0
    # ...but never a bonus: its only checks are labels anyone can download.
    assert _bonuses(bot) == 0 and figures["owed"] == ITEMS * campaign.pay_per_item
    refusals = list(PayDecision.objects.filter(worker=bot, kind=PayDecisionKind.REFUSED).values_list("reason", flat=True))
    assert len(refusals) == ITEMS and all("on public labels left out" in reason for reason in refusals), refusals
    participation = Participation.objects.select_related("campaign").get(worker=bot, campaign=campaign)
    private = worker_quality(participation, for_bonus=True)
    assert private.public_left_out and private.public_checks > 0 and private.score is None and private.independent_erroneous == 0
    # The control page says the gold is public, and that this worker is verified on nothing private.
    page = _admin().get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert 'id="public-gold"' in page and "gold labels are public" in page and "released with FRANK" in page
    assert "not verified: only public labels checked" in page
    assert 'id="no-bonus-evidence"' in page  # no private erroneous gold: no bonus can be paid


def test_a_worker_checked_against_private_gold_is_paid_the_bonus(frank_dir):
    # Traps on (the default): scored within overlap bands, gold alone decides late on FRANK, whose bands rarely
    # hold both classes; the worker answers traps as they are.
    campaign = setup_campaign(frank_dir, 16, slug="private-gold", min_seconds_per_sentence=2.0, private_gold=True)
    assert not GoldLabel.objects.filter(summary__document__campaign=campaign, public=True).exists()
    honest = make_worker()
    client = Client()
    client.force_login(honest.user)
    items = PRIVATE_GOLD_ITEMS
    run = run_worker(client, campaign.slug, GoldFollower(), items=items, seconds_per_sentence=6.0)
    figures = worker_figures(honest, campaign)
    assert run.submitted == items and figures["status"] == "working"
    # The first items wait for a decisive score (with confidence), then the bonus is paid item after item. How
    # soon the score is decisive depends on which items and traps the claims hand out, which depends on the
    # worker's id (its claim order): after 2 to 10 items in runs with different ids.
    paid = set(BonusEntry.objects.filter(worker=honest, key__startswith="item-bonus").values_list("assignment_id", flat=True))
    submitted = list(Assignment.objects.filter(worker=honest, status="submitted").order_by("submitted_at", "id").values_list("pk", flat=True))
    first_paid = next(i for i, pk in enumerate(submitted) if pk in paid)
    assert set(submitted[first_paid:]) == paid, (first_paid, len(paid))  # once paid, every item after it is too
    assert len(paid) >= items // 4 and figures["owed"] >= len(paid) * campaign.bonus_per_item
    page = _admin().get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert 'id="public-gold"' not in page and 'id="no-bonus-evidence"' not in page


def test_an_admin_who_accepts_the_risk_pays_bonuses_on_public_labels(frank_dir):
    # No confidence asked of the score: without traps, FRANK's gold decides the score within overlap bands late.
    campaign = setup_campaign(frank_dir, 16, slug="risk-accepted", min_seconds_per_sentence=2.0, trap_rate=0.0, bonus_confidence=0.0)
    admin = _admin()
    control = reverse("annotate:manage-control", args=[campaign.slug])
    assert 'id="accept-public-bonus"' in admin.get(control).content.decode()
    admin.post(reverse("annotate:manage-public-label-bonus", args=[campaign.slug]), {"accept": "1"})
    campaign.refresh_from_db()
    assert campaign.bonus_on_public_labels
    page = admin.get(control).content.decode()
    assert 'id="public-bonus-risk"' in page and "a bot holding the published labels is paid like an honest worker" in page
    bot = make_worker()
    client = Client()
    client.force_login(bot.user)
    run_worker(client, campaign.slug, PublicLabelBot(), items=ITEMS, seconds_per_sentence=6.0)
    # What the warning says: the bot is paid like the honest worker (bonuses once its score within overlap bands
    # exists: without traps, FRANK's bands rarely hold both classes, so a quarter to two thirds of the items).
    assert _bonuses(bot) >= ITEMS // 4
    admin.post(reverse("annotate:manage-public-label-bonus", args=[campaign.slug]), {"accept": "0"})
    campaign.refresh_from_db()
    assert not campaign.bonus_on_public_labels


def test_admins_mark_gold_public_or_private_in_the_browser_and_by_api():
    campaign = make_campaign()
    document = make_document(campaign, summaries=[["Greenvale approved a budget.", "The mayor resigned."]])
    summary = document.summaries.get()
    mine = set_gold_label(summary, 0, True)
    copied = set_gold_label(summary, 1, False, public=True, note="copied from FRANK")
    assert (mine.public, copied.public) == (False, True) and mine.source == GoldSource.ADMIN
    admin = _admin()
    visibility = reverse("annotate:manage-gold-visibility", args=[campaign.slug])
    page = admin.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert "1 gold labels are public" in page and "Mark private" in page and "Mark public" in page
    done = admin.post(visibility, {"public": "0", "label": str(copied.pk)}, follow=True).content.decode()
    assert "1 gold labels marked private" in done
    copied.refresh_from_db()
    assert not copied.public
    admin.post(visibility, {"public": "1"})  # every label of the campaign
    assert set(GoldLabel.objects.filter(summary=summary).values_list("public", flat=True)) == {True}
    # Bad input is refused with a message, nothing changed.
    other = make_campaign()
    stranger = set_gold_label(make_document(other, summaries=[["A sentence."]]).summaries.get(), 0, True)
    refused = admin.post(visibility, {"public": "0", "label": str(stranger.pk)}, follow=True).content.decode()
    assert f"This campaign has no gold label {stranger.pk}" in refused and GoldLabel.objects.filter(summary=summary, public=True).count() == 2
    assert "public (1) or private (0)" in admin.post(visibility, {"public": "maybe"}, follow=True).content.decode()
    # The API: the flag is listed, set on creation, and changed by PATCH.
    api = reverse("api:campaign-gold", args=[campaign.slug])
    listed = admin.get(api).json()
    assert {row["id"]: row["public"] for row in listed} == {mine.pk: True, copied.pk: True}
    detail = reverse("api:campaign-gold-detail", args=[campaign.slug, mine.pk])
    patched = admin.patch(detail, {"public": False}, content_type="application/json")
    assert patched.status_code == 200 and patched.json()["public"] is False
    assert admin.patch(detail, {"public": "no"}, content_type="application/json").json() == {"public": ["expected true or false"]}
    created = admin.post(api, {"summary": summary.pk, "sentence_index": 1, "factual": False, "public": True}, content_type="application/json")
    assert created.status_code == 201 and created.json()["public"] is True
    assert mark_gold_public(campaign, False) == 1  # only the one public label changed


def test_the_import_page_says_the_labels_are_public():
    from annotate.models import ImportJob, ImportStatus

    report = import_dataset("frank", [SUBSET], campaign_slug="import-page")
    admin = _admin()
    job = ImportJob.objects.create(
        kind="dataset", format="frank", campaign_slug="import-page", original_name="frank.zip", status=ImportStatus.SUCCEEDED,
        report=report.as_dict(),
    )
    page = admin.get(reverse("annotate:manage-import", args=[job.pk])).content.decode()
    assert "These labels are public" in page and 'id="public-labels-source">FRANK<' in page
    job.report = {**report.as_dict(), "public_labels": ""}
    job.save(update_fields=["report"])
    assert 'id="public-labels" class="notice" hidden' in admin.get(reverse("annotate:manage-import", args=[job.pk])).content.decode()
