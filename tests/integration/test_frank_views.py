"""FRANK pages over HTTP: entry flow, crowd arrival, tutorial, qualification, task, admin page, no gold in responses."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotate.frank import content as frank_content
from annotate.models import (
    Assignment,
    CampaignStatus,
    Participation,
    QualificationStatus,
    SentenceJudgement,
    Trap,
    TrapSource,
    Worker,
)
from annotate.providers import study_token
from annotate.services.assignments import request_assignment
from tests.factories import make_campaign, make_document, make_worker, qualify
from tests.integration.test_frank_protocol import TRAPS, age, answers_for
from tests.integration.test_frank_units import key_answers

pytestmark = pytest.mark.django_db
STATIC = Path(__file__).resolve().parents[2] / "static" / "factlab"


def login(client, worker):
    client.force_login(worker.user)


def _test_of(worker, campaign):
    """The qualification test this worker gets now (their random subset of the pool)."""
    from annotate.frank.protocol import qualification_exercise

    return qualification_exercise(Participation.objects.get(worker=worker, campaign=campaign))


def qualification_form(answers: dict) -> dict:
    form = {}
    for s, row in enumerate(answers["summaries"]):
        for i, a in enumerate(row):
            form[f"s{s}_{i}_factual"] = "yes" if a["factual"] else "no"
            form[f"s{s}_{i}_cat"] = a["categories"]
    return form


def test_entry_flow_tutorial_then_qualification_then_task(client):
    campaign = make_campaign(tutorial_required=True, qualification_required=True)
    make_document(campaign)
    worker = make_worker()
    entry = reverse("annotate:campaign", args=[campaign.slug])
    assert client.get(entry).status_code == 302 and "/accounts/login/" in client.get(entry)["Location"]
    login(client, worker)
    assert client.get(entry)["Location"] == reverse("annotate:frank-tutorial", args=[campaign.slug])
    Participation.objects.filter(worker=worker).update(tutorial_done=True)
    assert client.get(entry)["Location"] == reverse("annotate:frank-qualification", args=[campaign.slug])
    Participation.objects.filter(worker=worker).update(qualification_status=QualificationStatus.PASSED)
    assert client.get(entry)["Location"] == reverse("annotate:frank-task", args=[campaign.slug])
    Participation.objects.filter(worker=worker).update(is_blocked=True, blocked_reason="too many wrong control answers")
    blocked = client.get(entry)
    assert blocked.status_code == 403 and b"too many wrong control answers" in blocked.content


def test_home_lists_running_campaigns_with_a_start_button(client):
    running = make_campaign()
    draft = make_campaign(status=CampaignStatus.DRAFT)
    login(client, make_worker())
    html = client.get(reverse("annotate:home")).content.decode()
    assert running.name in html and reverse("annotate:campaign", args=[running.slug]) in html and draft.name not in html


def test_tutorial_feedback_endpoint_and_completion(client):
    campaign = make_campaign(tutorial_required=True)
    worker = make_worker()
    login(client, worker)
    check = reverse("annotate:frank-tutorial-check", args=[campaign.slug])
    done = reverse("annotate:frank-tutorial-done", args=[campaign.slug])
    client.post(done)
    assert not Participation.objects.filter(worker=worker, tutorial_done=True).exists()  # nothing answered yet
    response = client.post(check, {"summary": 1, "index": 3, "factual": False, "categories": ["EntE"]}, content_type="application/json")
    assert response.json()["correct"] is False and "coreference error" in response.json()["message"]
    bad = client.post(check, {"summary": 1, "index": 3, "factual": False, "categories": []}, content_type="application/json")
    assert bad.status_code == 400 and "select at least one error category" in bad.json()["detail"]
    for s, summary in enumerate(frank_content.TUTORIAL.summaries):
        for i in range(len(summary)):
            client.post(check, {"summary": s, "index": i, "factual": True, "categories": []}, content_type="application/json")
    assert client.post(done).status_code == 302
    assert Participation.objects.get(worker=worker).tutorial_done


@pytest.mark.parametrize("attempts", [1, 2])
def test_qualification_fail_then_attempts_then_pass(client, attempts):
    campaign = make_campaign(qualification_required=True, qualification_attempts=attempts)
    make_document(campaign)
    worker = make_worker()
    login(client, worker)
    url = reverse("annotate:frank-qualification", args=[campaign.slug])
    client.get(url)
    failed = client.post(url, qualification_form(key_answers(_test_of(worker, campaign), flip=3)))
    # Pass or fail only: neither the score nor which answers were wrong.
    assert b"You did not pass" in failed.content and b"77%" not in failed.content and b"qualification-score" not in failed.content
    assert b"tutorial-link" in failed.content
    p = Participation.objects.get(worker=worker)
    assert p.qualification_attempts == 1 and p.qualification_score == pytest.approx(10 / 13)
    if attempts == 1:
        assert p.qualification_status == QualificationStatus.FAILED
        assert b"no attempt left" in client.get(url).content
        refused = client.post(url, qualification_form(key_answers(_test_of(worker, campaign))))
        assert refused.status_code == 403 and Participation.objects.get(worker=worker).qualification_status == QualificationStatus.FAILED
        assert client.get(reverse("annotate:frank-task", args=[campaign.slug])).status_code == 302
        assert not Assignment.objects.exists()
    else:
        assert p.qualification_status == QualificationStatus.NOT_TAKEN
        passed = client.post(url, qualification_form(key_answers(_test_of(worker, campaign), flip=1)))  # 12/13 = 92%
        assert b"You passed" in passed.content
        assert Participation.objects.get(worker=worker).qualification_status == QualificationStatus.PASSED


def test_incomplete_qualification_is_refused_without_using_an_attempt(client):
    campaign = make_campaign(qualification_required=True)
    worker = make_worker()
    login(client, worker)
    url = reverse("annotate:frank-qualification", args=[campaign.slug])
    client.get(url)
    form = qualification_form(key_answers(_test_of(worker, campaign)))
    del form["s0_4_factual"]
    response = client.post(url, form)
    assert response.status_code == 400 and b"Summary 1, sentence 5: answer Yes or No." in response.content
    assert Participation.objects.get(worker=worker).qualification_attempts == 0


def test_task_page_entity_and_submit_endpoints(client):
    campaign = make_campaign(trap_rate=1.0)
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    login(client, worker)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
    assert page.status_code == 200
    assignment = Assignment.objects.get(worker=worker)
    data = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', page.content.decode(), re.DOTALL).group(1))
    entity = client.post(data["urls"]["entity"], {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json")
    assert entity.json() == {"correct": True, "blocked": False, "detail": "", "next": reverse("annotate:campaign", args=[campaign.slug])}
    assignment.refresh_from_db()
    age(assignment)
    payload = {**answers_for(assignment), "submission_key": data["submission_key"]}
    response = client.post(data["urls"]["submit"], payload, content_type="application/json")
    assert response.status_code == 200 and response.json()["ok"] and not response.json()["duplicate"]
    again = client.post(data["urls"]["submit"], payload, content_type="application/json")
    assert again.json()["duplicate"] is True
    other = client.post(data["urls"]["submit"], {**payload, "submission_key": "another"}, content_type="application/json")
    assert other.status_code == 409 and other.json()["error"] == "assignment_closed"
    assert client.post(data["urls"]["submit"], "not json", content_type="application/json").status_code in (400, 409)


def test_someone_elses_assignment_is_refused(client):
    campaign = make_campaign()
    make_document(campaign)
    owner, intruder = make_worker(), make_worker()
    assignment = request_assignment(owner, campaign)
    login(client, intruder)
    url = reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk])
    assert client.post(url, answers_for(assignment), content_type="application/json").status_code == 404  # like a missing assignment: no existence oracle
    url = reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk])
    assert client.post(url, {"choice": 0}, content_type="application/json").status_code == 404


def test_prolific_arrival_creates_worker_and_completion_link(client):
    campaign = make_campaign(prolific_completion_code="ABC123")
    make_document(campaign)
    url = reverse("annotate:campaign", args=[campaign.slug]) + f"?study={study_token(campaign)}&PROLIFIC_PID=pp1&STUDY_ID=st&SESSION_ID=se"
    response = client.get(url)
    assert response["Location"] == reverse("annotate:frank-task", args=[campaign.slug])
    worker = Worker.objects.get(provider="prolific", external_id="pp1")
    assert not worker.user.has_usable_password()
    client.get(response["Location"])
    assert Assignment.objects.get(worker=worker).external_assignment_id == "se"
    client.get(url)  # arriving again finds the same worker
    assert Worker.objects.filter(provider="prolific").count() == 1
    done = client.get(reverse("annotate:campaign-done", args=[campaign.slug]))
    assert b"cc=ABC123" not in done.content  # no code before the required item is submitted
    assignment = Assignment.objects.get(worker=worker)
    client.post(reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk]), {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json")
    assignment.refresh_from_db()
    assert client.post(reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]), answers_for(assignment), content_type="application/json").status_code == 200
    done = client.get(reverse("annotate:campaign-done", args=[campaign.slug]))
    assert b"https://app.prolific.com/submissions/complete?cc=ABC123" in done.content


def test_mturk_arrival_preview_and_external_submit(client):
    campaign = make_campaign()
    make_document(campaign)
    entry = reverse("annotate:campaign", args=[campaign.slug]) + f"?study={study_token(campaign)}&"
    preview = client.get(entry + "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1", follow=True)
    assert preview.status_code == 200 and b"Preview" in preview.content
    assert not Worker.objects.exists() and not Assignment.objects.exists()
    assert "_auth_user_id" not in client.session
    response = client.get(entry + "workerId=W9&assignmentId=A9&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com")
    assert response.status_code == 302
    worker = Worker.objects.get(provider="mturk", external_id="W9")
    client.get(response["Location"])
    assignment = Assignment.objects.get(worker=worker)
    assert assignment.external_assignment_id == "A9"
    client.post(reverse("annotate:frank-entity", args=[campaign.slug, assignment.pk]), {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json")
    assignment.refresh_from_db()
    assert client.post(reverse("annotate:frank-submit", args=[campaign.slug, assignment.pk]), answers_for(assignment), content_type="application/json").status_code == 200
    done = client.get(reverse("annotate:campaign-done", args=[campaign.slug])).content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in done and 'name="assignmentId" value="A9"' in done
    bad = client.get(entry + "workerId=W9&assignmentId=A9")
    assert bad.status_code == 400 and b"turkSubmitTo parameter is missing" in bad.content


def test_no_gold_reaches_the_annotator(client):
    """Fetch every page and JSON an annotator can reach and look for gold: trap codes/labels, entity answer, keys."""
    campaign = make_campaign(trap_rate=1.0, tutorial_required=True, qualification_required=True, prolific_completion_code="CC1")
    make_document(campaign, traps=TRAPS, negative_entity="Barcelona")
    worker = make_worker()
    login(client, worker)
    slug = campaign.slug
    bodies = [client.get(reverse("annotate:home")), client.get(reverse("annotate:campaign", args=[slug]), follow=True)]
    Participation.objects.filter(worker=worker).update(tutorial_done=True)
    bodies.append(client.get(reverse("annotate:frank-qualification", args=[slug])))
    qualify(worker, campaign)
    bodies.append(client.get(reverse("annotate:frank-qualification", args=[slug])))
    task = client.get(reverse("annotate:frank-task", args=[slug]))
    bodies.append(task)
    assignment = Assignment.objects.get(worker=worker)
    bodies.append(client.post(reverse("annotate:frank-entity", args=[slug, assignment.pk]), {"choice": assignment.layout["entity"]["answer"]}, content_type="application/json"))
    assignment.refresh_from_db()
    age(assignment)
    bodies.append(client.post(reverse("annotate:frank-submit", args=[slug, assignment.pk]), answers_for(assignment), content_type="application/json"))
    bodies.append(client.get(reverse("annotate:campaign-done", args=[slug])))
    bodies.append(client.get(reverse("annotate:frank-preview", args=[slug])))
    texts = [b.content.decode() for b in bodies] + [p.read_text() for p in STATIC.glob("frank*.js")]
    assert all(b.status_code == 200 for b in bodies), [b.status_code for b in bodies]
    trap_texts = list(Trap.objects.values_list("text", flat=True))
    assert any(t in texts[4] for t in trap_texts)  # the trap sentences are shown...
    options = assignment.layout["entity"]["options"]
    page_data = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', texts[4], re.DOTALL).group(1))
    assert page_data["entity_options"] == options and set(page_data) >= {"summaries", "article"}
    for text in texts:
        # ...but nothing marks them, and no key or answer is sent.
        assert not re.search(r"\bF[0-6]\b", text)
        leak = re.search(r"trap|expected_|negative_entity|\"answer\"|gold", text, re.IGNORECASE)
        assert leak is None, leak
        assert "layout" not in text
        for key in frank_content.QUALIFICATION_POOL:
            for _ in (key,):
                assert f"{key.text}\" data-category" not in text and (key.explanation == "" or key.explanation not in text)
    for summary in page_data["summaries"]:  # every sentence has the same fields: the trap's position is not told
        assert all(set(s) == {"text", "relevant"} for s in summary["sentences"])
    for summary in frank_content.TUTORIAL.summaries:  # tutorial explanations only come back as feedback
        for key in summary:
            assert all(key.explanation not in text for text in texts)


def test_admin_page_is_staff_only_and_shows_workers_and_actions(client):
    # One checked answer of each class decides the balanced score here, so the first item earns its bonus.
    campaign = make_campaign(entity_check_enabled=False, trap_rate=1.0, status=CampaignStatus.DRAFT, control_min_per_class=1, bonus_confidence=0.0,
                             prolific_completion_code="C0MPLETE", prolific_screenout_code="SCREENED")
    make_document(campaign, traps=TRAPS)
    page_url = reverse("annotate:manage-campaign", args=[campaign.slug])
    annotator = make_worker("annotator-1")
    login(client, annotator)
    assert client.get(page_url).status_code == 403
    assert client.get(reverse("annotate:manage-bonuses-csv", args=[campaign.slug])).status_code == 403
    admin = make_worker("admin-1", staff=True)
    login(client, admin)
    # The bonus on offer cannot be paid by traps built from the article alone: the checklist says so.
    assert b'<li class="warning" id="ready-bonus">' in client.get(page_url).content
    client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "start"})
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.RUNNING
    w = make_worker("prolific-p7", provider="prolific", external_id="p7")
    a = request_assignment(w, campaign)
    # Counted as human-written traps are (full weight, not computable from the page), so they can earn a bonus;
    # in one word-overlap band, since the score is balanced within bands.
    Trap.objects.filter(document__campaign=campaign).update(weight=1.0, source=TrapSource.BUMP_EDIT, overlap=0.9)
    age(a)
    from annotate.services.assignments import submit_assignment

    submit_assignment(a.pk, w, answers_for(a, seconds=4.0))
    html = client.get(page_url).content.decode()
    assert "p7" in html and "100% (2/2)" in html and "4.0 s" in html and "$1.00" in html
    assert "1 / 1</strong> items done" not in html or campaign.redundancy == 1
    generic = client.get(reverse("annotate:manage-bonuses-csv", args=[campaign.slug])).content.decode()
    assert generic.splitlines()[0] == "worker_id,username,provider,external_id,total" and "p7" in generic
    assert client.get(reverse("annotate:manage-bonuses-csv", args=[campaign.slug]) + "?format=prolific").content.decode() == "p7,1.00\r\n"
    judgements = client.get(reverse("annotate:manage-judgements-csv", args=[campaign.slug])).content.decode()
    # header + the judged sentences: a trap takes the place of a sentence, and trap answers are no rows here
    judged = SentenceJudgement.objects.filter(assignment=a).count()
    assert 1 <= judged < 3 and judgements.count("\n") == 1 + judged and ",4.00," in judgements
    assert "4.000" in client.get(reverse("annotate:manage-workers-csv", args=[campaign.slug])).content.decode()
    p = Participation.objects.get(worker=w)
    p.is_blocked, p.blocked_reason = True, "test"
    p.save()
    assert client.get(reverse("annotate:manage-unblock", args=[campaign.slug, p.pk])).status_code == 405
    client.post(reverse("annotate:manage-unblock", args=[campaign.slug, p.pk]))
    assert not Participation.objects.get(pk=p.pk).is_blocked
    client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "pause"})
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.PAUSED
    bad = client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "start"}, follow=True)
    assert b"Cannot start the campaign" in bad.content


def test_admin_actions_need_csrf():
    from django.test import Client

    campaign = make_campaign(status=CampaignStatus.DRAFT)
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_worker(staff=True).user)
    assert client.post(reverse("annotate:manage-action", args=[campaign.slug]), {"action": "start"}).status_code == 403
    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_imported_frank_subset_renders_a_task_with_its_traps(client):
    from annotate.models import Campaign
    from annotate.services.campaigns import set_campaign_status
    from annotate.services.imports import import_dataset

    import_dataset("frank", [Path(__file__).resolve().parents[2] / "data" / "frank-subset"], campaign_slug="frank-sub")
    campaign = Campaign.objects.get(slug="frank-sub")
    campaign.tutorial_required = campaign.qualification_required = False
    campaign.trap_rate = 1.0
    campaign.save()
    set_campaign_status(campaign, CampaignStatus.RUNNING)
    worker = make_worker()
    login(client, worker)
    page = client.get(reverse("annotate:frank-task", args=[campaign.slug])).content.decode()
    assignment = Assignment.objects.get(worker=worker)
    entity = assignment.layout["entity"]
    # Named entities of the same kinds: the absent option is not in the article and has the kind of a present one.
    from annotate.frank.entities import entity_pool, recognisable

    pool = entity_pool(assignment.item.document)
    text = assignment.item.document.text
    absent = entity["options"][entity["answer"]]
    assert absent.lower() not in text.lower()
    # Options are the pool's names as a reader recognises them ("the Sunday Times" shown as "Sunday Times").
    shown = {kind: {recognisable(n, text) for n in names} for kind, names in pool["absent"].items()}
    kinds = [k for k, names in shown.items() if absent in names]
    assert any(recognisable(o, text) == o and o in {recognisable(n, text) for n in pool["present"].get(k, [])}
               for k in kinds for o in entity["options"] if o != absent)
    # Rate 1.0: a trap on every summary while the document has traps, except where every trap left would
    # repeat a shown sentence.
    from annotate.frank.page import repeats_visible
    from annotate.frank.prepared import prepared_page

    trap_ids = [r["trap"] for r in assignment.layout["summaries"] if r["trap"]]
    assert len(set(trap_ids)) == len(trap_ids)
    if len(trap_ids) < len(assignment.layout["summaries"]):
        visible = [s for summary in prepared_page(assignment.item.document)["summaries"] for s in summary["raw"]]
        visible += list(Trap.objects.filter(pk__in=trap_ids).values_list("text", flat=True))
        left = Trap.objects.filter(document=assignment.item.document, weight__gt=0).exclude(pk__in=trap_ids)
        assert all(repeats_visible(t.text, visible, edited=t.code != "F0") for t in left)
    assert Trap.objects.filter(pk__in=trap_ids, document=assignment.item.document).count() == len(trap_ids)
    data = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert len(data["summaries"]) == len(assignment.layout["summaries"]) and not re.search(r"\bF[0-6]\b", page)


def test_manage_page_submits_scoring_jobs_and_shows_them(client):
    """The campaign page scores summaries with a chosen metric (eager Celery) and lists the job's progress."""
    from django.contrib.auth import get_user_model

    from annotate.models import MetricScore
    campaign = make_campaign()
    make_document(campaign)
    admin = get_user_model().objects.create_user("score-admin", password="pw-Score-123", is_staff=True)
    client.force_login(admin)
    response = client.post(f"/manage/{campaign.slug}/score/", {"metric": ["rouge"]}, follow=True)
    assert response.status_code == 200
    assert b"scoring job" in response.content and b"rouge" in response.content
    assert MetricScore.objects.filter(summary__document__campaign=campaign, metric="rouge2_precision_article").exists()
    bad = client.post(f"/manage/{campaign.slug}/score/", {"metric": ["nonsense"]}, follow=True)
    assert b"unknown: nonsense" in bad.content


def test_only_worker_pages_may_be_framed_by_the_crowd_platform(client):
    campaign = make_campaign()
    page = client.get(f"/c/{campaign.slug}/")
    assert "frame-ancestors 'self' https://www.mturk.com" in page["Content-Security-Policy"]
    assert "X-Frame-Options" not in page
    login = client.get("/accounts/login/")
    assert login["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in login["Content-Security-Policy"]


def test_a_task_page_reads_its_campaign_with_the_participation_and_refuses_another_protocols(client):
    """The page's campaign comes with the worker's participation in one query once there is one; on the first
    visit (no participation yet) it is read alone and the participation created. A campaign of another protocol
    is 404 on FRANK's page either way, as a missing one is."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    campaign = make_campaign()
    make_document(campaign)
    bump = make_campaign(kind="bump_taxonomy")
    worker = make_worker()
    login(client, worker)
    url = reverse("annotate:frank-task", args=[campaign.slug])
    assert client.get(url).status_code == 200  # first visit: the participation is created
    assert Participation.objects.filter(worker=worker, campaign=campaign).count() == 1
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200  # the same assignment again
    campaign_reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('SELECT "annotate_campaign"')]
    assert not campaign_reads, campaign_reads
    qualify(worker, bump)
    assert client.get(reverse("annotate:frank-task", args=[bump.slug])).status_code == 404
    assert client.get(reverse("annotate:frank-task", args=["no-such-campaign"])).status_code == 404
