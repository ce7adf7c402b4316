"""BUMP on the shared workflow: assignment, submission rules, N/A re-queue, review, exclusivity, pay, scoring."""
from __future__ import annotations

from decimal import Decimal

import pytest

from annotate.bump.models import Edit
from annotate.bump.protocol import checkpoint_matches, new_checkpoint_code
from annotate.bump.review import complete_expert_item, make_reviewer, review_edit
from annotate.bump.selectors import exportable_pairs, open_expert_items
from annotate.bump.services import create_bump_campaign
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Item,
    MetricScore,
    Participation,
    ReviewStatus,
    Summary,
)
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.errors import AssignmentClosed, InvalidSubmission, NotEligible
from annotate.services.participation import (
    eligibility_problem,
    get_participation,
    record_qualification,
)
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = pytest.mark.django_db


@pytest.fixture
def task1():
    return create_bump_campaign("t1", "Task 1", "bump_taxonomy", status="running", pay_per_item=Decimal("0.50"))


def _claim(worker, campaign):
    qualify(worker, campaign)
    return request_assignment(worker, campaign)


def _submit(assignment, worker, **payload):
    body = {"checkpoint": assignment.checkpoint.code, "edited": "", "not_applicable": False, **payload}
    return submit_assignment(assignment.pk, worker, body, submission_key="k")


def test_create_bump_campaign_sets_bump_defaults_and_refuses_other_kinds(task1):
    assert (task1.qualification_pass_score, task1.redundancy, task1.tutorial_required, task1.max_edit_distance) == (1.0, 1, False, 6)
    with pytest.raises(ValueError, match="not a BUMP campaign kind"):
        create_bump_campaign("x", "X", "frank")


def test_checkpoint_codes_are_random_and_compared_loosely():
    codes = {new_checkpoint_code() for _ in range(50)}
    assert len(codes) > 45 and all(len(c) == 6 for c in codes)
    assert checkpoint_matches("AB23CD", " ab23cd ") and not checkpoint_matches("AB23CD", "AB23CE") and not checkpoint_matches("", "")
    assert not checkpoint_matches("AB23CD", None)


def test_a_valid_edit_is_stored_with_hints_pay_and_bonus(task1):
    reference = make_bump_document(task1, types=["extrinsic_entity"])
    worker = make_worker()
    assignment = _claim(worker, task1)
    assert assignment.checkpoint.code and assignment.item.requested_error_type == "extrinsic_entity"
    outcome = _submit(assignment, worker, edited=BUMP_REFERENCE.replace("Merck", "Pfizer"))
    edit = Edit.objects.get(assignment=assignment)
    assert outcome.result.new_summary_ids == [edit.edited_summary_id]
    edited = edit.edited_summary
    assert (edited.edited_from, edited.system, edited.requested_error_type, edited.text) == (
        reference, "human-edit", "extrinsic_entity", BUMP_REFERENCE.replace("Merck", "Pfizer"))
    assert (edit.word_distance, edit.inserted_words, edit.hint_inserted_in_article, edit.hint_likely_kind, edit.hint_disagrees) == (
        1, ["Pfizer"], False, "extrinsic", False)
    assert edit.review_status == ReviewStatus.PENDING
    # The edit's bonus waits for review: only the pay per item is owed at submission.
    assert sorted(BonusEntry.objects.filter(assignment=assignment).values_list("reason", "amount")) == [("pay per item", Decimal("0.50"))]


@pytest.mark.parametrize(("payload", "message"), [
    ({"checkpoint": "WRONG1"}, "The checkpoint code is wrong"),
    ({"checkpoint": None}, "The checkpoint code is wrong"),
    ({"edited": BUMP_REFERENCE}, "same as the original"),
    ({"edited": "  "}, "is empty"),
    ({"edited": "The EU banned every flu drug , made anywhere , last year for good ."}, "keep it minimal"),
    ({"edited": BUMP_REFERENCE + " Merck said so ."}, "adds a sentence"),
    ({"edited": BUMP_REFERENCE.replace(", on Thursday .", ". It was Thursday .")}, "adds a sentence"),
    ({"edited": 42}, "edited summary is missing"),
    ({"not_applicable": "yes"}, "not_applicable must be"),
])
def test_refused_submissions_store_nothing_and_keep_the_assignment_open(task1, payload, message):
    make_bump_document(task1, types=["intrinsic_entity"])
    worker = make_worker()
    assignment = _claim(worker, task1)
    body = {"edited": BUMP_REFERENCE.replace("Merck", "Peter Marks"), **payload}
    with pytest.raises(InvalidSubmission, match=message):
        _submit(assignment, worker, **body)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE
    assert not Edit.objects.exists() and not Summary.objects.filter(edited_from__isnull=False).exists()
    assert not BonusEntry.objects.exists()
    # The worker can still submit a correct edit afterwards.
    _submit(assignment, worker, edited=BUMP_REFERENCE.replace("Merck", "Peter Marks"))
    assert Edit.objects.get().hint_likely_kind == "intrinsic"


def test_not_applicable_requeues_for_experts_who_complete_it(task1, django_user_model):
    make_bump_document(task1, types=["coreference"])
    worker = make_worker()
    assignment = _claim(worker, task1)
    _submit(assignment, worker, not_applicable=True, edited="ignored")
    edit = Edit.objects.get()
    assert edit.is_not_applicable and edit.edited_summary is None
    expert_item = Item.objects.get(for_experts=True)
    assert list(open_expert_items(task1)) == [expert_item]
    # Expert items never go to crowd workers.
    other = make_worker()
    assert _claim(other, task1) is None
    reviewer = django_user_model.objects.create_user("rev", password="x")
    with pytest.raises(NotEligible):
        complete_expert_item(expert_item.pk, reviewer, edited_text="x")
    make_reviewer(reviewer)
    with pytest.raises(InvalidSubmission, match="same as the original"):
        complete_expert_item(expert_item.pk, reviewer, edited_text=BUMP_REFERENCE)
    expert_edit = complete_expert_item(expert_item.pk, reviewer, edited_text=BUMP_REFERENCE.replace("The FDA approved", "It approved"))
    assert expert_edit.review_status == ReviewStatus.ACCEPTED and expert_edit.edited_summary.corrected_error_type == "coreference"
    assert not open_expert_items(task1).exists()
    with pytest.raises(AssignmentClosed, match="already completed"):
        complete_expert_item(expert_item.pk, reviewer, not_applicable=True)
    assert list(exportable_pairs(task1)) == [expert_edit.edited_summary]


def test_free_style_task_refuses_na():
    task2 = create_bump_campaign("t2", "Task 2", "bump_free", status="running")
    make_bump_document(task2)
    worker = make_worker()
    assignment = _claim(worker, task2)
    assert assignment.item.requested_error_type == ""
    with pytest.raises(InvalidSubmission, match="N/A is not possible"):
        _submit(assignment, worker, not_applicable=True)


def test_each_summary_type_is_given_once_and_a_worker_sees_new_summaries_first(task1):
    first, second = make_bump_document(task1), make_bump_document(task1)
    a, b = make_worker(), make_worker()
    qualify(a, task1), qualify(b, task1)
    got_a = []
    for _ in range(2):
        assignment = request_assignment(a, task1)
        got_a.append(assignment.item.summary_id)
        Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    assert sorted(got_a) == sorted([first.pk, second.pk])  # a different summary before a second type of the same one
    claimed = []
    for worker in (a, b) * 10:
        assignment = request_assignment(worker, task1)
        if assignment:
            claimed.append(assignment.item_id)
            Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    all_items = list(Assignment.objects.values_list("item_id", flat=True))
    assert len(claimed) == 12 and len(all_items) == 14 and len(set(all_items)) == 14  # redundancy 1: once each


def test_task1_qualifiers_may_not_join_the_exclusive_task2(task1):
    task2 = create_bump_campaign("t2", "Task 2", "bump_free", status="running", exclusive_with=task1)
    took_t1, fresh = make_worker(), make_worker()
    record_qualification(get_participation(took_t1, task1), score=0.5, passed=False, answers={})
    assert "did not take part in the related taxonomy task" in eligibility_problem(get_participation(took_t1, task2), for_main_task=False)
    assert eligibility_problem(get_participation(fresh, task2), for_main_task=False) is None
    assert Participation.objects.filter(worker=fresh, campaign=task1).count() == 0


def test_review_confirms_corrects_or_rejects_and_gates_exports(task1, django_user_model):
    make_bump_document(task1, types=["intrinsic_entity", "extrinsic_entity", "extrinsic_predicate"])
    worker = make_worker()
    qualify(worker, task1)
    edits = {}
    for text in ("Peter Marks", "Pfizer", "Novartis"):
        assignment = request_assignment(worker, task1)
        _submit(assignment, worker, edited=BUMP_REFERENCE.replace("Merck", text))
        edits[assignment.item.requested_error_type] = Edit.objects.get(assignment=assignment)
    assert not exportable_pairs(task1).exists()  # pending edits are not exported
    reviewer = django_user_model.objects.create_user("rev", password="x")
    with pytest.raises(NotEligible, match="Only reviewers"):
        review_edit(edits["intrinsic_entity"].pk, reviewer, campaign_id=task1.pk, action="accept")
    make_reviewer(reviewer)
    accepted = review_edit(edits["intrinsic_entity"].pk, reviewer, campaign_id=task1.pk, action="accept")
    corrected = review_edit(edits["extrinsic_predicate"].pk, reviewer, campaign_id=task1.pk, action="correct", corrected_type="extrinsic_entity", comment="Novartis is an entity")
    rejected = review_edit(edits["extrinsic_entity"].pk, reviewer, campaign_id=task1.pk, action="reject")
    with pytest.raises(InvalidSubmission, match="Choose the edit's error type"):
        review_edit(accepted.pk, reviewer, campaign_id=task1.pk, action="correct", corrected_type="bogus")
    with pytest.raises(InvalidSubmission, match="unknown review action"):
        review_edit(accepted.pk, reviewer, campaign_id=task1.pk, action="approve")
    assert (accepted.review_status, accepted.corrected_error_type, accepted.edited_summary.corrected_error_type) == ("accepted", "intrinsic_entity", "intrinsic_entity")
    corrected.refresh_from_db()
    assert (corrected.review_status, corrected.corrected_error_type, corrected.reviewer, corrected.review_comment) == (
        "corrected", "extrinsic_entity", reviewer, "Novartis is an entity")
    assert corrected.edited_summary.corrected_error_type == "extrinsic_entity"
    assert rejected.review_status == "rejected"
    assert set(exportable_pairs(task1)) == {accepted.edited_summary, corrected.edited_summary}
    # "Other" is allowed for a reviewer.
    assert review_edit(rejected.pk, reviewer, campaign_id=task1.pk, action="correct", corrected_type="other").review_status == "corrected"


def test_new_edits_are_scored_after_commit_when_the_campaign_asks(task1, django_capture_on_commit_callbacks):
    task1.auto_score_metrics = ["bleu"]
    task1.save()
    make_bump_document(task1, types=["extrinsic_entity"])
    worker = make_worker()
    assignment = _claim(worker, task1)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        _submit(assignment, worker, edited=BUMP_REFERENCE.replace("Merck", "Pfizer"))
    assert callbacks
    edited = Edit.objects.get().edited_summary
    bleu = MetricScore.objects.get(summary=edited, metric="bleu")
    assert 0 < bleu.value < 100
