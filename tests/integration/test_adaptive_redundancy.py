"""Adaptive redundancy through the real claim and submit paths on PostgreSQL: items whose labels are
certain stop at the minimum, contested ones get more workers up to the maximum, and the claim guarantees
(no repeat per worker, one active assignment per worker, never more live assignments than allowed, expiry
frees a slot) hold while simulated workers claim and submit from threads at once."""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import LIVE_ASSIGNMENT_STATUSES, Assignment, AssignmentStatus, Item, Participation, SentenceLabel
from annotate.services.adaptive import refit_queued_key
from annotate.services.assignments import expire_stale_assignments, request_assignment, submit_assignment
from metrics_service.label_reliability import refit_campaign_labels
from metrics_service.stats.redundancy import expected_calibration_error, needs_more_workers
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.guarantee_support import (
    duplicate_worker_items,
    require_postgresql,
    run_in_threads,
    workers_with_several_active,
)

CLEAR, CONTESTED = 16, 4


def _adaptive_campaign(stop_posterior: float = 0.9, **settings):
    campaign = make_campaign(adaptive_redundancy=True, min_workers=2, max_workers=4, stop_posterior=stop_posterior,
                             entity_check_enabled=False, trap_rate=0.0, **settings)
    for k in range(CLEAR + CONTESTED):
        make_document(campaign, summaries=[[f"Sentence of document {k}."]])
    return campaign


def _answers(assignment: Assignment, worker_rank: int) -> dict:
    """Clear items (the first CLEAR by position): everyone says factual on even ones, not factual on odd
    ones. Contested items: the item's first, third ... claimant says factual, the others not, so the
    judgements stay split."""
    position = Item.objects.filter(campaign=assignment.item.campaign, position__lt=assignment.item.position).count()
    if position < CLEAR:
        factual = position % 2 == 0
    else:
        factual = Assignment.objects.filter(item=assignment.item, pk__lt=assignment.pk).count() % 2 == 0
    answer = {"factual": True, "categories": [], "seconds": 5} if factual else {"factual": False, "categories": ["EntE"], "seconds": 5}
    return {"summaries": [{"answers": [dict(answer) for _ in range(spec["sentences"] + (1 if spec["trap"] else 0))]}
                          for spec in assignment.layout["summaries"]]}


def _over_target(campaign) -> list[tuple[int, int]]:
    return list(
        campaign.items.annotate(live=Count("assignments", filter=Q(assignments__status__in=LIVE_ASSIGNMENT_STATUSES)))
        .filter(live__gt=campaign.max_workers).values_list("id", "live")
    )


@pytest.mark.django_db(transaction=True)
def test_confident_items_stop_early_and_contested_ones_get_more_workers_under_concurrency(settings):
    require_postgresql()
    # Every refit is the explicit one between rounds (what the debounced task and the beat schedule do), so
    # rounds are repeatable: a refit queued by a submit would run at once here (tasks run eagerly), in the
    # middle of the first round, fitted on whichever judgements the threads had stored by then, which the
    # machine's load decides (in one loaded CI run, 5 of the 16 clear items then got a third worker; with the
    # refits between rounds only, 16 of 16 stopped at two in 10 of 10 runs beside a busy core). The debounced
    # queueing itself is tested below.
    settings.FACTLAB_LABEL_REFIT_DEBOUNCE_SECONDS = 600
    cache.clear()
    # Certain at 0.97: two agreeing workers on a clear item reach 0.99 and more, while a 1-1 split between two
    # workers the label model rates apart reaches about 0.94 (GLAD, at abilities 1.5 and 0.5 and the prior
    # difficulty). At 0.9 such splits stopped at two, together, whenever the threads put one worker on the losing
    # side of several (all four split items in one loaded CI run).
    campaign = _adaptive_campaign(stop_posterior=0.97)
    cache.set(refit_queued_key(campaign.pk), 1, timeout=600)  # as if a refit were queued already
    workers = [make_worker() for _ in range(8)]
    for w in workers:
        qualify(w, campaign)

    def work(rank):
        def run():
            done = 0
            for _ in range(8):  # a bounded number of items per round
                assignment = request_assignment(workers[rank], campaign)
                if assignment is None:
                    break
                submit_assignment(assignment.pk, workers[rank], _answers(assignment, rank), submission_key=f"k{assignment.pk}")
                done += 1
            return done
        return run

    rounds = 0
    while True:
        rounds += 1
        assert rounds <= 10, "the campaign did not finish"
        # Two threads per worker: the same worker claiming from two tabs at once.
        results, errors = run_in_threads([work(rank) for rank in range(len(workers)) for _ in range(2)])
        assert errors == []
        assert _over_target(campaign) == [] and duplicate_worker_items(campaign) == [] and workers_with_several_active(campaign) == []
        # What the Celery task does after submits (debounced) and on the beat schedule.
        state = refit_campaign_labels(campaign)
        if sum(results) == 0 and state["open"] == 0:
            break

    submitted = Counter(Assignment.objects.filter(item__campaign=campaign, status=AssignmentStatus.SUBMITTED).values_list("item__position", flat=True))
    items = list(Item.objects.filter(campaign=campaign).order_by("position"))
    per_item = [submitted[item.position] for item in items]
    # Certain after two agreeing workers: most clear items get no third worker. A later refit may still reopen
    # one: once a split item has three workers (two against one), the one who dissents is rated low, and a
    # clear item that worker shared with one other falls below the stop posterior and asks for a third. How many
    # depends on which workers the threads put second on the split items: 16 of 16 stayed at two in most runs
    # here, 12 with the corpus tests running beside it, 11 in one CI run.
    assert per_item[:CLEAR].count(2) > CLEAR // 2 and max(per_item[:CLEAR]) <= 3, per_item
    # Split items get more workers, never beyond the maximum; a 2-1 split between workers rated apart may be
    # certain at three. The rule itself: every early stop was certain (the stop-rule assertion below).
    contested = per_item[CLEAR:]
    assert max(contested) <= 4 and any(n >= 3 for n in contested), per_item
    assert np.mean(contested) > np.mean(per_item[:CLEAR]), per_item
    assert all(item.settled for item in items), [(n, item.settled, item.label_posterior) for item, n in zip(items, per_item)]
    # The stop rule's reason: an item stopped below the maximum only when its label was certain.
    assert all(item.label_posterior >= campaign.stop_posterior for item, n in zip(items, per_item, strict=True) if n < 4)
    assert Assignment.objects.filter(item__campaign=campaign).exclude(status=AssignmentStatus.SUBMITTED).count() == 0
    # Every label is stored with its posterior and interval; every worker with an ability.
    labels = SentenceLabel.objects.filter(summary__document__campaign=campaign)
    assert labels.count() == CLEAR + CONTESTED
    assert all(label.posterior_low <= label.posterior <= label.posterior_high for label in labels)
    assert Participation.objects.filter(campaign=campaign, label_ability__isnull=False).count() == len(workers)
    # No work is left for anyone.
    assert request_assignment(workers[0], campaign) is None


@pytest.mark.django_db(transaction=True)
def test_adaptive_claims_respect_the_target_expiry_and_no_repeat():
    require_postgresql()
    campaign = _adaptive_campaign()
    item = Item.objects.filter(campaign=campaign).order_by("position").first()
    Item.objects.filter(campaign=campaign).exclude(pk=item.pk).delete()
    workers = [make_worker() for _ in range(5)]
    for w in workers:
        qualify(w, campaign)
    first, second = request_assignment(workers[0], campaign), request_assignment(workers[1], campaign)
    assert first.item_id == second.item_id == item.pk
    assert request_assignment(workers[2], campaign) is None  # at its target (min_workers) until a refit raises it
    Assignment.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert expire_stale_assignments(campaign) == 1
    assert request_assignment(workers[0], campaign) is None  # never the same item twice
    third = request_assignment(workers[2], campaign)
    assert third is not None and third.item_id == item.pk
    # A settled item is never handed out again, whatever its count.
    Item.objects.filter(pk=item.pk).update(settled=True)
    assert request_assignment(workers[3], campaign) is None


@pytest.mark.django_db
def test_adaptive_claim_query_skips_settled_items_in_the_index_and_counts_nothing():
    campaign = _adaptive_campaign()
    Item.objects.filter(pk__in=list(Item.objects.filter(campaign=campaign).order_by("position").values_list("pk", flat=True)[:5])).update(settled=True)
    worker = make_worker()
    qualify(worker, campaign)
    with CaptureQueriesContext(connection) as queries:
        assignment = request_assignment(worker, campaign)
    assert assignment is not None and not Item.objects.get(pk=assignment.item_id).settled
    # The candidates' query (the claimed item's lock, which counts that one item's assignments, is not one).
    candidate_sql = [q["sql"] for q in queries.captured_queries
                     if "live_count" in q["sql"] and q["sql"].startswith("SELECT") and "FOR UPDATE" not in q["sql"]]
    assert candidate_sql and '"settled"' in candidate_sql[0]
    assert not any("COUNT(" in sql.upper() and "GROUP BY" in sql.upper() for sql in candidate_sql)


@pytest.mark.django_db
def test_a_submit_queues_one_debounced_refit_and_fixed_campaigns_none(django_capture_on_commit_callbacks, monkeypatch):
    from factlab.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", False)  # a broker: the refit is a message, sent after the commit
    cache.clear()
    adaptive = _adaptive_campaign()
    fixed = make_campaign(entity_check_enabled=False, trap_rate=0.0)
    make_document(fixed, summaries=[["One sentence."]])
    workers = [make_worker() for _ in range(3)]
    for w in workers:
        qualify(w, adaptive)
        qualify(w, fixed)
    for campaign, expected in ((fixed, 0), (adaptive, 1)):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            for rank, w in enumerate(workers[:2]):
                a = request_assignment(w, campaign)
                submit_assignment(a.pk, w, _answers(a, rank), submission_key=f"q{a.pk}")
        refits = [c for c in callbacks if "label refit" in repr([cell.cell_contents for cell in c.__closure__ or ()])]
        assert len(refits) == expected, campaign.slug


def test_stop_rule_and_calibration_error():
    more = needs_more_workers(np.array([np.nan, 0.99, 0.6, 0.6, 0.99]), np.array([0, 1, 2, 5, 2]), min_workers=2, max_workers=5, threshold=0.9)
    assert more.tolist() == [True, True, True, False, False]
    with pytest.raises(ValueError, match="min_workers <= max_workers"):
        needs_more_workers(np.array([0.5]), np.array([1]), min_workers=4, max_workers=3, threshold=0.9)
    with pytest.raises(ValueError, match="threshold"):
        needs_more_workers(np.array([0.5]), np.array([1]), min_workers=1, max_workers=3, threshold=1.5)
    assert expected_calibration_error(np.array([0.9] * 10), np.array([1] * 9 + [0])) == pytest.approx(0.0)
    assert expected_calibration_error(np.array([0.9] * 10), np.array([1] * 5 + [0] * 5)) == pytest.approx(0.4)


@pytest.mark.django_db
def test_min_workers_above_max_is_refused_by_the_database():
    from django.db import IntegrityError

    with pytest.raises(IntegrityError, match="campaign_min_workers_le_max"):
        make_campaign(adaptive_redundancy=True, min_workers=4, max_workers=3)
