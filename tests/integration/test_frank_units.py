"""Pure pieces of the FRANK workflow: tutorial feedback, qualification scoring, aggregation, traps, relevance, providers."""
from __future__ import annotations

import random
import re

import pytest
from django.test import RequestFactory

from annotate.frank import content as frank_content
from annotate.frank.protocol import score_qualification, tutorial_feedback
from annotate.frank.relevance import relevant_sentences
from annotate.frank.traps import article_entities, doubled_negation, generate_traps, negate, swap_entity, swap_number, swap_pronouns
from annotate.models import SentenceJudgement, Trap
from annotate.providers import (
    ArrivalError,
    CrowdProgress,
    MTurkProvider,
    ProlificProvider,
    detect_provider,
)
from annotate.selectors import majority, summary_factuality
from annotate.services.errors import InvalidSubmission
from tests.factories import make_campaign, make_document, make_worker


def key_answers(exercise, *, flip: int = 0) -> dict:
    """The right answers, with the first ``flip`` sentences answered wrongly."""
    rows, k = [], 0
    for summary in exercise.summaries:
        row = []
        for key in summary:
            right = {"factual": key.factual, "categories": [] if key.factual else [key.category]}
            if k < flip:
                right = {"factual": False, "categories": ["OtherE" if key.category != "OtherE" else "EntE"]}
            row.append(right)
            k += 1
        rows.append(row)
    return {"summaries": rows}


def test_tutorial_and_qualification_cover_every_category():
    for exercise in (frank_content.TUTORIAL, frank_content.QUALIFICATION):
        categories = {k.category for s in exercise.summaries for k in s}
        assert {"RelE", "EntE", "CircE", "CorefE", "LinkE", "OutE", "GramE", "OtherE", None} <= categories


def test_tutorial_feedback_explains_a_wrong_category():
    # Summary 2, sentence 4 is the coreference error ('him' has no antecedent).
    wrong = tutorial_feedback(1, 3, False, ["EntE"])
    assert wrong["correct"] is False and "coreference error" in wrong["message"] and "'him' has no antecedent" in wrong["message"]
    assert tutorial_feedback(1, 3, True, [])["correct"] is False
    assert tutorial_feedback(1, 3, False, ["CorefE"])["correct"] is True
    assert tutorial_feedback(0, 0, True, [])["correct"] is True
    assert "this sentence is correct" in tutorial_feedback(0, 0, False, ["OutE"])["message"]
    with pytest.raises(IndexError):
        tutorial_feedback(5, 0, True, [])


def test_public_view_has_no_key():
    view = str(frank_content.public_view(frank_content.QUALIFICATION))
    assert "CorefE" not in view and "category" not in view and "explanation" not in view


def test_qualification_score_is_share_of_correct_sentences():
    size = frank_content.QUALIFICATION.size
    assert score_qualification(key_answers(frank_content.QUALIFICATION))[0] == 1.0
    score, marks = score_qualification(key_answers(frank_content.QUALIFICATION, flip=2))
    assert score == pytest.approx((size - 2) / size) and marks[:2] == [False, False]
    # One rule with the tutorial: "every kind of error that applies" -- the right category among at most two
    # selected is right (RelE+EntE where EntE is right); ticking three or more is refused.
    answers = key_answers(frank_content.QUALIFICATION)
    second = "RelE" if answers["summaries"][0][1]["categories"] != ["RelE"] else "EntE"
    answers["summaries"][0][1]["categories"].append(second)
    assert score_qualification(answers)[0] == 1.0
    answers["summaries"][0][1]["categories"].append("OtherE")  # a third: refused, as a task answer is
    with pytest.raises(InvalidSubmission, match="summary 1, sentence 2: select at most 2 error categories"):
        score_qualification(answers)
    with pytest.raises(InvalidSubmission, match="summary 1: answer all 4 sentences"):
        score_qualification({"summaries": [[], [], []]})


def test_majority_is_strict():
    assert majority([True, True, False]) and not majority([True, False]) and not majority([])


@pytest.mark.django_db
def test_summary_factuality_uses_majority_per_sentence_and_category():
    campaign = make_campaign()
    document = make_document(campaign, summaries=[["s0", "s1"]])
    summary = document.summaries.get()
    workers = [make_worker() for _ in range(3)]
    votes = {  # sentence 0: 2 of 3 say EntE; sentence 1: 1 of 3 says OutE (no majority)
        0: [(False, ["EntE"]), (False, ["EntE", "OutE"]), (True, [])],
        1: [(False, ["OutE"]), (True, []), (True, [])],
    }
    for index, answers in votes.items():
        for worker, (factual, categories) in zip(workers, answers):
            SentenceJudgement.objects.create(summary=summary, sentence_index=index, worker=worker, factual=factual, categories=categories)
    scores = summary_factuality([summary.pk])[summary.pk]
    assert scores["Factuality"] == 0.5
    assert scores["EntE"] == 0.5 and scores["OutE"] == 1.0 and scores["RelE"] == 1.0
    assert scores["sentences"] == 2 and scores["annotators"] == 3
    assert summary_factuality([]) == {}


def test_trap_transformations():
    assert negate("The striker was injured in May.") == "The striker was not injured in May."
    assert negate("Lopez scored twice.") == "Lopez did not score twice."
    assert swap_pronouns("He said his team won.") == "She said her team won."
    assert swap_pronouns("The team won.") is None
    assert doubled_negation("there has not n't really been a hold-up.") and not doubled_negation("It has not been easy.")


def test_swaps_make_one_fact_false_with_the_article_own_words():
    sentence = "Lopez scored twice as Paris beat Lyon 3-1 in Madrid."
    spans = article_entities([sentence])[0]
    pool = {"GPE": ["Paris", "Lyon", "Madrid", "Marseille"], "PERSON": ["Lopez", "Anne Dupont"], "CARDINAL": ["3-1", "2-0"]}
    for seed in range(5):
        swapped = swap_entity(sentence, spans, pool, random.Random(seed))
        assert swapped is not None and swapped != sentence
        # One name exchanged for another of the same kind that the sentence did not hold.
        assert len(swapped.split()) == len(sentence.split()) + ("Anne Dupont" in swapped)
        assert {"Marseille", "Anne Dupont"} & set(re.findall(r"Marseille|Anne Dupont", swapped))
    numbered = swap_number("The 39-year-old joined the club in 2019.", article_entities(["The 39-year-old joined the club in 2019."])[0],
                           {}, random.Random(0))
    assert numbered is not None and numbered != "The 39-year-old joined the club in 2019."
    assert re.fullmatch(r"The \d+-year-old joined the club in \d{4}\.", numbered)
    assert swap_number("Lopez scored twice.", [], {}, random.Random(0)) is None


@pytest.mark.django_db
def test_generate_traps_for_new_documents():
    campaign = make_campaign()
    make_document(campaign, item=False, article=["The museum in Oslo reopened after a long renovation last week."])
    document = make_document(campaign)
    traps = {t.code: t for t in generate_traps(document, seed=1)}
    # No word salad and no sentence of another article: every error trap is an article sentence with one fact made false.
    assert set(traps) == {"F0", "F1", "F2", "F3", "F6"}
    assert traps["F0"].text in document.sentences and traps["F0"].expected_factual
    assert " not " in traps["F1"].text and traps["F1"].expected_category == "RelE"
    assert traps["F2"].expected_category == "EntE" and traps["F3"].expected_category == ""
    assert traps["F6"].expected_category == "CorefE"
    assert "he " in traps["F6"].text.lower() or "his" in traps["F6"].text.lower()
    assert not any("Oslo" in t.text for t in traps.values())
    assert not {t.text for t in traps.values() if t.code != "F0"} & set(document.sentences)
    # Idempotent: documents with traps keep them.
    assert len(generate_traps(document)) == 5 and Trap.objects.filter(document=document).count() == 5


def test_relevance_ranks_by_lexical_similarity():
    article = ["The council approved the budget.", "Schools will open in 2026.", "It rained on Monday."]
    assert relevant_sentences(article, ["The budget was approved by the council", "Rain fell Monday"], 1) == [[0], [2]]
    # One rule for every sentence: always k underlines, even with no word in common (no sentence stands out).
    assert relevant_sentences(article, ["zebra"], 2) == [[0, 1]]
    assert relevant_sentences(article, ["the"], 5) == [[0, 1, 2]]
    assert relevant_sentences(article, ["budget"], 0) == [[]]


def test_providers_detect_and_name_workers():
    rf = RequestFactory()
    prolific = rf.get("/c/x/", {"PROLIFIC_PID": "p1", "STUDY_ID": "s", "SESSION_ID": "ss"})
    assert isinstance(detect_provider(prolific), ProlificProvider)
    arrival = ProlificProvider().worker_identity(prolific)
    assert (arrival.worker_id, arrival.context["session_id"]) == ("p1", "ss")
    mturk = rf.get("/c/x/", {"workerId": "W1", "assignmentId": "A1", "hitId": "H", "turkSubmitTo": "https://workersandbox.mturk.com"})
    arrival = MTurkProvider().worker_identity(mturk)
    assert arrival.worker_id == "W1" and not arrival.preview
    completion = MTurkProvider().completion(arrival.context, make_campaign_stub(), CrowdProgress(items_done=1, screened_out=False))
    assert completion.url == "https://workersandbox.mturk.com/mturk/externalSubmit" and completion.fields["assignmentId"] == "A1"
    preview = rf.get("/c/x/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H"})
    assert MTurkProvider().worker_identity(preview).preview
    with pytest.raises(ArrivalError, match="turkSubmitTo parameter is not an MTurk address"):
        MTurkProvider().worker_identity(rf.get("/c/x/", {"workerId": "W", "assignmentId": "A", "turkSubmitTo": "https://evil.example"}))
    with pytest.raises(ArrivalError, match="PROLIFIC_PID parameter is missing"):
        ProlificProvider().worker_identity(rf.get("/c/x/", {"PROLIFIC_PID": ""}))
    assert detect_provider(rf.get("/c/x/")) is None


def make_campaign_stub():
    from annotate.models import Campaign

    return Campaign(slug="stub", name="stub", prolific_completion_code="C0DE")


def test_prolific_completion_url():
    completion = ProlificProvider().completion({}, make_campaign_stub(), CrowdProgress(items_done=1, screened_out=False))
    assert completion.url == "https://app.prolific.com/submissions/complete?cc=C0DE"


def test_entity_question_options_leave_out_garbled_phrases():
    from annotate.frank.entities import _clear_options

    options = _clear_options(["the blonde Filipino' Ms Moon", "type 2 diabetes", "Helen Carter", '"It\'s a brilliant', "a very long noun phrase of many words"])
    assert options == ["Helen Carter", "type 2 diabetes"]


@pytest.mark.parametrize("option, shown", [
    ("the Sunday Times", "Sunday Times"), ("Helen Carter", "Helen Carter"), ("University of Sheffield", "University of Sheffield"),
    ("2014 World Cup", "2014 World Cup"),
    ("Exercise", None),  # the article writes "exercise": a common word
    ("Det", None), ("VAT", None),  # abbreviations a reader cannot place
    ("royal bank of scotland", None), ("veterans", None), ("306million Without", None),
])
def test_reading_check_options_are_names_a_reader_recognises(option, shown):
    from annotate.frank.entities import recognisable

    article = "Helen Carter said the exercise at the University of Sheffield was like the 2014 World Cup, the Sunday Times said."
    assert recognisable(option, article) == shown
