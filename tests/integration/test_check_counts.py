"""Counts of checked answers kept per participation: what every submission's block and pay rules read instead of
the worker's whole history. They must always equal a count from the history, through submissions and changes of
gold, so that no block or pay decision changes (the recorded FRANK/BUMP outputs are checked byte for byte in
``test_protocol_outputs_unchanged.py``)."""
from __future__ import annotations

import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotate.models import Campaign, CheckedAnswerCounts, GoldLabel, Participation
from annotate.services import assignments
from annotate.services.check_counts import kept_answers, recount_checked_answers, recounted_answers
from annotate.services.control_items import mark_gold_public, set_gold_label
from annotate.services.quality import (
    CheckedAnswers,
    balanced_score,
    private_quality,
    window_quality,
    worker_checks,
)
from benchmarks.adversary_bot import OverlapBot, SlipReader, run_worker, setup_campaign
from tests.factories import make_worker

pytestmark = pytest.mark.django_db


def scores(answers: CheckedAnswers, min_per_class: int) -> tuple:
    """Every score a submission's block and pay rules compute from the checked answers, and the counts they
    describe them with."""
    traps = [c for c in answers.checks if c.source == "trap"]
    return (
        balanced_score(answers.checks, min_per_class),
        private_quality(answers.checks, min_per_class),
        window_quality(answers.window, min_per_class),
        balanced_score(traps, 1).pooled_score,
        sum(c.count for c in traps), sum(c.count for c in traps if c.correct),
        sum(c.count for c in answers.checks if not c.correct),
    )


@pytest.fixture
def compared_at_every_submission(monkeypatch):
    """Wrap the submission's counting: at every submission, what the rules read from the kept counts must give
    the same scores as the worker's history counted from scratch (the way every submission scored before)."""
    compared = []
    count = assignments.count_submission

    def counted_and_compared(participation, assignment):
        answers = count(participation, assignment)
        history = CheckedAnswers.of(worker_checks(participation.worker_id, participation.campaign))
        minimum = participation.campaign.control_min_per_class
        assert scores(answers, minimum) == scores(history, minimum), participation.items_submitted
        compared.append(participation.items_submitted)
        return answers

    monkeypatch.setattr(assignments, "count_submission", counted_and_compared)
    return compared


def same_counts(participation: Participation) -> bool:
    kept, fresh = kept_answers(participation), recounted_answers(participation)
    return sorted(map(repr, kept.checks)) == sorted(map(repr, fresh.checks)) and kept.window == fresh.window


def test_kept_counts_equal_a_recount_through_submissions_and_changes_of_gold(frank_dir, compared_at_every_submission):
    campaign = setup_campaign(frank_dir, 12, slug="counts-frank", private_gold=True, min_seconds_per_sentence=0.0,
                              pay_per_item=Decimal("0.50"), trap_rate=0.5, control_block_threshold=0.0, trap_block_threshold=0.0)
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    run = run_worker(client, campaign.slug, SlipReader(slips=0.2, seed=3), items=5, seconds_per_sentence=5.0)
    assert run.submitted == 5, run
    participation = Participation.objects.select_related("campaign").get(worker=worker, campaign=campaign)
    kept = CheckedAnswerCounts.objects.get(participation=participation)
    assert kept.items_counted == 5 and kept.checks_version == participation.campaign.checks_version
    assert same_counts(participation)
    checks = sum(c.count for c in kept_answers(participation).checks)
    assert checks > 10 and any(not c.correct for c in kept_answers(participation).checks)

    # An admin relabels a sentence the worker answered, and marks the gold public: each change of gold makes the
    # kept counts stale (the campaign's checks version moves on), and the next submission counts them again.
    answered = GoldLabel.objects.filter(
        summary__judgements__worker=worker, sentence_index=0, summary__judgements__sentence_index=0,
    ).select_related("summary").first()
    assert answered is not None
    before = Campaign.objects.get(pk=campaign.pk).checks_version
    set_gold_label(answered.summary, 0, not answered.factual, "" if not answered.factual else "EntE")
    mark_gold_public(campaign, True)
    assert Campaign.objects.get(pk=campaign.pk).checks_version >= before + 2
    participation.campaign.refresh_from_db()
    assert not same_counts(participation)  # the kept counts are of the old gold...
    run = run_worker(client, campaign.slug, SlipReader(slips=0.2, seed=4), items=3, seconds_per_sentence=5.0)
    assert run.submitted == 3, run
    participation.refresh_from_db()
    participation.campaign.refresh_from_db()
    assert CheckedAnswerCounts.objects.get(participation=participation).items_counted == 8
    assert same_counts(participation)  # ...and the next submission counted them again
    assert compared_at_every_submission == list(range(1, 9))


def test_a_submission_reads_its_counts_with_its_lock_and_writes_them_once(frank_dir):
    campaign = setup_campaign(frank_dir, 8, slug="counts-queries", private_gold=True, min_seconds_per_sentence=0.0,
                              control_block_threshold=0.0, trap_block_threshold=0.0)
    worker = make_worker()
    client = Client()
    client.force_login(worker.user)
    run_worker(client, campaign.slug, SlipReader(slips=0.1), items=3, seconds_per_sentence=5.0)
    with CaptureQueriesContext(connection) as queries:
        run_worker(client, campaign.slug, SlipReader(slips=0.1), items=1, seconds_per_sentence=5.0)
    sql = [q["sql"] for q in queries.captured_queries]
    # Read joined to the participation's row lock (no query of its own), written by one update.
    assert not any('FROM "annotate_checkedanswercounts"' in s for s in sql), sql
    assert sum(s.startswith('UPDATE "annotate_checkedanswercounts"') for s in sql) == 1, sql
    assert not any(s.startswith("INSERT") and "annotate_checkedanswercounts" in s for s in sql)
    # Only the submission's own answers are read, its gold and trap answers in one statement: the history is not
    # scored again.
    history_reads = [s for s in sql if "SELECT g.factual" in s or "SELECT t.expected_factual" in s]
    assert len(history_reads) == 1, history_reads
    assert "SELECT g.factual" in history_reads[0] and "SELECT t.expected_factual" in history_reads[0]
    # Both read the submission's assignment by its key, whatever else the worker submitted.
    assert len(re.findall(r"FROM \S+ WHERE id = \S+ LIMIT 1\) a\b", history_reads[0])) == 2, history_reads


def test_the_recount_command_and_the_constraints(frank_dir):
    campaign = setup_campaign(frank_dir, 8, slug="counts-command", private_gold=True, min_seconds_per_sentence=0.0,
                              control_block_threshold=0.0, trap_block_threshold=0.0)
    workers = [make_worker() for _ in range(2)]
    for worker, agent in zip(workers, (SlipReader(slips=0.1), OverlapBot(0.7)), strict=True):
        client = Client()
        client.force_login(worker.user)
        run_worker(client, campaign.slug, agent, items=2, seconds_per_sentence=5.0)
    participations = list(Participation.objects.filter(campaign=campaign).select_related("campaign"))
    CheckedAnswerCounts.objects.filter(participation__campaign=campaign).update(cells=[], recent=[])
    out = StringIO()
    call_command("recount_checks", "--campaign", campaign.slug, stdout=out)
    assert f"{len(participations)} participation(s) counted again" in out.getvalue()
    assert all(same_counts(p) for p in participations)
    assert recount_checked_answers() >= len(participations)
    with pytest.raises(IntegrityError), transaction.atomic():
        CheckedAnswerCounts.objects.filter(participation=participations[0]).update(cells={"not": "a list"})
    with pytest.raises(IntegrityError), transaction.atomic():
        CheckedAnswerCounts.objects.create(participation=participations[0], checks_version=0, items_counted=0)
