"""BUMP quality control: edits compared on words whatever the spacing, pay follows review,
review scoped to its campaign and never of one's own edits, the review page shows what a decision needs."""
from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from annotate.bump.edits import (
    edit_problems,
    highlight_inserted,
    tokens,
    word_edit_distance,
)
from annotate.bump.models import Edit
from annotate.bump.protocol import count_sentences
from annotate.bump.review import make_reviewer, review_edit, undo_review
from annotate.bump.services import create_bump_campaign
from annotate.exporters.pseudonyms import worker_pseudonym
from annotate.models import BonusEntry, Participation, PayDecision, PayDecisionKind, ReviewStatus
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import ledger_csv, worker_total
from annotate.services.errors import AssignmentClosed, InvalidSubmission, NotEligible
from annotate.services.pay_rules import release_held_pay
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify


def _respace(text: str) -> str:
    """What a worker's browser makes of a tokenised summary: no space before punctuation, doubled spaces."""
    return re.sub(r" ([.,;:!?])", r"\1", text).replace(". ", ".  ")


@pytest.mark.parametrize("sample", ["bump_task1_sample.json", "bump_task2_sample.json"])
def test_spacing_only_edits_are_refused_and_real_edits_count_words_on_the_samples(samples_dir, sample):
    records = json.loads((samples_dir / sample).read_text(encoding="utf-8"))
    for record in records:
        reference, edited = record["reference_summary"], record["edited_summary"]
        respaced = _respace(reference)
        assert respaced != reference and word_edit_distance(reference, respaced) == 0
        problem = edit_problems(reference, respaced, max_distance=6, count_sentences=count_sentences)
        assert "same as the original (spacing does not count)" in problem["edited"]
        # The published edits change words, and the same edit typed without corpus spacing counts the same.
        distance = word_edit_distance(reference, edited)
        assert distance >= 1
        assert word_edit_distance(reference, _respace(edited)) == distance
        assert tokens(_respace(edited)) == tokens(edited)


def test_the_issue_case_and_punctuation_only_edits():
    ref = "Rosie appeared on May 29, 1943 . Mary Doyle Keefe was 19 ."
    assert word_edit_distance(ref, "Rosie appeared on May 29, 1943.  Mary Doyle Keefe was 19.") == 0
    assert "only changes punctuation" in edit_problems(ref, ref.replace("1943 .", "1943 !"), max_distance=6, count_sentences=lambda t: 2)["edited"]
    assert word_edit_distance("he could n't go .", "he couldn't go.") == 0
    assert word_edit_distance(ref, ref.replace("1943", "1946")) == 1


def test_inserted_words_are_highlighted_in_the_article():
    marked = [t for t, m in highlight_inserted("Merck made it. Pfizer did not, said Merck's boss.", ["Merck", "the"]) if m]
    assert marked == ["Merck"]
    assert not any(m for _, m in highlight_inserted("The vaccine.", ["the"]))  # function words are not marked


@pytest.fixture
def task1(db):
    # Submitted at once: without the speed rule (tests/integration/test_bump_verified_pay.py) every worker here would be held.
    return create_bump_campaign("q1", "Task 1", "bump_taxonomy", status="running", pay_per_item=Decimal("0.50"),
                                min_seconds_per_sentence=0.0)


def _edits(campaign, worker, replacements: list[str]) -> list[Edit]:
    qualify(worker, campaign)
    out = []
    for text in replacements:
        assignment = request_assignment(worker, campaign)
        body = {"checkpoint": assignment.checkpoint.code, "edited": BUMP_REFERENCE.replace("Merck", text), "not_applicable": False}
        submit_assignment(assignment.pk, worker, body, submission_key=f"k{assignment.pk}")
        out.append(Edit.objects.get(assignment=assignment))
    return out


def test_a_bump_bonus_is_owed_only_for_accepted_or_corrected_edits_and_follows_undo(task1, django_user_model):
    make_bump_document(task1, types=["extrinsic_entity", "intrinsic_entity", "extrinsic_predicate", "extrinsic_circumstance"])
    worker = make_worker()
    # A spacing-only edit is refused at submission: nothing stored, nothing paid.
    qualify(worker, task1)
    assignment = request_assignment(worker, task1)
    with pytest.raises(InvalidSubmission, match="spacing does not count"):
        submit_assignment(assignment.pk, worker, {"checkpoint": assignment.checkpoint.code, "edited": _respace(BUMP_REFERENCE)}, submission_key="s")
    accepted, corrected, rejected = _edits(task1, worker, ["Pfizer", "Novartis", "Roche"])
    assert worker_total(worker, task1) == Decimal("1.50")  # 3 x 0.50 pay, no bonus before review
    reviewer = django_user_model.objects.create_user("rev")
    make_reviewer(reviewer)
    review_edit(accepted.pk, reviewer, "accept" if accepted.requested_error_type else "correct", campaign_id=task1.pk, corrected_type="extrinsic_entity")
    review_edit(corrected.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="other")
    review_edit(rejected.pk, reviewer, "reject", campaign_id=task1.pk)
    bonuses = BonusEntry.objects.filter(key__startswith="edit-bonus:")
    assert sorted(bonuses.values_list("assignment_id", flat=True)) == sorted([accepted.assignment_id, corrected.assignment_id])
    assert worker_total(worker, task1) == Decimal("3.50")
    # Undo, and a changed decision, append reversing entries; the total follows, the CSV too.
    undo_review(accepted.pk, reviewer, campaign_id=task1.pk)
    review_edit(corrected.pk, reviewer, "reject", campaign_id=task1.pk)
    assert Edit.objects.get(pk=accepted.pk).review_status == ReviewStatus.PENDING
    assert worker_total(worker, task1) == Decimal("1.50")
    review_edit(rejected.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="other")
    review_edit(rejected.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="extrinsic_entity")  # no double bonus
    assert worker_total(worker, task1) == Decimal("2.50")
    assert f",{worker.user.username},,,2.50" in ledger_csv(task1)
    assert ledger_csv(task1, only_bonuses=True).strip().endswith("1.00")


def test_an_edit_bonus_is_held_while_the_workers_pay_is_held_and_settled_from_the_review_on_release(task1, django_user_model):
    make_bump_document(task1, types=["extrinsic_entity", "intrinsic_entity", "extrinsic_predicate"])
    worker = make_worker()
    kept, undone = _edits(task1, worker, ["Pfizer", "Novartis"])
    assert worker_total(worker, task1) == Decimal("1.00")  # pay for two edits
    participation = Participation.objects.get(worker=worker, campaign=task1)
    Participation.objects.filter(pk=participation.pk).update(pay_held=True, pay_held_reason="consistently fast: test")
    reviewer = django_user_model.objects.create_user("rev-held")
    make_reviewer(reviewer)
    for edit in (kept, undone):
        review_edit(edit.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="other")
    # Accepted while held: nothing owed yet, each bonus recorded as held with the reason.
    assert worker_total(worker, task1) == Decimal("1.00")
    held = PayDecision.objects.filter(worker=worker, kind=PayDecisionKind.HELD)
    assert held.count() == 2 and all("edit bonus held for review: consistently fast" in d.reason for d in held)
    # Accepted again while still held: held once, not twice.
    review_edit(kept.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="extrinsic_entity")
    assert PayDecision.objects.filter(worker=worker, kind=PayDecisionKind.HELD).count() == 2
    # One decision is undone while the pay is held: the release pays only what the review owes now, once.
    undo_review(undone.pk, reviewer, campaign_id=task1.pk)
    released = release_held_pay(Participation.objects.get(pk=participation.pk), user=reviewer)
    assert released == Decimal("1.00") and worker_total(worker, task1) == Decimal("2.00")
    assert release_held_pay(Participation.objects.get(pk=participation.pk), user=reviewer) == Decimal("0.00")
    # With the hold lifted, review pays as before.
    review_edit(undone.pk, reviewer, "correct", campaign_id=task1.pk, corrected_type="other")
    assert worker_total(worker, task1) == Decimal("3.00")


def test_review_is_scoped_to_its_campaign_and_never_of_ones_own_edits(task1, client):
    other = create_bump_campaign("q2", "Other", "bump_taxonomy", status="running")
    make_bump_document(task1, types=["extrinsic_entity", "intrinsic_entity"])
    reviewer_worker = make_worker("rev-worker")
    make_reviewer(reviewer_worker.user)
    own, = _edits(task1, reviewer_worker, ["Pfizer"])
    someone = make_worker()
    theirs, = _edits(task1, someone, ["Guinea"])
    with pytest.raises(NotEligible, match="own edit"):
        review_edit(own.pk, reviewer_worker.user, "reject", campaign_id=task1.pk)
    with pytest.raises(AssignmentClosed, match="not exist in this campaign"):
        review_edit(theirs.pk, reviewer_worker.user, "reject", campaign_id=other.pk)
    client.force_login(reviewer_worker.user)
    client.post(f"/c/q2/bump/review/edit/{theirs.pk}/", {"action": "reject"})
    assert Edit.objects.get(pk=theirs.pk).review_status == ReviewStatus.PENDING
    page = client.get("/c/q1/bump/review/").content.decode()
    assert f'data-edit="{theirs.pk}"' in page and f'data-edit="{own.pk}"' not in page  # own edits not queued
    # The page shows the article with the inserted word marked, and the worker's pseudonym and history.
    assert "<mark>Guinea.</mark>" in page  # the inserted word's occurrence in the article
    assert worker_pseudonym(task1.pk, someone.pk) in page and "0 accepted" in page and "1 awaiting review" in page
    assert "Article (inserted words highlighted)" in page and "<textarea name=\"comment\"" in page


def test_bump_pages_and_csvs_use_bump_terms(task1, client):
    make_bump_document(task1, types=["extrinsic_entity"])
    worker = make_worker()
    _edits(task1, worker, ["Pfizer"])
    client.force_login(make_worker("bump-staff", staff=True).user)
    page = client.get(f"/manage/{task1.slug}/").content.decode()
    assert "Edits submitted" in page
    for frank_term in ("Trap score", "Reading check", "sentence judgements", "Articles submitted", "per sentence"):
        assert frank_term not in page, frank_term
    workers_csv = client.get(f"/manage/{task1.slug}/workers.csv").content.decode()
    assert workers_csv.startswith("worker,provider,edits,")
    client.force_login(worker.user)
    done = client.get(f"/c/{task1.slug}/done/").content.decode()
    assert "Edits submitted" in done and "Articles submitted" not in done
