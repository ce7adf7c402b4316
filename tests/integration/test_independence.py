"""Independence of workers: copied answers are held for review with their evidence and count once in labels;
claims are served in an order no two workers share, preferring items no one from the worker's network judged."""
from __future__ import annotations

import hashlib
from decimal import Decimal

import pytest

from annotate.models import (
    Assignment,
    CopyFlag,
    PairTally,
    Participation,
    PayDecision,
    PayDecisionKind,
    SentenceLabel,
)
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import worker_total
from annotate.services.errors import NotEligible
from annotate.services.gold import set_gold_label
from annotate.services.independence import PairCounts, cohen_kappa, copy_groups, pair_counts
from annotate.services.pay_rules import release_held_pay
from metrics_service import selectors
from metrics_service.label_reliability import refit_campaign_labels
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db

SENTENCES = [
    "The council approved the budget on Monday.", "Helen Carter voted against it.", "Three schools will be built.",
    "The mayor resigned in protest.", "Taxes will rise next year.", "The vote was unanimous.",
]


def _reads(seed: str, summary_id: int, index: int) -> dict:
    """A reader's own judgement of a sentence: about a third "No", with a category, depending on the reader."""
    draw = int(hashlib.sha256(f"{seed}:{summary_id}:{index}".encode()).hexdigest(), 16)
    if draw % 3:
        return {"factual": True, "categories": [], "seconds": 4 + draw % 5}
    return {"factual": False, "categories": [["EntE"], ["RelE"], ["OutE"]][draw % 7 % 3], "seconds": 4 + draw % 5}


def _answer(assignment: Assignment, judge) -> dict:
    return {"summaries": [
        {"answers": [judge(spec["summary"], i) for i in range(spec["sentences"] + (1 if spec["trap"] else 0))]}
        for spec in assignment.layout["summaries"]
    ]}


def _work(worker, campaign, judge, items: int) -> list[Assignment]:
    done = []
    for _ in range(items):
        try:
            assignment = request_assignment(worker, campaign)
        except NotEligible:  # held for review: no new item until released
            break
        if assignment is None:
            break
        submit_assignment(assignment.pk, worker, _answer(assignment, judge), submission_key=f"k{assignment.pk}")
        done.append(assignment)
    return done


def _copy_of(reader):
    """A copier: for each sentence, the reader's stored answer (label, categories and time)."""
    from annotate.models import SentenceJudgement

    def judge(summary_id: int, index: int) -> dict:
        j = SentenceJudgement.objects.get(worker=reader, summary_id=summary_id, sentence_index=index)
        return {"factual": j.factual, "categories": list(j.categories), "seconds": j.lead_time_seconds}
    return judge


def test_one_reader_and_two_copiers_copiers_held_with_evidence_and_counted_once():
    campaign = make_campaign(redundancy=4, entity_check_enabled=False, pay_per_item=Decimal("0.50"), bonus_per_item=Decimal(0))
    for k in range(6):
        make_document(campaign, summaries=[SENTENCES[k % 3: k % 3 + 3], SENTENCES[3:]])
    reader, first, second, honest = (make_worker(n) for n in ("reader", "copier-1", "copier-2", "honest"))
    for w in (reader, first, second, honest):
        qualify(w, campaign)

    assert len(_work(reader, campaign, lambda s, i: _reads("reader", s, i), 6)) == 6
    # Flagged at the fourth shared item (``MIN_SHARED_ITEMS``): held, they take no new item until a review.
    assert len(_work(first, campaign, _copy_of(reader), 6)) == 4
    assert len(_work(second, campaign, _copy_of(reader), 6)) == 4
    _work(honest, campaign, lambda s, i: _reads("honest", s, i), 6)

    # The copiers' pay is held, with the evidence as the reason; what they were owed moved into held decisions.
    for copier in (first, second):
        participation = Participation.objects.get(worker=copier, campaign=campaign)
        assert participation.pay_held
        assert "non-control sentences identically" in participation.pay_held_reason and "kappa 1.00" in participation.pay_held_reason
        assert f"workers {reader.pk} and {copier.pk}" in participation.pay_held_reason
        assert worker_total(copier, campaign) == Decimal("0.00")
        held = PayDecision.objects.filter(worker=copier, campaign=campaign, kind=PayDecisionKind.HELD)
        assert sum(d.amount for d in held) == Decimal("2.00")  # 4 items x 0.50: those paid before the flag too
        assert all("non-control sentences" in d.reason for d in held)
    # The reader answered first on every item: flagged in the group, but paid; the independent worker is not flagged.
    assert not Participation.objects.get(worker=reader, campaign=campaign).pay_held
    assert worker_total(reader, campaign) == Decimal("3.00")
    assert not Participation.objects.get(worker=honest, campaign=campaign).pay_held
    groups = copy_groups(campaign)
    assert groups[reader.pk] == groups[first.pk] == groups[second.pk] and honest.pk not in groups
    assert {(f.worker_a_id, f.worker_b_id) for f in CopyFlag.objects.filter(campaign=campaign, worker_a=reader)} == {
        (reader.pk, first.pk), (reader.pk, second.pk)}

    # Their labels count once: two votes per sentence (the group and the independent worker), not four.
    frame = selectors.judgements_frame(campaign, selectors.Filters())
    assert set(frame.groupby(["summary_id", "sentence_index"]).size()) == {2}
    assert set(frame["worker_id"]) == {reader.pk, honest.pk}
    refit_campaign_labels(campaign)
    assert set(SentenceLabel.objects.filter(summary__document__campaign=campaign).values_list("n", flat=True)) == {2}

    # The admin sees the flags and their evidence on the control page.
    from django.test import Client
    from django.urls import reverse

    admin = Client()
    admin.force_login(make_worker("admin", staff=True).user)
    page = admin.get(reverse("annotate:manage-control", args=[campaign.slug])).content.decode()
    assert 'id="copy-flags"' in page and "reader" in page and "copier-1" in page and "non-control sentences identically" in page

    # A review releases the held pay into the ledger.
    assert release_held_pay(Participation.objects.get(worker=first, campaign=campaign)) == Decimal("2.00")
    assert worker_total(first, campaign) == Decimal("2.00")


def test_independent_workers_are_not_flagged_and_kappa_needs_variation():
    campaign = make_campaign(redundancy=3, entity_check_enabled=False, pay_per_item=Decimal("0.50"), bonus_per_item=Decimal(0))
    for k in range(6):
        make_document(campaign, summaries=[SENTENCES[k % 3: k % 3 + 3], SENTENCES[3:]])
    workers = [make_worker() for _ in range(3)]
    for w in workers:
        qualify(w, campaign)
        _work(w, campaign, lambda s, i, w=w: _reads(f"w{w.pk}", s, i), 6)
    # Two "Yes everywhere" workers agree fully, yet that is no evidence of copying (nothing to copy).
    assert cohen_kappa([(True, True)] * 20) is None
    assert CopyFlag.objects.filter(campaign=campaign).count() == 0
    assert not Participation.objects.filter(campaign=campaign, pay_held=True).exists()
    assert all(worker_total(w, campaign) == Decimal("3.00") for w in workers)


def test_two_workers_claim_in_different_orders():
    campaign = make_campaign(redundancy=5, entity_check_enabled=False)
    for _ in range(12):
        make_document(campaign, summaries=[["One sentence."]])
    orders = []
    for name in ("first", "second"):
        worker = make_worker(name)
        qualify(worker, campaign)
        order = []
        for _ in range(12):
            assignment = request_assignment(worker, campaign)
            order.append(assignment.item.position)
            submit_assignment(assignment.pk, worker, _answer(assignment, lambda s, i: {"factual": True, "categories": []}),
                              submission_key=f"k{assignment.pk}")
        orders.append(order)
    assert sorted(orders[0]) == sorted(orders[1])  # the same items...
    assert orders[0] != orders[1]  # ...in another order: the second is not steered onto the first's items
    assert orders[0][:3] != orders[1][:3]


def test_a_claim_prefers_an_item_no_one_from_the_same_network_judged():
    campaign = make_campaign(redundancy=3, entity_check_enabled=False)
    for _ in range(6):
        make_document(campaign, summaries=[["One sentence."]])
    taken = []
    for name in ("a", "b", "c"):
        worker = make_worker(name)
        qualify(worker, campaign)
        for _ in range(2):
            assignment = request_assignment(worker, campaign, network="same-household")
            assert assignment.network == "same-household"
            taken.append(assignment.item_id)
            submit_assignment(assignment.pk, worker, _answer(assignment, lambda s, i: {"factual": True, "categories": []}),
                              submission_key=f"k{assignment.pk}")
    # Six claims from one network over six items with three slots each: each item went to one of them.
    assert len(set(taken)) == 6
    # Another network is not kept off those items.
    other = make_worker("d")
    qualify(other, campaign)
    assert request_assignment(other, campaign, network="elsewhere") is not None


def _tally_counts(tally: PairTally) -> PairCounts:
    return PairCounts(tally.shared_items, tally.a_after_b, tally.b_after_a, tally.shared_sentences, tally.agree, tally.a_yes,
                      tally.b_yes, tally.identical, tally.same_times)


def _tallies_checked_against_the_history(campaign) -> int:
    """Every pair tally of the campaign's current checks version equals the pair's counts from its whole history
    (a recount); returns how many there are."""
    campaign.refresh_from_db()
    current = PairTally.objects.filter(campaign=campaign, checks_version=campaign.checks_version)
    for tally in current:
        assert _tally_counts(tally) == pair_counts(campaign, tally.worker_a_id, [tally.worker_b_id])[tally.worker_b_id], tally
    return current.count()


def test_pair_tallies_kept_by_submissions_equal_a_recount_and_are_counted_again_when_gold_changes():
    """Each submission adds its item to its pairs' tallies (the review of copied answers reads them instead of the
    pairs' whole histories); whatever the order of submissions, a tally equals the pair's counts from scratch, and
    after a sentence becomes gold (no longer compared), a pair's next shared item counts the pair again."""
    campaign = make_campaign(redundancy=4, entity_check_enabled=False, pay_per_item=Decimal("0.50"), bonus_per_item=Decimal(0))
    documents = [make_document(campaign, summaries=[SENTENCES[k % 3: k % 3 + 3], SENTENCES[3:]]) for k in range(8)]
    workers = [make_worker() for _ in range(4)]
    for worker in workers:
        qualify(worker, campaign)
    # In turns, two items at a time: pairs are joined and grow at different submissions, in both orders of ids.
    for _ in range(2):
        for worker in reversed(workers):
            assert len(_work(worker, campaign, lambda s, i, w=worker: _reads(f"w{worker.pk}", s, i), 2)) == 2
    # (A pair whose items do not meet yet has no tally: claims come in an order of each worker's own.)
    before = [_tally_counts(t) for t in PairTally.objects.filter(campaign=campaign)]
    assert _tallies_checked_against_the_history(campaign) == len(before) >= 3
    assert all(counts.shared_sentences == 6 * counts.shared_items for counts in before)

    # Two sentences of the first summary become gold: control sentences, which no pair compares any more.
    for index in (0, 1):
        set_gold_label(documents[0].summaries.order_by("pk").first(), index, True)
    campaign.refresh_from_db()
    assert not PairTally.objects.filter(campaign=campaign, checks_version=campaign.checks_version).exists()
    # Everyone finishes the campaign (every item, redundancy 4): each pair is counted again at its next shared
    # item, without the sentences that became gold, and every tally still equals a recount.
    for worker in workers:
        _work(worker, campaign, lambda s, i, w=worker: _reads(f"w{worker.pk}", s, i), 8)
    assert _tallies_checked_against_the_history(campaign) == 6
    assert {(t.shared_items, t.shared_sentences) for t in PairTally.objects.filter(campaign=campaign)} == {(8, 8 * 6 - 2)}


@pytest.mark.django_db(transaction=True)
def test_two_submissions_of_one_item_at_once_add_it_to_their_pair_once():
    """The second of two submissions of one item waits for the first to commit, then sees it and adds the shared
    item to the pair's tally; without the wait neither would see the other and the item would never be compared."""
    import threading
    import time

    from django.db import connection, transaction

    from tests.guarantee_support import require_postgresql

    require_postgresql()
    campaign = make_campaign(redundancy=2, entity_check_enabled=False)
    make_document(campaign, summaries=[SENTENCES[:3], SENTENCES[3:]])
    first, second = make_worker(), make_worker()
    claimed = {}
    for worker in (first, second):
        qualify(worker, campaign)
        claimed[worker.pk] = request_assignment(worker, campaign)
    assert claimed[first.pk].item_id == claimed[second.pk].item_id
    submitted, release, errors = threading.Event(), threading.Event(), []

    def submit_and_hold(worker):
        try:
            with transaction.atomic():  # the submission commits only when the test says so
                assignment = claimed[worker.pk]
                submit_assignment(assignment.pk, worker, _answer(assignment, lambda s, i: _reads("same", s, i)), submission_key="k1")
                submitted.set()
                release.wait(20)
        except BaseException as error:  # pragma: no cover - shown by the assertion below
            errors.append(error)
        finally:
            connection.close()

    def submit(worker):
        try:
            assignment = claimed[worker.pk]
            submit_assignment(assignment.pk, worker, _answer(assignment, lambda s, i: _reads("same", s, i)), submission_key="k2")
        except BaseException as error:  # pragma: no cover
            errors.append(error)
        finally:
            connection.close()

    holder = threading.Thread(target=submit_and_hold, args=(first,))
    holder.start()
    try:
        assert submitted.wait(20)
        follower = threading.Thread(target=submit, args=(second,))
        follower.start()
        time.sleep(1.0)
        assert follower.is_alive()  # waits for the item's turn
        release.set()
        follower.join(20)
        assert not follower.is_alive() and not errors, errors
    finally:
        release.set()
        holder.join(20)
    tally = PairTally.objects.get(campaign=campaign)
    assert (tally.shared_items, tally.shared_sentences, tally.agree) == (1, 6, 6)
    assert _tallies_checked_against_the_history(campaign) == 1
