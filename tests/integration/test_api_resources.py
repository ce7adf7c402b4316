"""Campaigns, documents, summaries, judgements, edits, scores, items, assignments, participations and workers."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.frank.models import EntityAnswer
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Participation,
    SentenceJudgement,
    Worker,
)
from tests.factories import make_bump_document
from tests.test_api_fixtures import *

pytestmark = pytest.mark.django_db
C = "/api/campaigns/frank-api"


def test_admin_creates_and_moves_a_campaign(admin_client, researcher):
    created = admin_client.post("/api/campaigns/", {"slug": "new-one", "name": "New", "kind": "bump_taxonomy", "researchers": ["api-researcher"]}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["status"] == "draft" and created.json()["researchers"] == ["api-researcher"]
    # Not ready for a study: no items, no Prolific exit codes, a qualification without material of its own.
    not_ready = admin_client.post("/api/campaigns/new-one/start/")
    assert not_ready.status_code == 409
    assert {p["key"] for p in not_ready.json()["problems"]} == {"items", "exits", "qualification"}
    assert "completion code" in not_ready.json()["detail"]
    make_bump_document(Campaign.objects.get(slug="new-one"))
    fixed = admin_client.patch("/api/campaigns/new-one/", {"prolific_completion_code": "DONE1", "prolific_screenout_code": "OUT1",
                                                            "qualification_required": False}, format="json")
    assert fixed.status_code == 200, fixed.content
    assert admin_client.post("/api/campaigns/new-one/start/").json()["status"] == "running"
    assert admin_client.post("/api/campaigns/new-one/pause/").json()["status"] == "paused"
    # The same rules as the campaign page: a paused campaign is resumed, never started again.
    again = admin_client.post("/api/campaigns/new-one/start/")
    assert again.status_code == 409 and again.json()["detail"] == "cannot start the campaign: it is paused"
    assert admin_client.post("/api/campaigns/new-one/resume/").json()["status"] == "running"
    assert admin_client.post("/api/campaigns/new-one/resume/").status_code == 409  # only a paused campaign resumes
    finished = admin_client.post("/api/campaigns/new-one/finish/")
    assert finished.json()["status"] == "finished" and finished.json()["finished_at"]
    refused = admin_client.post("/api/campaigns/new-one/start/")
    assert refused.status_code == 409 and refused.json()["detail"] == "cannot start the campaign: it is finished"
    assert Campaign.objects.get(slug="new-one").status == "finished"


def test_a_campaign_created_without_a_kind_gets_the_first_registered_protocols(admin_client):
    from annotate.kinds import PROTOCOLS

    created = admin_client.post("/api/campaigns/", {"slug": "no-kind", "name": "No kind given"}, format="json")
    assert created.status_code == 201, created.content
    first = next(iter(PROTOCOLS))
    assert created.json()["kind"] == first == Campaign.objects.get(slug="no-kind").kind


def test_campaign_create_validates(admin_client):
    bad = admin_client.post("/api/campaigns/", {"slug": "bad slug!", "name": "", "redundancy": 0}, format="json")
    assert bad.status_code == 400 and {"slug", "name", "redundancy"} <= set(bad.json())


def test_researcher_lists_only_granted_campaigns(campaign, researcher_client):
    Campaign.objects.create(slug="secret", name="Secret")
    slugs = [c["slug"] for c in researcher_client.get("/api/campaigns/").json()["results"]]
    assert slugs == ["frank-api"]


def test_documents_and_summaries_filters(campaign, researcher_client):
    docs = researcher_client.get(f"{C}/documents/?dataset=xsum").json()["results"]
    assert [d["external_id"] for d in docs] == ["doc-bbc"]
    summaries = researcher_client.get(f"{C}/summaries/?system=bart&split=test").json()["results"]
    assert len(summaries) == 1 and summaries[0]["document"] == "doc-cnn"
    assert summaries[0]["scores"] == [{"metric": "rouge2", "config_key": "", "value": 0.25, "source": "computed"}]
    edits = researcher_client.get(f"{C}/summaries/?is_edit=true").json()["results"]
    assert [s["system"] for s in edits] == ["human-edit"]
    assert researcher_client.get(f"{C}/documents/?split=nonsense").status_code == 400


def test_judgements_cursor_pagination_and_pseudonyms(campaign, researcher_client):
    seen, url = [], f"{C}/judgements/?page_size=5"
    while url:
        page = researcher_client.get(url).json()
        seen.extend(page["results"])
        url = page["next"]
    assert len(seen) == SentenceJudgement.objects.count() == 24
    assert len({j["id"] for j in seen}) == 24
    workers = campaign.workers_for_tests
    assert {j["worker"] for j in seen} == {worker_pseudonym(campaign.pk, w.pk) for w in workers}


def test_judgement_filters(campaign, researcher_client):
    blocked = worker_pseudonym(campaign.pk, campaign.workers_for_tests[2].pk)
    active = researcher_client.get(f"{C}/judgements/?worker_status=active").json()["results"]
    assert len(active) == 16 and blocked not in {j["worker"] for j in active}
    only_blocked = researcher_client.get(f"{C}/judgements/?worker_status=blocked").json()["results"]
    assert {j["worker"] for j in only_blocked} == {blocked}
    not_factual = researcher_client.get(f"{C}/judgements/?factual=false&system=bart&split=test").json()["results"]
    assert len(not_factual) == 3 and all(j["categories"] == ["EntE"] for j in not_factual)
    future = (timezone.now() + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert researcher_client.get(f"{C}/judgements/", {"created_after": future}).json()["results"] == []
    assert researcher_client.get(f"{C}/judgements/?created_after=not-a-date").status_code == 400


def test_admin_reveals_worker_ids(campaign, admin_client):
    rows = admin_client.get(f"{C}/judgements/?reveal_workers=1&page_size=50").json()["results"]
    assert {r["worker"] for r in rows} == {"prolific:EXT-a", "prolific:EXT-b", "prolific:EXT-c"}


def test_edits_and_scores(campaign, researcher_client):
    edits = researcher_client.get(f"{C}/edits/").json()["results"]
    assert len(edits) == 1 and edits[0]["requested_error_type"] == "EntE" and edits[0]["worker"].startswith("w")
    scores = researcher_client.get(f"{C}/scores/?metric=rouge2&system=pegasus").json()["results"]
    assert len(scores) == 2 and {s["value"] for s in scores} == {0.5}


def test_items_assignments_participations(campaign, admin_client):
    items = admin_client.get(f"{C}/items/").json()["results"]
    assert [i["live_assignments"] for i in items] == [3, 3]
    assignments = admin_client.get(f"{C}/assignments/?status=submitted").json()["results"]
    assert len(assignments) == 6 and "layout" not in assignments[0]
    assert admin_client.get(f"{C}/assignments/?worker_status=blocked").json()["results"][0]["worker"] == campaign.workers_for_tests[2].pk
    rows = {p["worker"]: p for p in admin_client.get(f"{C}/participations/").json()["results"]}
    good = rows[campaign.workers_for_tests[0].pk]
    assert good["trap_score"] == 1.0 and good["bonus_total"] == "3.50" and good["is_blocked"] is False
    assert rows[campaign.workers_for_tests[2].pk]["trap_score"] == 0.25


def test_a_participation_counts_the_items_claimed_beside_those_submitted(admin_client):
    """Every claim counts itself on the worker's participation: claimed minus submitted is what is in progress or
    was left (an item given back, an expired page); showing the item again (a reload) is no new claim."""
    from annotate.services.assignments import release_assignment, request_assignment, submit_assignment
    from tests.factories import make_campaign, make_document, make_worker, qualify
    from tests.guarantee_support import frank_answers

    study = make_campaign(entity_check_enabled=False, trap_rate=0.0)
    for _ in range(3):
        make_document(study, summaries=[["One sentence."]])
    worker = make_worker()
    qualify(worker, study)
    first = request_assignment(worker, study)
    assert request_assignment(worker, study).pk == first.pk  # the page shown again
    submit_assignment(first.pk, worker, frank_answers(first), submission_key="k1")
    release_assignment(request_assignment(worker, study))  # given back
    request_assignment(worker, study)
    row = next(p for p in admin_client.get(f"/api/campaigns/{study.slug}/participations/").json()["results"] if p["worker"] == worker.pk)
    assert (row["items_claimed"], row["items_submitted"]) == (3, 1)
    changed = admin_client.patch(f"/api/campaigns/{study.slug}/participations/{row['id']}/", {"items_claimed": 0}, format="json")
    assert changed.status_code in (200, 405) and Participation.objects.get(pk=row["id"]).items_claimed == 3


def test_assignments_give_what_their_protocol_records_without_a_query_per_row(campaign, admin_client):
    answered = Assignment.objects.filter(item__campaign=campaign).order_by("pk").first()
    EntityAnswer.objects.create(assignment=answered, choice=2, correct=False)
    with CaptureQueriesContext(connection) as queries:
        rows = admin_client.get(f"{C}/assignments/").json()["results"]
    details = {row["id"]: row["protocol_details"] for row in rows}
    assert len(details) == 6 and details.pop(answered.pk) == {"entity_choice": 2, "entity_correct": False}
    assert all(d == {"entity_choice": None, "entity_correct": None} for d in details.values())
    # The reading-check answers come with the assignments' own query (joined), not one query per assignment.
    reading = [q["sql"] for q in queries.captured_queries if "frank_entityanswer" in q["sql"]]
    assert len(reading) == 1 and "annotate_assignment" in reading[0]


def test_block_and_unblock_participation(campaign, admin_client):
    worker = campaign.workers_for_tests[0]
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    Assignment.objects.filter(worker=worker).update(status=AssignmentStatus.ACTIVE)
    blocked = admin_client.post(f"{C}/participations/{participation.pk}/block/", {"reason": "too fast"}, format="json")
    assert blocked.status_code == 200 and blocked.json()["is_blocked"] and blocked.json()["blocked_reason"] == "too fast"
    assert not Assignment.objects.filter(worker=worker, status=AssignmentStatus.ACTIVE).exists()  # released
    unblocked = admin_client.post(f"{C}/participations/{participation.pk}/unblock/")
    assert unblocked.json()["is_blocked"] is False
    assert admin_client.post(f"{C}/participations/999999/block/", {}, format="json").status_code == 404


def test_global_worker_block_and_detail(campaign, admin_client):
    worker = campaign.workers_for_tests[0]
    response = admin_client.post(f"/api/workers/{worker.pk}/block/", {"reason": "fraud"}, format="json")
    assert response.status_code == 200 and response.json()["is_blocked"] and response.json()["bonus_total"] == "3.50"
    assert Worker.objects.get(pk=worker.pk).blocked_reason == "fraud"
    detail = admin_client.get(f"/api/workers/{worker.pk}/").json()
    assert detail["participations"][0]["campaign"] == "frank-api" and detail["participations"][0]["bonus_total"] == "3.50"
    assert [w["id"] for w in admin_client.get("/api/workers/?is_blocked=true").json()["results"]] == [worker.pk]
    assert admin_client.post(f"/api/workers/{worker.pk}/unblock/").json()["is_blocked"] is False
    assert admin_client.post(f"/api/workers/{worker.pk}/block/", {"reason": "x" * 301}, format="json").status_code == 400
