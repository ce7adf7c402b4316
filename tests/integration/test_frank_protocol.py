"""FRANK on the shared workflow: layout, entity check, submission, traps, blocking, bonuses, expiry, too-fast."""
from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from annotate.frank.models import EntityAnswer
from annotate.frank.protocol import (
    build_layout,
    task_page_data,
    trap_answer_correct,
)
from annotate.frank.services import check_entity_answer
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Document,
    Participation,
    SentenceJudgement,
    Summary,
    Trap,
    TrapAnswer,
    TrapSource,
)
from annotate.protocols import protocol_for
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import ledger_csv
from annotate.services.errors import AssignmentClosed, InvalidSubmission, NotEligible
from annotate.services.participation import is_screened_out
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db

# The factual trap restates the article's first sentence (a verbatim copy is never shown: a reader spots it).
TRAPS = {"F0": "Greenvale's city council approved a new budget.", "F1": "The city council did not approve a new budget."}


def answers_for(assignment: Assignment, *, trap_right: bool = True, seconds: float = 5.0, factual: bool = True) -> dict:
    """A complete payload built from the server-side layout (what an annotator's page would send)."""
    rows = []
    for spec in assignment.layout["summaries"]:
        answers = [{"factual": factual, "categories": [] if factual else ["EntE"], "seconds": seconds} for _ in range(spec["sentences"])]
        if spec["trap"]:
            trap = Trap.objects.get(pk=spec["trap"])
            right = {"factual": trap.expected_factual, "categories": [] if trap.expected_factual else [trap.expected_category]}
            wrong = {"factual": not trap.expected_factual, "categories": ["OutE"] if trap.expected_factual else []}
            answers.insert(spec.get("trap_at", spec["sentences"]), {**(right if trap_right else wrong), "seconds": seconds})
        rows.append({"answers": answers})
    return {"summaries": rows}


def age(assignment: Assignment, minutes: int = 10) -> None:
    """Pretend the assignment was handed out ``minutes`` ago (lead times are capped by the elapsed time)."""
    Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))
    assignment.refresh_from_db()


def pass_entity(assignment: Assignment) -> None:
    entity = assignment.layout["entity"]
    assert check_entity_answer(assignment.pk, assignment.worker, entity["answer"])["correct"] is True
    assignment.refresh_from_db()


def test_layout_puts_traps_in_place_of_a_sentence_at_the_trap_rate_and_keeps_them_server_side():
    campaign = make_campaign(trap_rate=1.0)
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    layout = assignment.layout
    assert len(layout["summaries"]) == 2 and all(row["trap"] for row in layout["summaries"])
    assert min(layout["entity"]["options"]) in {"Barcelona", "Greenvale", "Helen Carter", "Smith", "Jones"}
    assert layout["entity"]["options"][layout["entity"]["answer"]] == "Barcelona"
    page = task_page_data(assignment, relevant_k=2)
    # The trap takes the place of one of its summary's sentences (as many are shown as the summary has), with
    # the same shape as every other sentence.
    own = {s.pk: len(s.sentences) for s in Summary.objects.filter(pk__in=[r["summary"] for r in layout["summaries"]])}
    for row, summary in zip(layout["summaries"], page["summaries"]):
        assert len(summary["sentences"]) == row["sentences"] + 1 == own[row["summary"]]
        assert summary["sentences"][row["trap_at"]]["text"] == Trap.objects.get(pk=row["trap"]).text
        assert all(set(s) == {"text", "relevant"} for s in summary["sentences"])
    assert "answer" not in str(page) and "trap" not in str(page).lower() and "Barcelona" in page["entity_options"]


def test_every_worker_on_an_item_sees_the_same_sentences_so_comparing_pages_finds_no_trap():
    campaign = make_campaign(trap_rate=0.5, redundancy=6)
    make_document(campaign, summaries=[["The council approved the budget.", "Schools will open."], ["Carter objected."],
                                       ["The vote was held on Monday."], ["Taxes will not rise."]], traps=TRAPS)
    pages = []
    for _ in range(6):
        assignment = request_assignment(make_worker(), campaign)
        pages.append(task_page_data(assignment, relevant_k=2))
        assert sum(bool(r["trap"]) for r in assignment.layout["summaries"]) == 2
    shown = [sorted(tuple(s["text"] for s in summary["sentences"]) for summary in page["summaries"]) for page in pages]
    assert all(page == shown[0] for page in shown)  # the same summaries, sentences and traps for everyone


def test_trap_rate_zero_places_no_trap_and_rate_is_respected_on_average():
    import random

    campaign = make_campaign()
    document = make_document(campaign, summaries=[["A."]] * 1 + [["B."], ["C."], ["D."]], traps=TRAPS)
    assert all(row["trap"] is None for row in build_layout(document, 0.0, random.Random(1))["summaries"])
    rng = random.Random(7)
    counts = [sum(bool(r["trap"]) for r in build_layout(document, 0.25, rng)["summaries"]) for _ in range(400)]
    assert 0.85 < sum(counts) / len(counts) < 1.15  # 25% of 4 summaries = 1 trap on average


def test_relevant_sentences_are_underlined_for_each_summary_sentence():
    campaign = make_campaign()
    make_document(campaign, summaries=[["Construction of the first school begins in April."]])
    assignment = request_assignment(make_worker(), campaign)
    page = task_page_data(assignment, relevant_k=2)
    assert page["summaries"][0]["sentences"][0]["relevant"][0] == 3


def test_submission_stores_judgements_and_trap_answers_apart():
    campaign = make_campaign(trap_rate=1.0)
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    pass_entity(assignment)
    age(assignment)
    outcome = submit_assignment(assignment.pk, worker, answers_for(assignment), submission_key="k1")
    # Three summary sentences shown, two traps each in place of one: one judgement, two trap answers.
    assert outcome.result.stored_rows == 1 and outcome.result.traps_total == 2 and outcome.result.traps_correct == 2
    assert SentenceJudgement.objects.filter(assignment=assignment).count() == 1
    replaced = {(r["summary"], r["trap_at"]) for r in assignment.layout["summaries"]}
    judged = set(SentenceJudgement.objects.values_list("summary_id", "sentence_index"))
    assert len(judged) == 1 and not judged & replaced  # never a trap's place
    assert TrapAnswer.objects.filter(assignment=assignment, correct=True).count() == 2
    p = Participation.objects.get(worker=worker, campaign=campaign)
    assert (p.trap_correct, p.trap_total, p.items_submitted) == (2, 2, 1)
    assert SentenceJudgement.objects.filter(assignment=assignment).first().lead_time_seconds == 5.0
    # Same key again: nothing stored twice.
    again = submit_assignment(assignment.pk, worker, answers_for(assignment), submission_key="k1")
    assert again.duplicate and SentenceJudgement.objects.filter(assignment=assignment).count() == 1


def test_trap_answers_are_scored_by_the_expectations_read_with_the_assignments_lock():
    """The submission's lock of the assignment reads the expected answers of its document's traps (no query of their
    own); a trap the lock did not read (an assignment loaded otherwise) is read from the database, and a trap whose
    expectation an admin changed after the page was shown is scored by the expectation as it stands."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate.frank.protocol import _trap_expectations

    campaign = make_campaign(trap_rate=1.0)
    document = make_document(campaign, traps=TRAPS)
    traps = {trap.code: trap for trap in Trap.objects.filter(document=document)}
    read_with_lock = json.dumps([[traps["F0"].pk, True, ""], [traps["F1"].pk, False, "PredE"]])
    locked = Assignment()
    locked.item_trap_expectations = read_with_lock  # as the lock's annotation sets it
    with CaptureQueriesContext(connection) as queries:
        assert _trap_expectations(locked, [traps["F0"].pk, traps["F1"].pk]) == {
            traps["F0"].pk: (True, ""), traps["F1"].pk: (False, "PredE")}
    assert len(queries) == 0
    assert _trap_expectations(Assignment(), [traps["F1"].pk]) == {traps["F1"].pk: (False, traps["F1"].expected_category)}

    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    pass_entity(assignment)
    age(assignment)
    payload = answers_for(assignment)  # every trap answered by its expectation when the page was shown
    Trap.objects.filter(pk=traps["F1"].pk).update(expected_factual=True, expected_category="")
    outcome = submit_assignment(assignment.pk, worker, payload, submission_key="k1")
    shown = [row["trap"] for row in assignment.layout["summaries"] if row["trap"]]
    # F1's "No" is now wrong.
    assert outcome.result.traps_total == len(shown) == 2
    assert outcome.result.traps_correct == sum(trap_id != traps["F1"].pk for trap_id in shown)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p["summaries"].pop(), "expected answers for 2 summaries"),
        (lambda p: p["summaries"][0]["answers"].pop(), "answer all"),
        (lambda p: p["summaries"][0]["answers"][0].update(factual=False, categories=[]), "select at least one error category"),
        (lambda p: p["summaries"][0]["answers"][0].update(factual=False, categories=["Nope"]), "unknown error category 'Nope'"),
        (lambda p: p["summaries"][0]["answers"][0].update(factual=False, categories=["RelE", "EntE", "CircE"]),
         "select at most 2 error categories"),
        (lambda p: p["summaries"][0]["answers"][0].update(factual=True, categories=["EntE"]), "takes no error category"),
        (lambda p: p["summaries"][0]["answers"][0].update(seconds=-1), "seconds must be a non-negative number"),
        (lambda p: p["summaries"][0]["answers"][0].update(factual="yes"), "factual must be true or false"),
    ],
)
def test_bad_submissions_are_refused_and_store_nothing(mutate, message):
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    pass_entity(assignment)
    payload = answers_for(assignment)
    mutate(payload)
    with pytest.raises(InvalidSubmission, match=message):
        submit_assignment(assignment.pk, worker, payload, submission_key="x")
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE and not SentenceJudgement.objects.exists()


def test_submission_without_the_reading_checks_answer_is_refused_naming_the_field():
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    with pytest.raises(InvalidSubmission, match="entity_choice: answer the reading check"):
        submit_assignment(assignment.pk, worker, answers_for(assignment))
    for bad in (7, -1, True, "1", 1.0):
        with pytest.raises(InvalidSubmission, match=r"entity_choice: choose one of the 3 options .*\(0 to 2\)"):
            submit_assignment(assignment.pk, worker, {**answers_for(assignment), "entity_choice": bad})
    assignment.refresh_from_db()
    participation = Participation.objects.get(worker=worker)
    assert assignment.status == AssignmentStatus.ACTIVE and participation.entity_checks == 0
    assert not EntityAnswer.objects.exists() and not SentenceJudgement.objects.exists()


def test_the_reading_checks_answer_sent_with_the_submission_follows_the_same_rule():
    """The page sends the reading check's answer with the item's answers: a first wrong answer is counted and
    the item stored and paid; the second blocks the worker at that submission, whose answers are kept unpaid."""
    campaign = make_campaign(pay_per_item=Decimal("0.50"), bonus_per_item=Decimal("0"))
    for _ in range(3):
        make_document(campaign)
    worker = make_worker()
    first = request_assignment(worker, campaign)
    age(first)
    wrong = (first.layout["entity"]["answer"] + 1) % 3
    outcome = submit_assignment(first.pk, worker, {**answers_for(first), "entity_choice": wrong})
    assert outcome.blocked_reason is None and outcome.result.reading_check_failures == 1
    answer = EntityAnswer.objects.get(assignment=first)
    assert (answer.choice, answer.correct) == (wrong, False)
    participation = Participation.objects.get(worker=worker)
    assert (participation.entity_checks, participation.entity_failures, participation.is_blocked) == (1, 1, False)
    assert BonusEntry.objects.get(worker=worker, assignment=first).amount == Decimal("0.50")

    # Answered on its own before (the endpoint): that answer stands and the one sent along is not read.
    second = request_assignment(worker, campaign)
    age(second)
    assert check_entity_answer(second.pk, worker, second.layout["entity"]["answer"])["correct"]
    outcome = submit_assignment(second.pk, worker, {**answers_for(second), "entity_choice": (second.layout["entity"]["answer"] + 1) % 3})
    assert outcome.blocked_reason is None and outcome.result.reading_checks == 0
    assert EntityAnswer.objects.get(assignment=second).correct
    assert Participation.objects.get(worker=worker).entity_checks == 2

    third = request_assignment(worker, campaign)
    age(third)
    outcome = submit_assignment(third.pk, worker, {**answers_for(third), "entity_choice": (third.layout["entity"]["answer"] + 1) % 3})
    assert "2 answers to the reading check" in outcome.blocked_reason
    participation = Participation.objects.get(worker=worker)
    assert participation.is_blocked and (participation.entity_checks, participation.entity_failures) == (3, 2)
    assert is_screened_out(participation)
    third.refresh_from_db()
    assert third.status == AssignmentStatus.SUBMITTED and SentenceJudgement.objects.filter(assignment=third).exists()
    assert not BonusEntry.objects.filter(assignment=third).exists()
    assert BonusEntry.objects.filter(worker=worker).aggregate(total=Sum("amount"))["total"] == Decimal("1.00")
    with pytest.raises(NotEligible, match="blocked"):
        request_assignment(worker, campaign)


def test_a_campaign_without_the_reading_check_takes_submissions_without_its_answer():
    campaign = make_campaign(entity_check_enabled=False)
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    age(assignment)
    outcome = submit_assignment(assignment.pk, worker, {**answers_for(assignment), "entity_choice": 0})
    assert outcome.result.reading_checks == 0 and not EntityAnswer.objects.exists()


def test_a_first_wrong_reading_check_is_forgiven_and_the_second_blocks_keeping_the_pay_of_submitted_items():
    # Prolific's policy: a participant is removed only after failing two attention checks.
    campaign = make_campaign(pay_per_item=Decimal("0.50"), bonus_per_item=Decimal("0"), completion_min_items=1,
                             prolific_completion_code="DONE-1", prolific_screenout_code="OUT-1")
    for _ in range(3):
        make_document(campaign)
    worker = make_worker(provider="prolific", external_id="p-reader")
    first = request_assignment(worker, campaign)
    wrong = (first.layout["entity"]["answer"] + 1) % 3
    outcome = check_entity_answer(first.pk, worker, wrong)
    assert outcome["correct"] is False and outcome["blocked_reason"] is None and outcome["failures"] == 1
    assert "answer" not in outcome
    first.refresh_from_db()
    assert first.status == AssignmentStatus.ACTIVE and EntityAnswer.objects.get(assignment=first).correct is False
    assert EntityAnswer.objects.get(assignment=first).choice == wrong and "entity_choice" not in first.layout
    # A second answer does not change the outcome (no retry to find the right option) ...
    assert check_entity_answer(first.pk, worker, first.layout["entity"]["answer"])["correct"] is False
    # ... and the worker goes on with the item, which is submitted and paid.
    age(first)
    submit_assignment(first.pk, worker, answers_for(first))
    paid = BonusEntry.objects.filter(worker=worker, campaign=campaign).aggregate(total=Sum("amount"))["total"]
    assert paid == Decimal("0.50")
    second = request_assignment(worker, campaign)
    outcome = check_entity_answer(second.pk, worker, (second.layout["entity"]["answer"] + 1) % 3)
    assert outcome["failures"] == 2 and "2 answers to the reading check" in outcome["blocked_reason"]
    p = Participation.objects.get(worker=worker, campaign=campaign)
    assert p.is_blocked and (p.entity_checks, p.entity_failures) == (2, 2)
    second.refresh_from_db()
    assert second.status == AssignmentStatus.RELEASED
    with pytest.raises(NotEligible, match="blocked"):
        request_assignment(worker, campaign)
    # screened out now, with the pay of the item submitted before kept
    assert is_screened_out(p)
    assert BonusEntry.objects.filter(worker=worker, campaign=campaign).aggregate(total=Sum("amount"))["total"] == Decimal("0.50")


def test_entity_choice_out_of_range_is_refused():
    campaign = make_campaign()
    make_document(campaign)
    worker = make_worker()
    assignment = request_assignment(worker, campaign)
    with pytest.raises(InvalidSubmission, match=r"choice: choose one of the 3 options .*\(0 to 2\)"):
        check_entity_answer(assignment.pk, worker, 7)
    assert Participation.objects.get(worker=worker).entity_checks == 0


def test_negative_entity_falls_back_to_another_articles_entity():
    campaign = make_campaign()
    make_document(campaign, negative_entity="", entities=["Greenvale", "Helen Carter"])
    other = make_document(campaign, entities=["Atlantis Corp"], item=False)
    assert other
    assignment = request_assignment(make_worker(), campaign)
    entity = assignment.layout["entity"]
    assert entity["options"][entity["answer"]] == "Atlantis Corp"


def test_trap_scoring_rule():
    assert trap_answer_correct(True, "", True, [])
    assert not trap_answer_correct(True, "", False, ["OutE"])
    assert trap_answer_correct(False, "RelE", False, ["RelE", "EntE"])
    assert not trap_answer_correct(False, "RelE", False, ["EntE"])
    assert not trap_answer_correct(False, "RelE", True, [])


def test_trap_score_below_threshold_blocks_after_min_count():
    campaign = make_campaign(trap_rate=1.0, trap_min_count=3, entity_check_enabled=False)
    for _ in range(3):
        make_document(campaign, traps=TRAPS)
    worker = make_worker()
    # First item: 2 traps, both wrong -> 0/2, below the minimum count: not blocked yet.
    a1 = request_assignment(worker, campaign)
    assert submit_assignment(a1.pk, worker, answers_for(a1, trap_right=False)).blocked_reason is None
    a2 = request_assignment(worker, campaign)
    outcome = submit_assignment(a2.pk, worker, answers_for(a2, trap_right=False))
    # Mechanical traps weigh half: 4 of them are not yet decisive for the combined score (2 per class needed),
    # but the traps' own rule is, after trap_min_count of them.
    assert outcome.blocked_reason and "only 0 of 4" in outcome.blocked_reason and "0%" in outcome.blocked_reason
    p = Participation.objects.get(worker=worker)
    assert p.is_blocked and p.trap_score == 0
    assert not BonusEntry.objects.filter(worker=worker).exclude(reason="pay per item").exists()
    with pytest.raises(NotEligible):
        request_assignment(worker, campaign)



def full_weight_traps(campaign) -> None:
    """Prepare the pages (which add copy traps), then make every trap count as a human-written one (full
    weight, not computable from the page; mechanical ones count half and never earn a bonus alone), so that
    one item's two traps decide the balanced score and the bonus. In one word-overlap band: the score is
    balanced within bands, and a copy and a negation of an article sentence differ in overlap by design."""
    protocol_for(campaign.kind).prepare_campaign(campaign)
    Trap.objects.filter(document__campaign=campaign).update(weight=1.0, source=TrapSource.BUMP_EDIT, overlap=0.9)


def test_bonus_per_item_at_quality_and_streak_every_ten_without_double_payment():
    # Two summaries, so each page shows both traps: the balanced score is known from the first item on.
    campaign = make_campaign(trap_rate=1.0, entity_check_enabled=False, bonus_streak_size=2, redundancy=1, control_min_per_class=1,
                             bonus_confidence=0.0)
    for _ in range(3):
        make_document(campaign, summaries=[["Greenvale approved a budget."], ["The council met."]], traps=TRAPS)
    full_weight_traps(campaign)
    worker = make_worker()
    keys = []
    for _ in range(3):
        a = request_assignment(worker, campaign)
        submit_assignment(a.pk, worker, answers_for(a), submission_key=f"key-{a.pk}")
        submit_assignment(a.pk, worker, answers_for(a), submission_key=f"key-{a.pk}")  # a retried click
        keys.append(a.pk)
    amounts = sorted((e.reason.split(" ")[0], e.amount) for e in BonusEntry.objects.filter(worker=worker))
    assert [a for r, a in amounts if r == "item"] == [Decimal("1.00")] * 3
    assert len([a for r, a in amounts if r != "item"]) == 1  # one streak bonus after 2 items (streak size 2 here)
    assert Participation.objects.get(worker=worker).bonus_items == 3
    csv_text = ledger_csv(campaign)
    assert "4.00" in csv_text


def test_no_bonus_when_score_below_bonus_threshold():
    campaign = make_campaign(trap_rate=1.0, entity_check_enabled=False, trap_min_count=50, redundancy=1)
    make_document(campaign, traps=TRAPS)
    worker = make_worker()
    a = request_assignment(worker, campaign)
    submit_assignment(a.pk, worker, answers_for(a, trap_right=False))
    assert not BonusEntry.objects.filter(worker=worker, amount__gt=0).exclude(reason="pay per item").exists()


def test_too_fast_flag_and_lead_time_bounds():
    campaign = make_campaign(entity_check_enabled=False, min_seconds_per_sentence=2.0)
    for _ in range(4):
        make_document(campaign)
    fast, slow = make_worker(), make_worker()
    # A bot submits at once but reports 30 s per sentence: the server's clock decides, and the reported
    # times are scaled down so that they sum to no more than the time the server saw.
    a = request_assignment(fast, campaign)
    started = a.created_at
    submit_assignment(a.pk, fast, answers_for(a, seconds=30.0))
    a.refresh_from_db()
    assert a.too_fast is True
    lead = list(SentenceJudgement.objects.filter(assignment=a).values_list("lead_time_seconds", flat=True))
    assert sum(lead) <= (a.submitted_at - started).total_seconds() + 1e-3 and len(set(lead)) == 1
    b = request_assignment(slow, campaign)
    age(b, minutes=5)
    submit_assignment(b.pk, slow, answers_for(b, seconds=99999))
    b.refresh_from_db()
    assert b.too_fast is False
    # Times that sum to more than the elapsed 5 minutes are scaled to it.
    lead = list(SentenceJudgement.objects.filter(assignment=b).values_list("lead_time_seconds", flat=True))
    assert 299 < sum(lead) < 302
    participation = Participation.objects.get(worker=fast, campaign=campaign)
    assert participation.too_fast_items == 1 and not participation.is_fast_worker
    # Consistently fast (3 items, all too fast): flagged on the admin's figures and in the API.
    for _ in range(2):
        c = request_assignment(fast, campaign)
        submit_assignment(c.pk, fast, answers_for(c, seconds=30.0))
    participation.refresh_from_db()
    assert (participation.items_submitted, participation.too_fast_items, participation.is_fast_worker) == (3, 3, True)
    from annotate.api.serializers import ParticipationSerializer
    from annotate.selectors import worker_table

    assert ParticipationSerializer(participation).data["fast_worker"] is True
    flags = {row["worker"].pk: row["fast_worker"] for row in worker_table(campaign)}
    assert flags == {fast.pk: True, slow.pk: False}


def test_scale_lead_times():
    from annotate.frank.protocol import scale_lead_times

    assert scale_lead_times([10, 10], 40) == 1.0
    assert scale_lead_times([20.0, 10.0, 0.8], 2.5) == pytest.approx(2.5 / 30.8)  # the forged item
    assert scale_lead_times([], 3) == 1.0


def test_expired_assignment_is_refused_and_slot_freed():
    campaign = make_campaign(entity_check_enabled=False, redundancy=1)
    make_document(campaign)
    worker, other = make_worker(), make_worker()
    a = request_assignment(worker, campaign)
    Assignment.objects.filter(pk=a.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(AssignmentClosed, match="expired"):
        submit_assignment(a.pk, worker, answers_for(a))
    assert not SentenceJudgement.objects.exists()
    assert request_assignment(other, campaign) is not None  # the slot went to someone else


def test_unqualified_worker_gets_no_item_and_qualified_one_does():
    campaign = make_campaign(tutorial_required=True, qualification_required=True)
    make_document(campaign)
    worker = make_worker()
    with pytest.raises(NotEligible, match="tutorial"):
        request_assignment(worker, campaign)
    qualify(worker, campaign)
    assert request_assignment(worker, campaign) is not None


def test_a_frank_bonus_is_decided_with_the_score_at_submission():
    from annotate.services.bonuses import award_submission_pay_and_bonus

    campaign = make_campaign(
        trap_rate=1.0, entity_check_enabled=False, trap_min_count=50, redundancy=1, control_min_per_class=1, control_block_threshold=0.0,
        bonus_confidence=0.0,
    )
    for _ in range(2):
        make_document(campaign, summaries=[["Greenvale approved a budget."], ["The council met."]], traps=TRAPS)
    full_weight_traps(campaign)
    worker = make_worker()
    first = request_assignment(worker, campaign)
    submit_assignment(first.pk, worker, answers_for(first))  # both traps right: balanced score 1.0, bonus owed
    second = request_assignment(worker, campaign)
    submit_assignment(second.pk, worker, answers_for(second, trap_right=False))  # now 0.5: no bonus
    bonuses = lambda: sorted(BonusEntry.objects.filter(worker=worker, reason__startswith="item").values_list("assignment_id", "reason"))
    decided = bonuses()
    assert [a for a, _ in decided] == [first.pk] and "balanced control score 1.00" in decided[0][1]
    # A later recomputation with another score changes nothing: the decision belongs to the submission.
    participation = Participation.objects.get(worker=worker, campaign=campaign)
    Participation.objects.filter(pk=participation.pk).update(trap_correct=2, trap_total=2)
    participation.refresh_from_db()
    assert award_submission_pay_and_bonus(participation, second) == []
    assert bonuses() == decided


def test_entity_question_uses_named_entities_of_the_same_kind_computed_once_per_document():
    import random

    from annotate.frank.entities import entity_pool
    from annotate.frank.entities import entity_question as _entity_question

    campaign = make_campaign()
    document = make_document(campaign, negative_entity="the changes")  # a non-entity is never an option
    make_document(campaign, article=["Pedro Alvarez met Laura Chen in Lisbon.", "The Orbis Trust paid for it."])
    pool = entity_pool(document)
    assert {"Helen Carter", "Smith", "Jones"} <= set(pool["present"]["PERSON"])
    assert "the changes" not in str(pool) and {"Pedro Alvarez", "Laura Chen"} <= set(pool["absent"]["PERSON"])
    seen = set()
    for seed in range(30):
        question = _entity_question(document, random.Random(seed))
        absent = question["options"][question["answer"]]
        kind = next(k for k, names in pool["absent"].items() if absent in names)
        assert any(o in pool["present"][kind] for o in question["options"] if o != absent)
        seen.add(tuple(sorted(question["options"])))
    assert len(seen) > 3  # different workers get different options
    # Computed once: kept with the document and reused, not recomputed per request.
    document.refresh_from_db()
    assert document.metadata["entity_pool"] == pool
    Document.objects.filter(pk=document.pk).update(text="Nothing here.")
    document.refresh_from_db()
    assert entity_pool(document) == pool


def test_a_pool_computed_alone_draws_the_same_other_articles_in_every_process():
    """A pool computed alone (a claim of a page not prepared yet) samples ENTITY_POOL_OTHERS of the campaign's other
    articles for its absent names: the draw is seeded by the document, so computing it again (another web process,
    a page prepared again) offers the same names, and the reading-check options shown can be reproduced."""
    from annotate.frank.entities import ENTITY_POOL_KEY, ENTITY_POOL_OTHERS, entity_pool

    campaign = make_campaign()
    document = make_document(campaign, negative_entity="")
    for n in range(ENTITY_POOL_OTHERS + 5):  # their entities stored already: no parse needed to sample them
        other = make_document(campaign, negative_entity="", item=False)
        other.metadata = {ENTITY_POOL_KEY: {"present": {"PERSON": [f"Person Number{n}"]}}}
        other.save(update_fields=["metadata"])
    pools = []
    for _ in range(3):
        Document.objects.filter(pk=document.pk).update(metadata={})
        document.refresh_from_db()
        pools.append(entity_pool(document))
    sampled = [name for name in pools[0]["absent"]["PERSON"] if name.startswith("Person Number")]
    assert len(sampled) == ENTITY_POOL_OTHERS  # a sample, not every other article
    assert pools[1] == pools[0] and pools[2] == pools[0]


def test_pools_computed_alone_parse_each_other_article_once(monkeypatch):
    """A claim of a page not prepared yet computes its pool alone, from the entities of the campaign's other
    articles: one claim after another, each in a web process of its own, parses each article once (the cache
    the web workers share), not once per claim that samples it."""
    from collections import OrderedDict

    from annotate import nlp
    from annotate.frank import entities

    parsed: list[str] = []
    real_get_nlp = nlp.get_nlp

    class CountingPipeline:
        def __init__(self, pipeline):
            self.pipeline = pipeline

        def pipe(self, texts, **options):
            texts = list(texts)
            parsed.extend(texts)
            return self.pipeline.pipe(texts, **options)

        def __call__(self, text):
            parsed.append(text)
            return self.pipeline(text)

    monkeypatch.setattr(nlp, "get_nlp", lambda disable=("ner", "lemmatizer"): CountingPipeline(real_get_nlp(disable)))
    campaign = make_campaign()
    documents = [
        make_document(campaign, article=[f"Pedro Alvarez{n} met Laura Chen in Lisbon.", f"The Orbis Trust paid {n} pounds."],
                      negative_entity="")
        for n in range(4)
    ]
    pools = []
    for document in documents:
        monkeypatch.setattr(nlp, "_article_entities", OrderedDict())  # another web process: nothing parsed in it yet
        pools.append(entities.entity_pool(document))
    assert sorted(parsed) == sorted(document.text for document in documents), "each article parsed once, whichever claims sampled it"
    # The same names as a parse of each article alone.
    for document, pool in zip(documents, pools):
        assert pool["present"] == entities.typed_entities(document.text)
        assert "Laura Chen" in pool["present"].get("PERSON", []) and "Lisbon" in pool["present"].get("GPE", [])


def test_a_batch_of_pages_parses_each_article_once_for_its_pool_and_its_traps_entity_swaps(monkeypatch):
    """Preparing pages parses each article whole once: its entity pool and its fluent traps' entity swaps
    (a shipped word-salad trap is replaced by fluent ones) read the same parse, with the sentences' own spans."""
    from collections import OrderedDict

    from annotate import nlp
    from annotate.frank.prepared import prepare_documents
    from annotate.frank.traps import article_entities

    article = ["Pedro Alvarez met Laura Chen in Lisbon on Monday.", "The Orbis Trust paid 40 pounds to Laura Chen.",
               "Alvarez said the trust would pay again in Madrid."]
    campaign = make_campaign()
    documents = [make_document(campaign, article=article, traps={"F4": "Lisbon pounds the Monday met trust."}) for _ in range(2)]
    monkeypatch.setattr(nlp, "_article_entities", OrderedDict())
    parses: list[str] = []
    real_get_nlp = nlp.get_nlp

    class CountingPipeline:
        def __init__(self, pipeline, disabled):
            self.pipeline, self.disabled = pipeline, disabled

        def pipe(self, texts, **options):
            texts = list(texts)
            parses.extend(t for t in texts if self.disabled == nlp.ENTITIES_DISABLED)
            return self.pipeline.pipe(texts, **options)

        def __call__(self, text):
            if self.disabled == nlp.ENTITIES_DISABLED:
                parses.append(text)
            return self.pipeline(text)

    monkeypatch.setattr(nlp, "get_nlp", lambda disable=("ner", "lemmatizer"): CountingPipeline(real_get_nlp(disable), disable))
    assert prepare_documents(documents) == 2
    assert parses.count(documents[0].text) == 1, parses  # both documents have the same text: one parse
    assert all(text in (documents[0].text, "") or text not in article for text in parses)  # no sentence parsed alone
    assert any(t.code in ("F2", "F3") for t in documents[0].traps.filter(weight__gt=0)), "the swaps had their entities"
    # The sentences' spans from the whole parse are spans of the sentences themselves.
    for sentence, spans in zip(article, nlp.sentence_entities(article, documents[0].text)):
        assert all(sentence[start:end] == words for start, end, _, words in spans)
    assert nlp.sentence_entities(article, "Some other article.") is None
    assert [[s[2] for s in spans] for spans in article_entities(article, documents[0].text)][0][:2] == ["PERSON", "PERSON"]
