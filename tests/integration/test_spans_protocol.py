"""The span protocol through the shared workflow: claim, task page (no gold in it), submit checks, control
scoring per class (a bot marking every word or none scores 0.5, an honest worker 1.0), export."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from annotate.models import Assignment, AssignmentStatus
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.errors import InvalidSubmission, NotEligible
from annotate.services.imports import import_dataset
from annotate.spans.models import AnswerSource, GoldSpans, SpanAnswer
from annotate.spans.protocol import SpansProtocol
from annotate.spans.words import words
from taxonomies.unified import UNIFIED_TYPES
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"


@pytest.fixture
def campaign():
    campaign = make_campaign(kind="spans", redundancy=5)
    import_dataset("span_records", [SAMPLES / "goyal_style.json", SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    SpansProtocol().import_gold(campaign)
    return campaign


def _balanced(tallies) -> float:
    shares = []
    for expected in (False, True):
        right = sum(t.correct for t in tallies if t.expected_factual is expected)
        total = sum(t.total for t in tallies if t.expected_factual is expected)
        shares.append(right / total)
    return sum(shares) / 2


def _answer_all(worker, campaign, answer) -> bool:
    """Claim and submit every item the worker gets, answering each with ``answer(summary)``; False when the
    shared quality rules stopped the worker on the way."""
    try:
        while (assignment := request_assignment(worker, campaign)) is not None:
            submit_assignment(assignment.pk, worker, answer(assignment.item.summary), submission_key=f"k{assignment.pk}")
    except NotEligible:
        return False
    return True


def _every_word_every_type(summary) -> dict:
    n = len(words(summary.text))
    return {"no_error": False, "spans": [{"start": 0, "end": n, "type": t} for t in UNIFIED_TYPES]}


def _gold_answer(summary) -> dict:
    gold = summary.gold_spans.spans
    if not gold:
        return {"no_error": True, "spans": []}
    return {"no_error": False, "spans": [{"start": s, "end": e, "type": t} for s, e, t in gold]}


def test_the_task_page_lists_the_words_and_never_the_gold(client, campaign):
    worker = make_worker()
    client.force_login(worker.user)
    page = client.get(reverse("annotate:spans-task", args=[campaign.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    data = page.context["data"]
    assignment = Assignment.objects.get(pk=data["assignment"])
    assert data["words"] == words(assignment.item.summary.text)
    assert set(data) == {"assignment", "words", "submission_key", "types", "urls"}
    gold = GoldSpans.objects.get(summary=assignment.item.summary)
    assert "gold" not in html.lower() or "gold" in campaign.name.lower()
    assert json.dumps(gold.spans) not in html
    # The shared submit view takes the page's JSON.
    response = client.post(data["urls"]["submit"], {"no_error": True, "spans": [], "submission_key": data["submission_key"]},
                           content_type="application/json")
    assert response.status_code == 200, response.content
    assert SpanAnswer.objects.get(assignment=assignment).spans == []


def test_submissions_are_checked_and_a_refused_one_stores_nothing(campaign):
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    n = len(words(assignment.item.summary.text))
    refused = [
        ({"spans": []}, "no_error must be true or false"),
        ({"no_error": False, "spans": []}, "Mark at least one wrong span"),
        ({"no_error": True, "spans": [{"start": 0, "end": 1, "type": "extrinsic_np"}]}, "choose one"),
        ({"no_error": False, "spans": [{"start": 0, "end": n + 1, "type": "extrinsic_np"}]}, f"not within the summary's {n} words"),
        ({"no_error": False, "spans": [{"start": 0, "end": 1, "type": "EntE"}]}, "Unknown error type 'EntE'"),
        ({"no_error": False, "spans": [{"start": 0, "end": 1, "type": "extrinsic_np", "frank": "Nope"}]}, "unknown FRANK category"),
    ]
    for payload, message in refused:
        with pytest.raises(InvalidSubmission, match=message):
            submit_assignment(assignment.pk, worker, payload, submission_key="bad")
    assert not SpanAnswer.objects.filter(source=AnswerSource.CROWD).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE
    # Overlapping spans of one type merge; an entire-sentence span covers its sentence.
    submit_assignment(assignment.pk, worker, {"no_error": False, "spans": [
        {"start": 1, "end": 3, "type": "extrinsic_np"}, {"start": 2, "end": 4, "type": "extrinsic_np", "frank": "EntE"},
        {"start": 0, "end": 1, "type": "entire_sentence"},
    ]}, submission_key="good")
    stored = SpanAnswer.objects.get(assignment=assignment)
    assert stored.spans[0] == [1, 4, "extrinsic_np"] and stored.spans[1][0] == 0 and stored.spans[1][2] == "entire_sentence"
    assert stored.source == AnswerSource.CROWD and stored.frank_categories == ["", "EntE", ""]


def test_control_scores_per_class_keep_page_reading_bots_at_one_half_and_an_honest_worker_at_one(campaign):
    protocol = SpansProtocol()
    assert protocol.has_gold(campaign) and protocol.control_item_ids(campaign, None)
    honest, everything, nothing = make_worker(), make_worker(), make_worker()
    assert _answer_all(honest, campaign, _gold_answer)
    _answer_all(everything, campaign, _every_word_every_type)
    _answer_all(nothing, campaign, lambda s: {"no_error": True, "spans": []})
    assert _balanced(protocol.gold_tallies(honest.pk, campaign)) == 1.0
    # Every word marked with every type: all erroneous words right, all correct words wrong; nothing marked: the
    # reverse. (A bot marking every word with one type scores less: erroneous words count only with their type.)
    assert _balanced(protocol.gold_tallies(everything.pk, campaign)) == 0.5
    assert _balanced(protocol.gold_tallies(nothing.pk, campaign)) == 0.5


def test_the_export_holds_crowd_answers_under_pseudonyms_beside_the_imported_ones(client, campaign):
    worker = make_worker()
    _answer_all(worker, campaign, _gold_answer)
    stream = SpansProtocol().export(campaign, "spans", None, file="", reveal_workers=False, include_gold=False)
    rows = [json.loads(line) for line in b"".join(stream.chunks).decode().splitlines()]
    crowd = [r for r in rows if r["source"] == "crowd"]
    assert len(crowd) == SpanAnswer.objects.filter(source="crowd").count() > 0
    assert all(r["annotator"] and r["annotator"] != str(worker.pk) for r in crowd)
    assert {r["source"] for r in rows} == {"crowd", "imported"}
