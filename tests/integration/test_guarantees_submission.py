"""Guarantees: idempotent submission and nothing lost, through the service and the FRANK HTTP endpoints.

* a double-clicked, retried or concurrently repeated submit stores one annotation;
* a submit after expiry or after blocking is refused with a clear message and stores nothing;
* a submit for someone else's assignment is refused with 403;
* an acknowledged submission is committed before the response is produced.
"""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Participation,
    SentenceJudgement,
)
from annotate.services.assignments import (
    release_assignment,
    request_assignment,
    submit_assignment,
)
from annotate.services.errors import AssignmentClosed, NotEligible, NotYourAssignment
from annotate.services.participation import block_participation, get_participation
from tests.factories import make_campaign, make_document, make_worker
from tests.guarantee_support import (
    frank_answers,
    require_postgresql,
    run_in_threads,
)

SENTENCES = [["Greenvale's council approved a budget.", "It funds three new schools."], ["Helen Carter opposed the budget."]]
N_SENTENCES = 3


def _setup(**campaign_settings):
    campaign = make_campaign(entity_check_enabled=False, trap_rate=0.0, pay_per_item="0.50", **campaign_settings)
    make_document(campaign, summaries=SENTENCES)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    return campaign, worker, assignment


def _submit_url(campaign, assignment) -> str:
    return reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk])


def _post(client: Client, url: str, body) -> tuple[int, dict]:
    raw = body if isinstance(body, (str, bytes)) else json.dumps(body)
    response = client.post(url, data=raw, content_type="application/json")
    return response.status_code, response.json()


def _stored(assignment) -> int:
    return SentenceJudgement.objects.filter(assignment=assignment).count()


# --- service level


@pytest.mark.django_db
def test_retried_submit_with_the_same_key_stores_once():
    campaign, worker, assignment = _setup()
    payload = frank_answers(assignment)
    first = submit_assignment(assignment.pk, worker, payload, submission_key="page-1")
    again = submit_assignment(assignment.pk, worker, payload, submission_key="page-1")
    assert first.duplicate is False and again.duplicate is True
    assert _stored(assignment) == N_SENTENCES
    assert Participation.objects.get(worker=worker, campaign=campaign).items_submitted == 1
    assert BonusEntry.objects.filter(assignment=assignment, reason="pay per item").count() == 1
    with pytest.raises(AssignmentClosed, match="already submitted"):
        submit_assignment(assignment.pk, worker, payload, submission_key="another-page")
    assert _stored(assignment) == N_SENTENCES


@pytest.mark.django_db
def test_submit_after_expiry_is_refused_and_stores_nothing():
    _campaign, worker, assignment = _setup()
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(AssignmentClosed, match="expired.*not stored"):
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="k")
    assert _stored(assignment) == 0
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE  # expiry frees it later
    assert not BonusEntry.objects.exists()


@pytest.mark.django_db
def test_submit_after_blocking_is_refused_and_stores_nothing():
    campaign, worker, assignment = _setup()
    block_participation(get_participation(worker, campaign), "failed the reading check")
    with pytest.raises(NotEligible, match="blocked from this campaign: failed the reading check.*not stored"):
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="k")
    # Blocked on the account level while the assignment is still active: refused too.
    _campaign2, worker2, assignment2 = _setup()
    worker2.is_blocked, worker2.blocked_reason = True, "fraud"
    worker2.save()
    with pytest.raises(NotEligible, match="blocked.*not stored"):
        submit_assignment(assignment2.pk, worker2, frank_answers(assignment2), submission_key="k")
    assert _stored(assignment) == 0 and _stored(assignment2) == 0
    assert not BonusEntry.objects.exists()


@pytest.mark.django_db
def test_submit_of_a_skipped_assignment_is_refused():
    _campaign, worker, assignment = _setup()
    release_assignment(assignment)
    with pytest.raises(AssignmentClosed, match="released and can no longer be submitted"):
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="k")
    assert _stored(assignment) == 0


@pytest.mark.django_db
def test_submit_for_someone_elses_assignment_is_refused():
    _campaign, _worker, assignment = _setup()
    intruder = make_worker()
    with pytest.raises(NotYourAssignment) as caught:
        submit_assignment(assignment.pk, intruder, frank_answers(assignment), submission_key="k")
    assert caught.value.status_code == 404
    assert _stored(assignment) == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_submits_store_one_annotation():
    require_postgresql()
    campaign, worker, assignment = _setup()
    payload = frank_answers(assignment)
    results, errors = run_in_threads(
        [lambda: submit_assignment(assignment.pk, worker, payload, submission_key="same-page") for _ in range(10)]
    )
    assert errors == []
    assert sorted(r.duplicate for r in results) == [False] + [True] * 9
    assert _stored(assignment) == N_SENTENCES
    assert Participation.objects.get(worker=worker, campaign=campaign).items_submitted == 1
    assert BonusEntry.objects.filter(assignment=assignment).values("key").distinct().count() == BonusEntry.objects.filter(assignment=assignment).count()
    assert BonusEntry.objects.filter(assignment=assignment, reason="pay per item").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_submits_from_two_pages_accept_exactly_one():
    require_postgresql()
    _campaign, worker, assignment = _setup()
    payload = frank_answers(assignment)
    _, errors = run_in_threads(
        [lambda i=i: submit_assignment(assignment.pk, worker, payload, submission_key=f"page-{i}") for i in range(8)]
    )
    assert len(errors) == 7 and all(isinstance(e, AssignmentClosed) for e in errors)
    assert _stored(assignment) == N_SENTENCES


# --- through the FRANK HTTP endpoints


@pytest.mark.django_db
def test_http_double_click_stores_once_and_says_duplicate():
    campaign, worker, assignment = _setup()
    client = Client()
    client.force_login(worker.user)
    body = {**frank_answers(assignment), "submission_key": "abc123"}
    status1, first = _post(client, _submit_url(campaign, assignment), body)
    status2, second = _post(client, _submit_url(campaign, assignment), body)
    assert (status1, first["ok"], first["duplicate"]) == (200, True, False)
    assert (status2, second["ok"], second["duplicate"]) == (200, True, True)
    assert _stored(assignment) == N_SENTENCES
    status3, third = _post(client, _submit_url(campaign, assignment), {**body, "submission_key": "other"})
    assert status3 == 409 and "already submitted" in third["detail"]


@pytest.mark.django_db
def test_http_submit_after_expiry_or_blocking_is_refused_with_a_message():
    campaign, worker, assignment = _setup()
    client = Client()
    client.force_login(worker.user)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    status, body = _post(client, _submit_url(campaign, assignment), {**frank_answers(assignment), "submission_key": "k"})
    assert status == 409 and body["error"] == "assignment_closed"
    assert "expired" in body["detail"] and "not stored" in body["detail"]

    campaign2, worker2, assignment2 = _setup()
    client.force_login(worker2.user)
    block_participation(get_participation(worker2, campaign2), "too many wrong control answers")
    status, body = _post(client, _submit_url(campaign2, assignment2), {**frank_answers(assignment2), "submission_key": "k"})
    assert status == 403 and body["error"] == "not_eligible"
    assert "blocked from this campaign: too many wrong control answers" in body["detail"] and "not stored" in body["detail"]
    assert _stored(assignment) == 0 and _stored(assignment2) == 0


@pytest.mark.django_db
def test_http_submit_for_someone_elses_assignment_is_404_like_a_missing_one():
    campaign, _worker, assignment = _setup()
    intruder = make_worker()
    client = Client()
    client.force_login(intruder.user)
    status, body = _post(client, _submit_url(campaign, assignment), {**frank_answers(assignment), "submission_key": "k"})
    assert status == 404 and body["error"] == "not_found" and "no task with this id" in body["detail"]
    missing_status, missing_body = _post(client, _submit_url(campaign, assignment).replace(f"/{assignment.pk}/", "/987654321/"), {"submission_key": "k"})
    assert (missing_status, missing_body) == (status, body)  # no existence oracle
    assert _stored(assignment) == 0
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE


@pytest.mark.django_db
def test_http_submit_needs_login_and_csrf():
    campaign, worker, assignment = _setup()
    body = json.dumps({**frank_answers(assignment), "submission_key": "k"})
    anonymous = Client().post(_submit_url(campaign, assignment), data=body, content_type="application/json")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(worker.user)
    refused = strict.post(_submit_url(campaign, assignment), data=body, content_type="application/json")
    assert refused.status_code == 403
    assert _stored(assignment) == 0


def _post_at_once(worker, url: str, body: str, *, times: int):
    """POST the same JSON body ``times`` times at once, each from its own signed-in client and thread."""

    def post():
        client = Client()
        client.force_login(worker.user)
        response = client.post(url, data=body, content_type="application/json")
        return response.status_code, response.json()

    return run_in_threads([post for _ in range(times)])


@pytest.mark.django_db(transaction=True)
def test_http_concurrent_identical_submits_store_one_annotation():
    require_postgresql()
    campaign, worker, assignment = _setup()
    body = json.dumps({**frank_answers(assignment), "submission_key": "tab-1"})
    results, errors = _post_at_once(worker, _submit_url(campaign, assignment), body, times=8)
    assert errors == []
    assert all(status == 200 and data["ok"] for status, data in results)
    assert sorted(data["duplicate"] for _, data in results) == [False] + [True] * 7
    assert _stored(assignment) == N_SENTENCES


@pytest.mark.django_db(transaction=True)
def test_acknowledged_submission_is_committed_before_the_response(monkeypatch):
    """The JSON "ok" is built outside any transaction, and another connection sees the rows right after."""
    require_postgresql()
    import annotate.views.tasks as task_views  # the submit view every protocol shares

    seen_in_atomic: list[bool] = []
    real_json_response = task_views.JsonResponse

    def spying_json_response(data, *args, **kwargs):
        if isinstance(data, dict) and data.get("ok"):
            seen_in_atomic.append(connection.in_atomic_block)
        return real_json_response(data, *args, **kwargs)

    monkeypatch.setattr(task_views, "JsonResponse", spying_json_response)
    campaign, worker, assignment = _setup()
    client = Client()
    client.force_login(worker.user)
    status, body = _post(client, _submit_url(campaign, assignment), {**frank_answers(assignment), "submission_key": "k"})
    assert status == 200 and body["ok"] is True
    assert seen_in_atomic == [False]
    # A different connection (another thread) sees the stored rows at once.
    (count,), errors = run_in_threads([lambda: SentenceJudgement.objects.filter(assignment_id=assignment.pk).count()])
    assert errors == [] and count == N_SENTENCES
    assert not any(db.get("ATOMIC_REQUESTS") for db in settings.DATABASES.values())


# --- through the BUMP HTTP endpoint


def _bump_task():
    from annotate.bump.services import create_bump_campaign
    from annotate.models import CampaignStatus
    from tests.factories import make_bump_document

    campaign = create_bump_campaign(
        "guarantee-bump", "Guarantee BUMP", "bump_taxonomy", status=CampaignStatus.RUNNING,
        qualification_required=False, tutorial_required=False,
    )
    make_bump_document(campaign, types=["extrinsic_entity"])
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    url = reverse("annotate:bump-submit", args=[campaign.slug, assignment.pk])
    return campaign, worker, assignment, url


def _bump_body(assignment, key: str = "bump-page") -> str:
    from tests.factories import BUMP_REFERENCE

    return json.dumps({"checkpoint": assignment.checkpoint.code, "edited": BUMP_REFERENCE.replace("Merck", "Pfizer"), "submission_key": key})


@pytest.mark.django_db(transaction=True)
def test_bump_concurrent_identical_submits_store_one_edit():
    require_postgresql()
    from annotate.bump.models import Edit
    from annotate.models import Summary

    _campaign, worker, assignment, url = _bump_task()
    summaries_before = Summary.objects.count()
    results, errors = _post_at_once(worker, url, _bump_body(assignment), times=6)
    assert errors == []
    assert all(status == 200 and data["ok"] for status, data in results)
    assert sorted(data["duplicate"] for _, data in results) == [False] + [True] * 5
    assert Edit.objects.filter(assignment=assignment).count() == 1
    assert Summary.objects.count() == summaries_before + 1  # one edited summary, not six


@pytest.mark.django_db
def test_bump_submit_after_blocking_or_for_another_worker_is_refused():
    from annotate.bump.models import Edit

    campaign, worker, assignment, url = _bump_task()
    intruder = make_worker()
    client = Client()
    client.force_login(intruder.user)
    response = client.post(url, data=_bump_body(assignment), content_type="application/json")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    block_participation(get_participation(worker, campaign), "wrong checkpoint codes")
    client.force_login(worker.user)
    response = client.post(url, data=_bump_body(assignment), content_type="application/json")
    assert response.status_code == 403 and "wrong checkpoint codes" in response.json()["detail"]
    assert "not stored" in response.json()["detail"]
    assert not Edit.objects.filter(assignment=assignment).exists()
