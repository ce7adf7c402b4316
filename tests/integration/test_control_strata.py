"""Checks a page rule cannot pass, recent work, and pay on evidence.

The balanced score is balanced within strata of data set and word-overlap band, so "extractive means
factual" earns nothing on FRANK's gold; block and bonus decisions also read the most recent checks, so good
work banked early does not carry a worker who stopped reading; an identity's first items are paid only once
its score exists. End to end through the real views on FRANK data.
"""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import (
    Assignment,
    BonusEntry,
    Participation,
    PayDecision,
    PayDecisionKind,
)
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import worker_total
from annotate.services.control_items import (
    Check,
    balanced_score,
    overlap_band,
    recent_checks,
    sentence_overlap,
    set_gold_label,
)
from annotate.services.predictable_answers import (
    Answer,
    best_threshold_rule,
    predictable_evidence,
)
from benchmarks.adversary_bot import (
    BankThenCoast,
    GoldFollower,
    OverlapBot,
    SlipReader,
    run_worker,
    setup_campaign,
    worker_figures,
)
from benchmarks.adversary_copiers import Reader
from tests.factories import make_campaign, make_document, make_worker

pytestmark = pytest.mark.django_db

PAY = Decimal("0.50")


# ---------------------------------------------------------------- the score within strata

def test_answers_that_follow_the_stratum_alone_score_one_half():
    # "Extractive means factual": right on every factual copy and every abstractive error, wrong on the rest.
    copies = [Check(True, True, stratum="cnndm/3")] * 40 + [Check(False, False, stratum="cnndm/3")] * 4
    abstractive = [Check(True, False, stratum="cnndm/1")] * 4 + [Check(False, True, stratum="cnndm/1")] * 30
    quality = balanced_score(copies + abstractive, min_per_class=2)
    assert quality.pooled_score == pytest.approx(0.5 * (40 / 44 + 30 / 34))  # 0.89 pooled
    assert quality.score == pytest.approx(0.5) and quality.strata == 2
    # Answers that read the sentence score within each stratum.
    careful = [Check(c.expected_factual, True, stratum=c.stratum) for c in copies + abstractive]
    assert balanced_score(careful, min_per_class=2).score == 1.0


def test_a_stratum_holding_one_class_does_not_decide():
    checks = [Check(True, True, stratum="bbc/3")] * 5 + [Check(False, True, stratum="bbc/0")] * 5
    quality = balanced_score(checks, min_per_class=2)
    assert quality.score is None and quality.pooled_score == 1.0 and "within strata" in quality.describe()


def test_the_overlap_of_a_sentence_with_its_closest_article_sentence():
    article = ["The city council of Greenvale approved a new budget on Monday.", "Mayor Helen Carter resigned."]
    assert sentence_overlap("Greenvale approved a budget.", article) == 1.0
    assert sentence_overlap("Helen Carter approved a budget.", article) == 0.6
    assert [overlap_band(x) for x in (None, 0.2, 0.5, 0.79, 0.8, 0.99, 1.0)] == [-1, 0, 1, 1, 2, 2, 3]


def test_gold_set_by_an_admin_gets_its_overlap():
    campaign = make_campaign()
    summary = make_document(campaign, summaries=[["Greenvale approved a budget.", "Helen Carter resigned in May."]]).summaries.get()
    first, second = set_gold_label(summary, 0, True), set_gold_label(summary, 1, False)
    first.refresh_from_db(), second.refresh_from_db()
    assert first.overlap == 1.0 and second.overlap == pytest.approx(2 / 5)  # "Helen Carter" of "Mayor Helen Carter said ..."


def test_the_recent_window_keeps_the_latest_checks_of_each_class():
    from datetime import datetime, timedelta

    start = datetime(2026, 1, 1)
    old = [Check(True, True, 3.0, count=3, at=start), Check(False, True, 12.0, count=12, at=start)]
    new = [Check(True, True, 9.0, count=9, at=start + timedelta(hours=1)), Check(False, False, 4.0, count=4, at=start + timedelta(hours=1))]
    window = recent_checks(old + new, per_class=10)
    assert sum(c.count for c in window if c.expected_factual) == 10 and sum(c.count for c in window if not c.expected_factual) == 10
    assert sum(c.weight for c in window if not c.expected_factual and not c.correct) == 4.0  # all 4 recent misses kept


def test_a_window_cut_inside_one_submission_takes_the_same_groups_in_any_order():
    # A submission's groups share its time; the database returns them in no fixed order. The submit's kept
    # window (window_groups) and a recount from history (recent_checks) must cut them alike, whatever the order.
    from datetime import datetime
    from itertools import permutations

    from annotate.services.check_counts import window_groups

    at = datetime(2026, 1, 1)
    groups = [Check(True, True, 4.0, count=4, at=at, stratum="cnndm/3"), Check(True, False, 3.0, count=3, at=at, stratum="cnndm/3"),
              Check(True, True, 5.0, count=5, at=at, stratum="xsum/1"), Check(False, False, 2.0, count=2, at=at, stratum="xsum/0")]
    windows = {tuple(sorted(map(repr, recent_checks(list(order), per_class=10)))) for order in permutations(groups)}
    kept = {tuple(sorted(map(repr, window_groups(list(order), per_class=10)))) for order in permutations(groups)}
    assert len(windows) == 1 and len(kept) == 1


# ---------------------------------------------------------------- answers a page feature predicts

def test_the_best_threshold_rule_over_a_feature_and_its_direction():
    assert best_threshold_rule([0.2, 0.4, 0.8, 0.9], [False, False, True, True]) == (1.0, 0.8, True)
    assert best_threshold_rule([0.2, 0.4, 0.8, 0.9], [True, True, False, False]) == (1.0, 0.8, False)
    assert best_threshold_rule([0.1, 0.5], [True, True])[0] == 0.5  # one kind of answer: nothing to predict


def _rule_score(values, factual, threshold, above):
    """Balanced accuracy by its definition, the mean of the two classes' recall, one answer at a time (what
    scikit-learn's ``balanced_accuracy_score`` gives for two classes, at a hundredth of its cost per call)."""
    predicted = [(value >= threshold) == above for value in values]
    recalls = [sum(guess == label for guess, truth in zip(predicted, factual) if truth == label) / factual.count(label)
               for label in (True, False)]
    return sum(recalls) / 2


def test_the_best_threshold_rule_is_the_best_of_every_threshold_in_both_directions():
    # Against the definition scoring every (threshold, direction) in turn: the rule found scores the best there is,
    # and says its own score (equal scores at other thresholds may differ in the last bit, so either may be found).
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(2, 40)
        values = [rng.randint(0, 5) if rng.random() < 0.5 else round(rng.random(), 2) for _ in range(n)]
        factual = [rng.random() < 0.6 for _ in range(n)]
        if len(set(factual)) < 2:
            continue
        score, threshold, above = best_threshold_rule(values, factual)
        best = max(max(_rule_score(values, factual, t, a) for a in (True, False)) for t in set(values))
        assert score == pytest.approx(max(best, 0.5), abs=1e-12), (values, factual)
        if score > 0.5:
            assert _rule_score(values, factual, threshold, above) == pytest.approx(score, abs=1e-12), (values, factual)


def _answers(rule, known):
    # 40 sentences, overlap 0.0 to 0.975 and 4 to 43 words; "known" gives the label where one exists.
    return [Answer(rule(n / 40, 4 + n), (n / 40, 4 + n, 0, 1), known(n / 40, 4 + n)) for n in range(40)]


def test_answers_that_follow_a_feature_against_the_known_labels_are_held_with_the_evidence():
    # Known labels that the overlap gets wrong on five sentences (the short ones): a rule answers by the overlap.
    label = (lambda overlap, words: overlap >= 0.5 if words > 8 else overlap < 0.5)
    rule = predictable_evidence(_answers(lambda overlap, words: overlap >= 0.5, label))
    assert rule is not None and "word overlap with the closest article sentence" in rule
    assert "where the rule contradicts the known label (5 sentences) the worker answered as the rule on 5" in rule
    # A reader answers those five as the labels say: no rule predicts the answers almost perfectly.
    assert predictable_evidence(_answers(label, label)) is None
    # Answers a feature predicts perfectly, but as the labels also say (FRANK's one-sentence XSum summaries are
    # mostly wrong, and all gold): a careful worker, not held.
    assert predictable_evidence(_answers(lambda overlap, words: overlap >= 0.5, lambda overlap, words: overlap >= 0.5)) is None
    # Too few answers of one kind to judge a rule.
    assert predictable_evidence(_answers(lambda overlap, words: overlap >= 0.8, label)) is None


# ---------------------------------------------------------------- pay held until the score exists

def _gold_campaign(documents: int = 6, **settings):
    campaign = make_campaign(entity_check_enabled=False, control_min_per_class=2, redundancy=1, pay_per_item=PAY, **settings)
    for _ in range(documents):
        summary = make_document(campaign, summaries=[["Greenvale approved a budget.", "The budget of Greenvale approved a new city council."]]).summaries.get()
        set_gold_label(summary, 0, True)
        set_gold_label(summary, 1, False)
    return campaign


def _submit(worker, campaign, *, right: bool):
    assignment = request_assignment(worker, campaign)
    payload = {"summaries": [{"answers": [{"factual": True}, {"factual": not right, "categories": [] if not right else ["RelE"]}]}]}
    return assignment, submit_assignment(assignment.pk, worker, payload)


def test_first_items_are_paid_once_the_score_exists():
    campaign = _gold_campaign()
    worker = make_worker()
    first, _ = _submit(worker, campaign, right=True)  # one check of each class: no score yet
    held = PayDecision.objects.get(worker=worker, kind=PayDecisionKind.HELD)
    assert held.assignment_id == first.pk and "until the worker's quality score exists" in held.reason
    assert worker_total(worker, campaign) == 0 and not Participation.objects.get(worker=worker).pay_held
    _submit(worker, campaign, right=True)  # two of each: the score exists, both items are paid
    assert BonusEntry.objects.filter(worker=worker, reason="pay per item").count() == 2
    assert PayDecision.objects.get(worker=worker, kind=PayDecisionKind.RELEASED).key == f"released:{held.key}"
    _submit(worker, campaign, right=True)
    assert BonusEntry.objects.filter(worker=worker, reason="pay per item").count() == 3  # released once


def test_first_items_of_a_worker_blocked_when_the_score_exists_are_refused():
    campaign = _gold_campaign()
    worker = make_worker()
    first, _ = _submit(worker, campaign, right=False)
    _, outcome = _submit(worker, campaign, right=False)
    assert outcome.blocked_reason
    assert worker_total(worker, campaign) == 0
    refused = PayDecision.objects.get(worker=worker, key=f"refused:pending-pay:{first.pk}")
    assert refused.kind == PayDecisionKind.REFUSED and "blocked" in refused.reason


# ---------------------------------------------------------------- end to end on FRANK

def _frank(frank_dir, documents: int, **settings):
    # Private gold (an admin's own labels): the attack under test is the overlap rule, not published labels.
    return setup_campaign(frank_dir, documents, slug="strata-frank", private_gold=True, min_seconds_per_sentence=2.0, pay_per_item=PAY,
                          **settings)


def _run(campaign, agent, items: int):
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    run = run_worker(client, campaign.slug, agent, items=items, seconds_per_sentence=6.0)
    return worker, run


# Each worker's claim order is keyed by its id and the items' ids: with the ids of a fresh database (whatever
# ran before on this process), the honest worker's ten items hold gold of both classes, so its score exists by
# the tenth; with other ids it may still be waiting for it, and the figures below would not be this scenario's.
@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_the_overlap_rule_earns_no_bonus_and_stops_within_10_items_beside_a_paid_honest_worker(frank_dir):
    campaign = _frank(frank_dir, documents=16)
    # Three identities, each in a claim order of its own: every one is blocked (its score within strata) or
    # held (its answers follow the overlap even where the known label says otherwise) within 10 items.
    for _ in range(3):
        bot, run = _run(campaign, OverlapBot(0.7), items=10)
        figures = worker_figures(bot, campaign)
        assert figures["bonuses"] == 0 and figures["owed"] <= (figures["items"] - 1) * PAY, figures  # never the stopping item
        assert figures["status"] in ("blocked", "held for review"), figures
        assert run.stopped, run  # it takes no further item
        print(f"overlap bot: {figures}")
    honest, honest_run = _run(campaign, GoldFollower(), items=10)
    paid = worker_figures(honest, campaign)
    assert honest_run.submitted == 10 and paid["status"] == "working" and paid["balanced_score"] == 1.0
    assert BonusEntry.objects.filter(worker=honest, reason="pay per item").count() == 10
    # Scored within overlap bands, FRANK's gold decides the score later than pooled: the first bonuses wait for it.
    assert paid["bonuses"] >= 3 and paid["owed"] >= 10 * PAY + 3 * campaign.bonus_per_item
    # FRANK's gold, scored within strata: no page feature gives it away, and the control page says so.
    admin = Client()
    admin.force_login(make_worker(staff=True).user)
    control = admin.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert 'id="predictability-table"' in control and 'id="gold-predictable"' not in control
    print(f"honest: {paid}")


def test_answers_a_page_feature_predicts_are_held_with_the_evidence_while_readers_stay_paid(frank_dir):
    # The score never blocks here: what stops the overlap rule is the shape of its answers alone.
    campaign = _frank(frank_dir, documents=16, control_block_threshold=0.0)
    bot, run = _run(campaign, OverlapBot(0.7), items=10)
    figures = worker_figures(bot, campaign)
    assert figures["status"] == "held for review" and figures["owed"] == 0 and figures["bonuses"] == 0, figures
    assert run.stopped and figures["items"] <= 10, run  # held: no further item until an admin's review
    assert figures["reason"].startswith("predictable answers: a page feature predicts them"), figures
    assert "word overlap with the closest article sentence" in figures["reason"] and "answered as the rule on" in figures["reason"]
    held = PayDecision.objects.filter(worker=bot, kind=PayDecisionKind.HELD)
    assert held.exists() and all("predictable answers" in d.reason or "quality score exists" in d.reason for d in held)
    # Human-like readers (answers that follow FRANK's ratings, or the gold with slips) and a gold follower: paid.
    for agent in (Reader(), SlipReader(slips=0.1), GoldFollower()):
        worker, worker_run = _run(campaign, agent, items=10)
        row = worker_figures(worker, campaign)
        assert worker_run.submitted == 10 and row["status"] == "working" and row["owed"] >= 10 * PAY, (type(agent).__name__, row)
        print(f"{type(agent).__name__}: {row}")


@pytest.mark.django_db(transaction=True, reset_sequences=True)  # the honest part's items: see the overlap-rule test
def test_bank_then_coast_earns_at_most_3_bonuses_after_10_honest_items(frank_dir):
    campaign = _frank(frank_dir, documents=24)
    worker, run = _run(campaign, BankThenCoast(bank=10), items=20)
    submitted = list(Assignment.objects.filter(worker=worker, submitted_at__isnull=False).order_by("submitted_at"))
    bonus_of = set(BonusEntry.objects.filter(worker=worker, key__startswith="item-bonus:").values_list("assignment_id", flat=True))
    banked = [a for a in submitted[:10] if a.pk in bonus_of]
    coasting = [a for a in submitted[10:] if a.pk in bonus_of]
    assert len(banked) >= 3  # the honest part did earn bonuses (once its score within overlap bands existed)
    assert len(coasting) <= 3, (len(coasting), run.stopped)
    print(f"bank-then-coast: {len(submitted)} items, {len(banked)} banked bonuses, {len(coasting)} while coasting; {worker_figures(worker, campaign)}")


def test_the_control_page_warns_when_a_page_feature_separates_the_gold(client):
    # Gold told apart by sentence length within one overlap band: the page gives it away.
    campaign = _gold_campaign()
    admin = make_worker(staff=True)
    client.force_login(admin.user)
    page = client.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert 'id="gold-predictable"' in page and "sentence length (best threshold) scores 1.00" in page
    assert 'id="predictability-table"' in page


def test_gold_no_page_feature_separates_raises_no_warning_whatever_its_order(monkeypatch):
    # Gold whose labels are drawn independently of the page features, 120 sentences as a small campaign has:
    # the threshold rules are scored on many halvings, so neither the draw nor the order of the rows (which
    # decides each halving) puts a feature over the warning by chance.
    import random

    from annotate.services import gold_predictability as predictability

    rng = random.Random(11)
    for _ in range(20):
        n = 120
        datasets = [rng.choice(("cnndm", "xsum")) for _ in range(n)]
        overlaps = [rng.choice((0.3, 0.6, 0.9, 1.0)) for _ in range(n)]
        features = [[overlap, rng.randint(5, 30), rng.randint(0, 3), rng.randint(1, 4)] for overlap in overlaps]
        labels = [rng.random() < 0.6 for _ in range(n)]
        strata = [f"{d}/{overlap_band(o)}" for d, o in zip(datasets, overlaps)]
        monkeypatch.setattr(predictability, "gold_page_features", lambda campaign, rows=(features, datasets, labels, strata): rows)
        found = predictability.gold_predictability(None)
        assert not found.warning, found.best


# ---------------------------------------------------------------- completion code and approvals

def test_the_completion_code_needs_the_minimum_work_at_the_minimum_time(client):
    from annotate.models import Worker
    from tests.integration.test_crowd_identity import an_ip, prolific_url, uid
    from tests.integration.test_frank_protocol import age, answers_for

    campaign = make_campaign(prolific_completion_code="DONE7", prolific_screenout_code="OUT7", completion_min_items=2,
                             min_seconds_per_sentence=2.0)
    for _ in range(4):
        make_document(campaign)
    pid = uid()
    client.get(prolific_url(campaign, pid), REMOTE_ADDR=an_ip())
    worker = Worker.objects.get(external_id=pid)
    done_url = reverse("annotate:campaign-done", args=[campaign.slug])

    def submit(*, slow: bool) -> None:
        assert client.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 200
        assignment = Assignment.objects.get(worker=worker, status="active")
        if slow:
            age(assignment, minutes=1)
        client.post(reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk]),
                    {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json")
        assignment.refresh_from_db()
        response = client.post(reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]), answers_for(assignment),
                               content_type="application/json")
        assert response.status_code == 200, response.content

    submit(slow=False)  # clicked through in under a second: no work towards the code
    page = client.get(done_url).content
    assert b"cc=" not in page and b"Submit 2 more items" in page
    submit(slow=True)
    assert b"cc=" not in client.get(done_url).content
    submit(slow=True)
    page = client.get(done_url).content
    assert b"cc=DONE7" in page and b"cc=OUT7" not in page


def test_the_approval_files_list_who_to_approve_and_who_to_reject_with_the_reason(client):
    import csv
    import io

    from tests.integration.test_frank_protocol import age

    campaign = _gold_campaign(documents=8, min_seconds_per_sentence=2.0, completion_min_items=2)
    careful, careless, hasty = (make_worker(provider="prolific", external_id=f"PID-{n}") for n in ("careful", "careless", "hasty"))
    mturk = make_worker(provider="mturk", external_id="AWORKER1")
    for worker, right, slow, n in ((careful, True, True, 2), (careless, False, True, 2), (hasty, True, False, 1), (mturk, True, True, 2)):
        for k in range(n):
            assignment = request_assignment(worker, campaign)
            if slow:
                age(assignment, minutes=1)
            if worker is mturk:
                Assignment.objects.filter(pk=assignment.pk).update(external_assignment_id=f"ASSIGN{k}")
            payload = {"summaries": [{"answers": [{"factual": True}, {"factual": not right, "categories": ["RelE"] if right else []}]}]}
            submit_assignment(assignment.pk, worker, payload)
    admin = make_worker(staff=True)
    client.force_login(admin.user)
    url = reverse("annotate:manage-bonuses-csv", args=[campaign.slug])
    assert client.get(url, {"format": "prolific-approve"}).content.decode().split() == ["PID-careful"]
    rejected = dict(csv.reader(io.StringIO(client.get(url, {"format": "prolific-reject"}).content.decode())))
    assert set(rejected) == {"PID-careless", "PID-hasty"}
    assert "failed the campaign's quality checks" in rejected["PID-careless"]
    assert "did not complete the minimum work: 0 of 2 items at the minimum time" in rejected["PID-hasty"]
    mturk_rows = list(csv.DictReader(io.StringIO(client.get(url, {"format": "mturk-approval"}).content.decode())))
    assert [(r["AssignmentId"], r["WorkerId"], r["Approve"], r["Reject"]) for r in mturk_rows] == [
        ("ASSIGN0", "AWORKER1", "x", ""), ("ASSIGN1", "AWORKER1", "x", ""),
    ]
    everything = client.get(url, {"format": "approval"}).content.decode()
    assert everything.count("approve") == 3 and everything.count("reject") == 2


def test_the_task_page_says_quality_is_also_judged_on_recent_work(client):
    campaign = _gold_campaign()
    worker = make_worker()
    client.force_login(worker.user)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
    assert 'id="rule-recent-quality"' in page and "latest 10 checked answers of each kind" in page
    assert "pay for your first items is held until enough of them are checked" in page
