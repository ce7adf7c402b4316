"""The predictable-answers check reads a worker's recent answers once per item: kept in the cache under the
campaign's checks version, so a submission reads from the database only what it has not seen, and a change
of gold (which raises the version) is seen at the next check."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Campaign, GoldLabel, GoldSource, Participation
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.checks_version import checks_changed
from annotate.services.predictable_answers import worker_answers
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.guarantee_support import frank_answers

pytestmark = pytest.mark.django_db


def _participation(worker, campaign) -> Participation:
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    participation.campaign = Campaign.objects.get(pk=campaign.pk)  # the version as a submission reads it
    return participation


def test_answers_are_read_once_per_item_and_again_when_gold_changes(django_capture_on_commit_callbacks):
    campaign = make_campaign(entity_check_enabled=False)
    documents = [make_document(campaign) for _ in range(3)]
    first_summary = documents[0].summaries.order_by("pk").first()
    GoldLabel.objects.create(summary=first_summary, sentence_index=0, factual=True, source=GoldSource.ADMIN)
    worker = make_worker()
    qualify(worker, campaign)
    for number in range(3):
        assignment = request_assignment(worker, campaign)
        submit_assignment(assignment.pk, worker, frank_answers(assignment, factual=number != 0), submission_key=f"k{number}")
    with django_capture_on_commit_callbacks(execute=True):  # kept when the reading transaction commits
        answers = worker_answers(_participation(worker, campaign)).answers()
    assert len(answers) == 3 * 3  # three sentences shown per item, none a trap
    assert sorted(a.known for a in answers if a.known is not None) == [True]

    # Nothing new: the ids of the recent items, and their answers from the cache.
    participation = _participation(worker, campaign)
    with CaptureQueriesContext(connection) as queries:
        assert worker_answers(participation).answers() == answers
    assert len(queries) == 1, [q["sql"][:150] for q in queries.captured_queries]

    # A new item (this submission had too few answers against known labels to run the check): the next reading
    # reads that item alone from the database and finds the other three kept, then keeps all four, latest first.
    make_document(campaign)  # added now: the three items before were the three first documents, gold included
    assignment = request_assignment(worker, campaign)
    submit_assignment(assignment.pk, worker, frank_answers(assignment, factual=False), submission_key="k3")
    participation = _participation(worker, campaign)
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        four = worker_answers(participation).answers()
    assert len(queries) == 3 and f"IN ({assignment.pk})" in queries.captured_queries[1]["sql"], [q["sql"][:150] for q in queries.captured_queries]
    assert [a.factual for a in four[:3]] == [False] * 3 and four[3:] == answers
    participation = _participation(worker, campaign)
    with CaptureQueriesContext(connection) as queries:
        assert worker_answers(participation).answers() == four
    assert len(queries) == 1

    # Gold changes (the version rises): the answers are read again, with the new label; a reading whose
    # transaction does not commit (a submission rolled back) keeps nothing, so the next one reads them too.
    GoldLabel.objects.filter(summary=first_summary).update(factual=False)
    checks_changed(campaign)
    with django_capture_on_commit_callbacks(execute=False):
        worker_answers(_participation(worker, campaign))
    participation = _participation(worker, campaign)
    with CaptureQueriesContext(connection) as queries:
        changed = worker_answers(participation).answers()
    assert len(queries) == 3  # the recent ids, then layouts, and judgements with trap answers: nothing was kept
    assert sorted(a.known for a in changed if a.known is not None) == [False]
    assert [(a.factual, a.features) for a in changed] == [(a.factual, a.features) for a in four]
