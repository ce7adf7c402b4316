"""Control items with gold labels, the balanced quality score, and pay rules that need the work.

End to end on FRANK data through the real views: a bot that reads the page is never owed a bonus and is
blocked or held within 15 items; a worker who answers as the gold says is paid and never blocked.
"""
from __future__ import annotations

import itertools
import json
import random
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import (
    Assignment,
    BonusEntry,
    GoldLabel,
    GoldSource,
    Item,
    Participation,
    PayDecision,
    PayDecisionKind,
    Summary,
    Trap,
    TrapSource,
)
from annotate.protocols import protocol_for
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import worker_total
from annotate.services.control_items import (
    Check,
    arrange_candidates,
    balanced_score,
    campaign_has_checks,
    gold_from_crowd,
    refresh_control_items,
    set_gold_label,
    worker_quality,
    worker_recent_quality,
)
from annotate.services.errors import InvalidSubmission, NotEligible
from benchmarks.adversary_bot import (
    GoldFollower,
    PageReadingBot,
    looks_like_trap,
    run_worker,
    setup_campaign,
    worker_figures,
)
from tests.factories import make_campaign, make_document, make_worker
from tests.integration.test_frank_protocol import TRAPS, age, answers_for

pytestmark = pytest.mark.django_db
#: An erroneous sentence made of one article sentence's words, like the factual "Greenvale approved a budget.":
#: the score is balanced within word-overlap bands, so gold a page rule tells apart by overlap scores nobody.
WRONG_FROM_ARTICLE_WORDS = "The budget of Greenvale approved a new city council."


# ---------------------------------------------------------------- the score

def test_yes_everywhere_scores_one_half_however_few_errors_there_are():
    checks = [Check(True, True)] * 68 + [Check(False, False)] * 32  # 68% right, by always saying "Yes"
    assert balanced_score(checks).score == pytest.approx(0.5)
    perfect = [Check(True, True)] * 68 + [Check(False, True)] * 32
    assert balanced_score(perfect).score == pytest.approx(1.0)


def test_the_score_waits_for_both_classes_and_weights_traps():
    assert balanced_score([Check(True, True)] * 10, min_per_class=2).score is None
    assert balanced_score([Check(True, True)] * 10 + [Check(False, True)], min_per_class=2).score is None
    # A trap of weight 0.25 counts a quarter of a gold sentence: 1 wrong gold error vs 4 right cheap traps.
    checks = [Check(True, True, 1.0)] * 4 + [Check(False, False, 1.0, "gold")] + [Check(False, True, 0.25, "trap")] * 4
    quality = balanced_score(checks, min_per_class=1)
    assert quality.score == pytest.approx(0.5 * (1.0 + 1.0 / 2.0))
    assert (quality.gold_checks, quality.trap_checks, quality.erroneous_weight) == (5, 4, 2.0)


def test_the_score_is_scikit_learns_weighted_balanced_accuracy():
    from sklearn.metrics import balanced_accuracy_score

    rng = random.Random(7)
    for _ in range(200):
        checks = [Check(rng.random() < 0.7, rng.random() < 0.8, rng.choice([1.0, 0.25, 0.5, 3.0])) for _ in range(rng.randint(2, 40))]
        if len({c.expected_factual for c in checks}) < 2:
            continue
        expected = balanced_accuracy_score(
            [c.expected_factual for c in checks], [c.expected_factual == c.correct for c in checks],
            sample_weight=[c.weight for c in checks],
        )
        assert balanced_score(checks, min_per_class=0).score == pytest.approx(expected, abs=1e-12)


def test_the_bot_rule_finds_mechanical_traps_and_passes_copies():
    article = ["The mayor of Greenvale opened the new bridge on Monday .", "He thanked the builders ."]
    assert looks_like_trap("The mayor of Greenvale did not open the new bridge on Monday.", article) == "RelE"
    assert looks_like_trap("She thanked the builders.", article) == "CorefE"
    assert looks_like_trap("Monday on the bridge new opened Greenvale of mayor the.", article) == "GramE"
    assert looks_like_trap("Protesters rallied in Baltimore late on Tuesday night.", article) == "OutE"
    assert looks_like_trap("The mayor of Greenvale opened the new bridge on Monday.", article) is None


def test_a_bonus_needs_the_score_with_confidence():
    quality = balanced_score([Check(True, True)] * 2 + [Check(False, True)] * 2, min_per_class=2)
    assert quality.score == 1.0 and 0.3 < quality.lower_bound(0.95) < 0.4  # two of each: 1.0, but not sure
    sure = balanced_score([Check(True, True)] * 20 + [Check(False, True)] * 6, min_per_class=2)
    assert sure.lower_bound(0.95) > 0.7 and sure.lower_bound(0.0) == 1.0
    lucky_bot = balanced_score([Check(True, True)] * 27 + [Check(True, False)] + [Check(False, True)] * 2 + [Check(False, False)] * 4)
    assert lucky_bot.score > 0.6 and lucky_bot.lower_bound(0.95) < 0.6


# ---------------------------------------------------------------- gold

def _frank_campaign(frank_dir, documents: int = 16, **settings):
    return setup_campaign(frank_dir, documents, slug="control-frank", **settings)


def test_frank_import_stores_gold_from_the_human_scores(frank_dir):
    campaign = _frank_campaign(frank_dir, documents=6)
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign)
    assert gold.exists() and set(gold.values_list("source", flat=True)) == {GoldSource.IMPORTED}
    for summary in Summary.objects.filter(document__campaign=campaign, is_reference=False):
        labels = list(gold.filter(summary=summary).order_by("sentence_index"))
        factuality = summary.human_scores["Factuality"]
        if factuality in (0.0, 1.0):
            assert [g.factual for g in labels] == [factuality == 1.0] * len(summary.sentences)
        else:
            assert labels == []  # a mixed summary: which sentence is wrong is not known at summary level
    one_sentence_errors = [g for g in gold.filter(factual=False).select_related("summary") if len(g.summary.sentences) == 1]
    assert any(g.category for g in one_sentence_errors)  # XSum: the per-category scores name the error
    assert Item.objects.filter(campaign=campaign, is_control=True).count() == campaign.items.count()


def test_gold_never_reaches_the_task_page(frank_dir, client):
    campaign = _frank_campaign(frank_dir, documents=4)
    worker = make_worker()
    client.force_login(worker.user)
    html = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
    data = json.loads(html.split('<script id="task-data" type="application/json">')[1].split("</script>")[0])
    assert set(data) == {"assignment", "article", "paragraphs", "summaries", "entity_options", "entity_done", "categories", "preview", "submission_key", "urls"}
    for word in ("gold", "is_control", "Factuality", "GoldLabel"):
        assert word not in html


def test_admin_sets_gold_in_the_browser_and_by_api(client):
    campaign = make_campaign()
    document = make_document(campaign, summaries=[["Greenvale approved a budget.", "The mayor resigned."]])
    summary = document.summaries.get()
    admin = make_worker(staff=True)
    client.force_login(admin.user)
    assert client.get(reverse("annotate:manage-control", args=[campaign.slug])).status_code == 200
    url = reverse("annotate:manage-gold", args=[campaign.slug])
    client.post(url, {"summary": summary.pk, "sentence": 2, "label": "erroneous", "category": "EntE", "note": "checked"})
    label = GoldLabel.objects.get(summary=summary)
    assert (label.sentence_index, label.factual, label.category, label.source, label.set_by_id) == (1, False, "EntE", GoldSource.ADMIN, admin.user.pk)
    assert Item.objects.get(document=document).is_control
    # Bad input: a clear message, nothing stored.
    page = client.post(url, {"summary": summary.pk, "sentence": 3, "label": "factual"}, follow=True).content.decode()
    assert "out of range" in page and GoldLabel.objects.count() == 1
    api = reverse("api:campaign-gold", args=[campaign.slug])
    response = client.post(api, {"summary": summary.pk, "sentence_index": 0, "factual": True, "category": "EntE"}, content_type="application/json")
    assert response.status_code == 400 and "no error category" in response.json()["detail"]
    response = client.post(api, {"summary": summary.pk, "sentence_index": 0, "factual": True}, content_type="application/json")
    assert response.status_code == 201 and GoldLabel.objects.count() == 2
    assert [row["factual"] for row in client.get(api).json()] == [True, False]
    # Taken away again: by API (204), and in the browser; the item stops being a control item with its last label.
    first, second = GoldLabel.objects.order_by("sentence_index")
    detail = reverse("api:campaign-gold-detail", args=[campaign.slug, first.pk])
    assert client.delete(detail).status_code == 204 and client.delete(detail).status_code == 404
    other = make_campaign()
    assert client.delete(reverse("api:campaign-gold-detail", args=[other.slug, second.pk])).status_code == 404  # not its campaign
    page = client.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert reverse("annotate:manage-gold-remove", args=[campaign.slug, second.pk]) in page
    done = client.post(reverse("annotate:manage-gold-remove", args=[campaign.slug, second.pk]), follow=True).content.decode()
    assert "is no longer gold" in done and not GoldLabel.objects.exists() and not Item.objects.get(document=document).is_control
    worker = make_worker()
    client.force_login(worker.user)
    assert client.get(api).status_code == 403
    assert client.delete(detail).status_code == 403
    with pytest.raises(InvalidSubmission, match="unknown error category"):
        set_gold_label(summary, 0, False, "Nope")


def test_certain_crowd_labels_become_gold():
    campaign = make_campaign(entity_check_enabled=False, control_min_per_class=1, crowd_gold_posterior=0.95, redundancy=3)
    known = make_document(campaign, summaries=[["Greenvale approved a budget.", WRONG_FROM_ARTICLE_WORDS]])
    open_doc = make_document(campaign, summaries=[["The council met on Monday."]])
    s_known, s_open = known.summaries.get(), open_doc.summaries.get()
    set_gold_label(s_known, 0, True)
    set_gold_label(s_known, 1, False)
    workers = [make_worker() for _ in range(3)]
    for worker in workers:
        for _ in range(2):
            assignment = request_assignment(worker, campaign)
            rows = []
            for spec in assignment.layout["summaries"]:
                if spec["summary"] == s_known.pk:
                    rows.append({"answers": [{"factual": True}, {"factual": False, "categories": ["EntE"]}]})
                else:
                    rows.append({"answers": [{"factual": False, "categories": ["CircE"]}]})
            submit_assignment(assignment.pk, worker, {"summaries": rows})
    assert gold_from_crowd(campaign) == 1
    label = GoldLabel.objects.get(summary=s_open)
    assert label.source == GoldSource.CROWD and label.factual is False and "3 trusted workers" in label.note


# ---------------------------------------------------------------- spreading control items

def test_control_items_come_at_random_positions_in_about_the_campaign_share():
    campaign = make_campaign(control_share=0.2)
    items = [Item(pk=i, is_control=i % 2 == 0) for i in range(10)]
    rng = random.Random(7)
    firsts = [arrange_candidates(campaign, items, rng)[0].is_control for _ in range(2000)]
    assert 0.17 < sum(firsts) / len(firsts) < 0.23
    positions = [i for i, control in enumerate(firsts) if control]
    gaps = {b - a for a, b in itertools.pairwise(positions)}
    assert len(gaps) > 5  # not every k-th
    only_plain = [Item(pk=i, is_control=False) for i in range(3)]
    assert arrange_candidates(campaign, only_plain, rng) == only_plain
    campaign.control_share = 1.0
    assert all(arrange_candidates(campaign, items, rng)[0].is_control for _ in range(20))
    campaign.control_share = 0.0
    assert not any(arrange_candidates(campaign, items, rng)[0].is_control for _ in range(20))


# ---------------------------------------------------------------- pay rules

def _gold_campaign(**settings):
    campaign = make_campaign(entity_check_enabled=False, control_min_per_class=1, redundancy=1, **settings)
    for _ in range(6):
        document = make_document(campaign, summaries=[["Greenvale approved a budget.", WRONG_FROM_ARTICLE_WORDS]])
        summary = document.summaries.get()
        set_gold_label(summary, 0, True)
        set_gold_label(summary, 1, False)
    return campaign


def _right(assignment) -> dict:
    return {"summaries": [{"answers": [{"factual": True}, {"factual": False, "categories": ["EntE"]}]}]}


def test_no_bonus_for_an_item_flagged_too_fast_even_with_a_perfect_score():
    campaign = _gold_campaign(min_seconds_per_sentence=2.0, bonus_confidence=0.0)
    worker = make_worker()
    slow = request_assignment(worker, campaign)
    age(slow, minutes=1)
    submit_assignment(slow.pk, worker, _right(slow))
    fast = request_assignment(worker, campaign)
    submit_assignment(fast.pk, worker, _right(fast))
    assert BonusEntry.objects.filter(assignment=slow, key__startswith="item-bonus").exists()
    assert not BonusEntry.objects.filter(assignment=fast, key__startswith="item-bonus").exists()
    refusal = PayDecision.objects.get(assignment=fast)
    assert refusal.kind == PayDecisionKind.REFUSED and "too fast on the server's clock" in refusal.reason


def test_no_bonus_while_the_balanced_score_is_below_the_threshold():
    campaign = _gold_campaign(control_block_threshold=0.0)
    worker = make_worker()
    for _ in range(3):
        assignment = request_assignment(worker, campaign)
        submit_assignment(assignment.pk, worker, answers_for(assignment))  # "Yes" everywhere: 0.5
    assert not BonusEntry.objects.filter(worker=worker, key__startswith="item-bonus").exists()
    reasons = list(PayDecision.objects.filter(worker=worker).values_list("reason", flat=True))
    assert len(reasons) == 3 and all("balanced control score 0.50" in r and "with 95% confidence" in r for r in reasons)
    assert worker_quality(Participation.objects.select_related("campaign").get(worker=worker)).score == pytest.approx(0.5)


def test_a_consistently_fast_worker_is_held_then_released_by_an_admin(client):
    campaign = _gold_campaign(min_seconds_per_sentence=2.0, pay_per_item=Decimal("0.50"))
    worker = make_worker()
    for _ in range(3):
        assignment = request_assignment(worker, campaign)
        submit_assignment(assignment.pk, worker, _right(assignment))
    participation = Participation.objects.get(worker=worker)
    assert participation.pay_held and "consistently fast: 3 of 3" in participation.pay_held_reason
    assert worker_total(worker, campaign) == Decimal("1.00")  # the first two items' pay, before the hold
    held = PayDecision.objects.filter(worker=worker, kind=PayDecisionKind.HELD)
    assert [d.amount for d in held] == [Decimal("0.50")]  # its bonus was refused (too fast), its pay held
    with pytest.raises(NotEligible, match="waiting for review"):
        request_assignment(worker, campaign)
    admin = make_worker(staff=True)
    client.force_login(admin.user)
    page = client.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert "held: consistently fast: 3 of 3" in page and "Release pay" in page and "too fast on the server" in page
    client.post(reverse("annotate:manage-release-pay", args=[campaign.slug, participation.pk]), {"note": "real reader"})
    participation.refresh_from_db()
    assert not participation.pay_held and worker_total(worker, campaign) == Decimal("1.50")
    released = PayDecision.objects.get(worker=worker, kind=PayDecisionKind.RELEASED)
    assert "real reader" in released.reason and released.decided_by_id == admin.user.pk
    client.post(reverse("annotate:manage-release-pay", args=[campaign.slug, participation.pk]))  # twice: nothing more
    api = client.post(reverse("api:campaign-release-pay", args=[campaign.slug, participation.pk]), {}, content_type="application/json")
    assert api.status_code == 200 and api.json() == {"released": "0.00"}
    assert worker_total(worker, campaign) == Decimal("1.50")
    assert request_assignment(worker, campaign) is not None


# ---------------------------------------------------------------- end to end on FRANK

@pytest.mark.parametrize("seconds_per_sentence", [0.0, 6.0], ids=["full-speed", "slow"])
def test_a_page_reading_bot_is_never_owed_a_bonus_and_stops_within_15_items(frank_dir, seconds_per_sentence):
    campaign = _frank_campaign(frank_dir, min_seconds_per_sentence=2.0)
    bot = make_worker()
    client = Client()
    client.force_login(bot.user)
    run = run_worker(client, campaign.slug, PageReadingBot(), items=15, seconds_per_sentence=seconds_per_sentence)
    figures = worker_figures(bot, campaign)
    assert figures["status"] in ("blocked", "held for review") and run.submitted <= 15
    assert not BonusEntry.objects.filter(worker=bot).exclude(reason="pay per item").exists()
    assert figures["owed"] == Decimal("0.00")
    # Blocked by the score over all its checks or, before that is known within overlap bands, by its recent checks;
    # at full speed it may be held as consistently fast first (which items come first depends on the ids).
    recent = worker_recent_quality(Participation.objects.select_related("campaign").get(worker=bot, campaign=campaign))
    scores = [score for score in (figures["balanced_score"], recent.score) if score is not None]
    held_as_fast = seconds_per_sentence == 0.0 and figures["status"] == "held for review" and "consistently fast" in figures["reason"]
    assert (scores and min(scores) < campaign.control_block_threshold) or held_as_fast, figures
    assert "task-data" not in client.get(reverse("annotate:frank-task", args=[campaign.slug]), follow=True).content.decode()


@pytest.mark.parametrize(("source", "bonus"), [(TrapSource.MECHANICAL, False), (TrapSource.BUMP_EDIT, True)])
def test_only_traps_the_page_does_not_give_away_can_earn_a_bonus(source, bonus):
    # Every trap answered right, a decisive score of 1.0 from the first item: still no bonus while the traps
    # are mechanical (a script computes them from the page), a bonus once they are human-written edits.
    campaign = make_campaign(trap_rate=1.0, entity_check_enabled=False, redundancy=1, control_min_per_class=1, bonus_confidence=0.0)
    make_document(campaign, summaries=[["Greenvale approved a budget."], ["The council met."]], traps=TRAPS)
    protocol_for(campaign.kind).prepare_campaign(campaign)
    # One word-overlap band for both (the score is balanced within bands): decisive from the first item.
    Trap.objects.filter(document__campaign=campaign).update(weight=1.0, source=source, overlap=0.9)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    submit_assignment(assignment.pk, worker, answers_for(assignment))
    assert BonusEntry.objects.filter(worker=worker, key__startswith="item-bonus").exists() is bonus
    if not bonus:
        refusal = PayDecision.objects.get(worker=worker, kind=PayDecisionKind.REFUSED)
        assert "0 erroneous sentences checked against gold or human-written traps" in refusal.reason
        assert "balanced control score 1.00" in refusal.reason


def test_traps_built_from_the_page_never_earn_a_bonus_alone(frank_dir):
    # Data without labels: the checks are FRANK's mechanical traps only, which a script finds by comparing
    # them with the article. The bot at a human pace scores well on them, and is still owed no bonus, even
    # where the campaign asks no confidence of the score.
    campaign = _frank_campaign(frank_dir, min_seconds_per_sentence=2.0, bonus_confidence=0.0, private_gold=True)
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    control_page = reverse("annotate:manage-control", args=[campaign.slug])
    assert 'id="no-bonus-evidence"' not in admin.get(control_page).content.decode()
    GoldLabel.objects.filter(summary__document__campaign=campaign).delete()
    refresh_control_items(campaign)
    assert campaign_has_checks(campaign) and not Item.objects.filter(campaign=campaign, is_control=True).exists()
    # The control page tells the admin at once that no bonus can be paid, and why.
    assert "No item bonus can be paid yet" in admin.get(control_page).content.decode()
    bot = make_worker()
    client = Client()
    client.force_login(bot.user)
    run = run_worker(client, campaign.slug, PageReadingBot(), items=15, seconds_per_sentence=6.0)
    # Enough items to judge it, unless the traps already got it blocked (its traps alone can score it low).
    assert run.submitted >= 5 or "blocked" in run.stopped, run
    assert not BonusEntry.objects.filter(worker=bot).exclude(reason="pay per item").exists()
    # Every submission has its refusal on record: a bonus refused, or, for the one that got the bot blocked
    # (its traps alone can score it low enough), pay and bonus refused.
    refused = PayDecision.objects.filter(worker=bot, kind=PayDecisionKind.REFUSED)
    # Pay held until the score existed is refused apart when that score gets the bot blocked (one per held item).
    held_then_refused = list(refused.filter(key__startswith="refused:pending-pay:").values_list("reason", flat=True))
    assert all("the worker was blocked" in r for r in held_then_refused), held_then_refused
    reasons = list(refused.exclude(key__startswith="refused:pending-pay:").values_list("reason", flat=True))
    assert len(reasons) == run.submitted
    rules = ("traps built from the article alone do not earn a bonus", "balanced control score not known yet", "got the worker blocked")
    assert all(any(rule in r for rule in rules) for r in reasons), reasons
    if run.stopped:
        assert "blocked" in run.stopped and sum("got the worker blocked" in r for r in reasons) == 1
    quality = worker_quality(Participation.objects.select_related("campaign").get(worker=bot, campaign=campaign))
    assert quality.gold_checks == 0 and quality.trap_checks > 0 and quality.independent_erroneous == 0


def test_a_worker_who_answers_as_the_gold_says_is_paid_and_never_blocked(frank_dir):
    # The gold stands for the admin's own labels (marked private): FRANK's released labels would pay no bonus.
    campaign = _frank_campaign(frank_dir, min_seconds_per_sentence=2.0, private_gold=True)
    honest = make_worker()
    client = Client()
    client.force_login(honest.user)
    run = run_worker(client, campaign.slug, GoldFollower(), items=15, seconds_per_sentence=6.0)
    figures = worker_figures(honest, campaign)
    assert run.submitted == 15 and run.stopped == ""
    assert figures["status"] == "working" and figures["balanced_score"] == 1.0
    bonuses = BonusEntry.objects.filter(worker=honest, key__startswith="item-bonus")
    # The score within overlap bands (FRANK's rarely hold both classes) needs some items before the first bonus
    # (8 to 12 of 15 earned one in runs, with the claim order drawn per worker).
    assert bonuses.count() >= 5 and figures["owed"] >= 5 * campaign.bonus_per_item
    assert not Assignment.objects.filter(worker=honest, too_fast=True).exists()
