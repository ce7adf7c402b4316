"""Guarantee: each bonus has a unique key; recomputing, retrying or racing never pays twice; totals equal the ledger."""
from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.db.models import Count, Sum

from annotate.models import BonusEntry, Participation
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import (
    award_submission_pay_and_bonus,
    ledger_csv,
    ledger_totals,
    worker_total,
)
from tests.factories import make_campaign, make_document, make_worker
from tests.guarantee_support import (
    frank_answers,
    require_postgresql,
    run_in_threads,
)

PAY, BONUS, STREAK = Decimal("0.50"), Decimal("1.00"), Decimal("2.00")


def _campaign(items: int):
    # trap_rate 0: every accepted submission earns the item bonus, so amounts are predictable.
    campaign = make_campaign(
        entity_check_enabled=False, trap_rate=0.0, pay_per_item=PAY, bonus_per_item=BONUS,
        bonus_streak_size=2, bonus_streak_amount=STREAK, redundancy=1,
    )
    for _ in range(items):
        make_document(campaign, summaries=[["One sentence."]])
    return campaign


def _work(worker, campaign, n: int) -> list:
    done = []
    for _ in range(n):
        assignment = request_assignment(worker, campaign)
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key=f"k{assignment.pk}")
        done.append(assignment)
    return done


def _assert_no_duplicate_keys():
    assert not BonusEntry.objects.values("key").annotate(n=Count("id")).filter(n__gt=1).exists()


@pytest.mark.django_db
def test_recomputing_every_award_pays_nothing_more():
    campaign = _campaign(items=4)
    worker = make_worker()
    assignments = _work(worker, campaign, 4)
    expected = 4 * PAY + 4 * BONUS + 2 * STREAK
    assert worker_total(worker, campaign) == expected
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    for assignment in assignments:  # a recomputation (or a retried task) awards every submission again
        assert award_submission_pay_and_bonus(participation, assignment) == []
    assert worker_total(worker, campaign) == expected
    assert BonusEntry.objects.count() == 4 + 4 + 2
    participation.refresh_from_db()
    assert participation.bonus_items == 4
    _assert_no_duplicate_keys()


@pytest.mark.django_db
def test_the_database_refuses_a_second_entry_with_the_same_key():
    campaign = _campaign(items=1)
    worker = make_worker()
    (assignment,) = _work(worker, campaign, 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        BonusEntry.objects.create(key=f"pay:{assignment.pk}", worker=worker, campaign=campaign, amount=PAY, reason="pay per item")


@pytest.mark.django_db(transaction=True)
def test_concurrent_award_attempts_pay_once():
    require_postgresql()
    campaign = _campaign(items=4)
    worker = make_worker()
    assignments = _work(worker, campaign, 4)
    BonusEntry.objects.all().delete()
    Participation.objects.filter(worker=worker).update(bonus_items=0)
    participation_id = Participation.objects.get(worker=worker).pk

    def award(assignment):
        def run():
            return award_submission_pay_and_bonus(Participation.objects.select_related("campaign").get(pk=participation_id), assignment)
        return run

    # 4 threads per assignment, all 16 at once: retries of the same award and different awards racing.
    results, errors = run_in_threads([award(a) for a in assignments for _ in range(4)])
    assert errors == []
    written = [key for keys in results for key in keys]
    assert len(written) == len(set(written))  # no key was reported written twice
    _assert_no_duplicate_keys()
    assert BonusEntry.objects.filter(reason="pay per item").count() == 4
    assert BonusEntry.objects.filter(key__startswith="item-bonus:").count() == 4
    assert BonusEntry.objects.filter(key__startswith="streak-bonus:").count() <= 2
    assert Participation.objects.get(pk=participation_id).bonus_items == 4


@pytest.mark.django_db
def test_totals_and_payment_files_equal_the_ledger():
    campaign = _campaign(items=5)
    alice, bob = make_worker("alice-ledger"), make_worker("bob-ledger", provider="prolific", external_id="PROLIFIC-B")
    _work(alice, campaign, 3)
    _work(bob, campaign, 2)
    ledger = {row["worker_id"]: row["total"] for row in BonusEntry.objects.values("worker_id").annotate(total=Sum("amount"))}
    assert {row["worker_id"]: row["total"] for row in ledger_totals(campaign)} == ledger
    assert worker_total(alice, campaign) == ledger[alice.pk] == 3 * PAY + 3 * BONUS + STREAK
    assert worker_total(bob, campaign) == ledger[bob.pk] == 2 * PAY + 2 * BONUS + STREAK
    generic = list(csv.DictReader(io.StringIO(ledger_csv(campaign))))
    assert {int(r["worker_id"]): Decimal(r["total"]) for r in generic} == ledger
    prolific = list(csv.reader(io.StringIO(ledger_csv(campaign, prolific=True))))
    assert prolific == [["PROLIFIC-B", f"{2 * BONUS + STREAK:.2f}"]]  # bonuses only, Prolific workers only
