"""Pure rules of BUMP edits (annotate/bump/edits.py) and the qualification keys (annotate/bump/content.py)."""
from __future__ import annotations

import json

import pytest

from annotate.bump import content as bump_content
from annotate.bump import lexicon
from annotate.bump.edits import (
    clean_edit,
    comparable,
    edit_hints,
    edit_problems,
    inserted_words,
    tokens,
    word_diff,
    word_edit_distance,
)
from annotate.presentation import present
from taxonomies import bump as bump_taxonomy

REF = "The FDA approved the first Ebola vaccine , made by Merck , on Thursday ."
ARTICLE = "The FDA approved the vaccine made by Merck on Thursday. It was tested in Guinea in 2014."


def one_sentence(text: str) -> int:
    return max(1, text.count(" . ") + text.endswith("."))


@pytest.mark.parametrize(("edited", "distance"), [
    (REF, 0),
    (REF.replace("Merck", "Pfizer"), 1),
    (REF.replace("on Thursday", "in 2014"), 2),
    (REF.replace("first ", ""), 1),
    (REF.replace("approved", "has rejected"), 2),
    ("", 12),  # words only: punctuation is not counted
])
def test_word_edit_distance_counts_changed_words(edited, distance):
    assert word_edit_distance(REF, edited) == distance


def test_word_diff_marks_a_substitution_as_delete_then_insert_and_rebuilds_both_texts():
    edited = REF.replace("Merck", "Pfizer").replace("first ", "")
    diff = word_diff(REF, edited)
    assert ("delete", "Merck") in diff and ("insert", "Pfizer") in diff and ("delete", "first") in diff
    assert diff.index(("delete", "Merck")) + 1 == diff.index(("insert", "Pfizer"))
    rebuilt_ref = " ".join(t for op, t in diff if op != "insert")
    rebuilt_edit = " ".join(t for op, t in diff if op != "delete")
    assert tokens(rebuilt_ref) == tokens(REF) and tokens(rebuilt_edit) == tokens(edited)
    assert word_diff(REF, REF) == [("equal", "The FDA approved the first Ebola vaccine, made by Merck, on Thursday.")]


def test_inserted_words_and_hints_tell_intrinsic_from_extrinsic():
    intrinsic = REF.replace("on Thursday", "in Guinea")
    extrinsic = REF.replace("Merck", "Pfizer")
    assert inserted_words(REF, intrinsic) == ["in", "Guinea"]
    hint = edit_hints(inserted_words(REF, intrinsic), ARTICLE, "intrinsic_circumstance")
    assert (hint.inserted_in_article, hint.likely_kind, hint.disagrees) == (True, "intrinsic", False)
    hint = edit_hints(inserted_words(REF, extrinsic), ARTICLE, "intrinsic_entity")
    assert (hint.inserted_in_article, hint.likely_kind, hint.disagrees) == (False, "extrinsic", True)
    # Case and punctuation do not matter; function words and deletions alone give no hint.
    assert edit_hints(["guinea,"], ARTICLE, "extrinsic_entity").disagrees is True
    assert edit_hints(["the"], ARTICLE, "extrinsic_entity") == edit_hints([], ARTICLE, "")
    assert edit_hints([], ARTICLE).likely_kind == ""
    # Coreference has no intrinsic/extrinsic side: never disagrees.
    assert edit_hints(["Pfizer"], ARTICLE, "coreference").disagrees is False


def test_edit_problems_name_each_rule():
    ok = REF.replace("Merck", "Pfizer")
    assert edit_problems(REF, ok, max_distance=6, count_sentences=one_sentence) == {}
    assert "empty" in edit_problems(REF, "   ", max_distance=6, count_sentences=one_sentence)["edited"]
    assert "same as the original" in edit_problems(REF, REF.replace(" ,", "  ,"), max_distance=6, count_sentences=one_sentence)["edited"]
    long = REF.replace("approved the first Ebola vaccine", "rejected a second untested flu drug today")
    msg = edit_problems(REF, long, max_distance=6, count_sentences=one_sentence)["edited"]
    assert "changes 7 words" in msg and "at most 6" in msg
    added = REF + " It failed ."
    assert "adds a sentence (1 before, 2 after)" in edit_problems(REF, added, max_distance=6, count_sentences=one_sentence)["edited"]
    assert edit_problems(REF, long, max_distance=7, count_sentences=one_sentence) == {}


def test_taxonomy_qualification_is_a_pool_drawn_per_worker_and_attempt_and_scores():
    pool = bump_content.TAXONOMY_POOL
    assert sorted({e.error_type for e in pool}) == sorted(t.code for t in bump_taxonomy.REQUESTABLE)
    assert len({e.edited for e in pool}) == len(pool)  # every edit is different
    for edit in pool:  # every qualification edit is a minimal edit of the reference
        assert 1 <= word_edit_distance(bump_content.TAXONOMY_REFERENCE, edit.edited) <= 6
    tests = [bump_content.taxonomy_test("secret", 1, worker, 0) for worker in range(30)]
    for test in tests:
        types = [e.error_type for e in test.edits]
        assert all(types.count(t.code) == bump_content.TAXONOMY_EDITS_PER_TYPE for t in bump_taxonomy.REQUESTABLE)
    assert len({tuple(e.edited for e in t.edits) for t in tests}) == 30  # another test for every worker
    assert bump_content.taxonomy_test("secret", 1, 7, 0) == tests[7]  # the same on every page load
    assert bump_content.taxonomy_test("secret", 1, 7, 1) != tests[7]  # a new draw per attempt
    assert bump_content.taxonomy_test("other", 1, 7, 0) != tests[7]  # unpredictable without the secret
    test = tests[0]
    right = {f"e{n}": e.error_type for n, e in enumerate(test.edits, start=1)}
    assert bump_content.score_taxonomy(right, test)[0] == 1.0
    other = next(c for c in bump_content.REQUESTABLE_CODES if c != right["e1"])
    score, marks = bump_content.score_taxonomy({**right, "e1": other}, test)
    assert score == pytest.approx(13 / 14) and marks["e1"] is False
    with pytest.raises(bump_content.QualificationAnswerError, match="Edit 2: choose"):
        bump_content.score_taxonomy({"e1": "coreference"}, test)
    with pytest.raises(bump_content.QualificationAnswerError, match="not one of the seven"):
        bump_content.score_taxonomy({**right, "e3": "other"}, test)
    # The public view carries no answer, and shows each edit as a person writes it.
    view = bump_content.taxonomy_public_view(test)
    assert "error_type" not in str(view["edits"]) and [e["edited"] for e in view["edits"]] == [present(e.edited) for e in test.edits]


def test_accuracy_qualification_is_a_pool_and_asks_for_the_error_type():
    tests = [bump_content.accuracy_test("secret", 1, worker, 0) for worker in range(30)]
    for test in tests:
        labels = [s.error_type for s in test.summaries]
        assert labels.count(None) == bump_content.ACCURACY_ACCURATE_PER_TEST
        assert sorted(label for label in labels if label) == sorted(bump_content.REQUESTABLE_CODES)
    assert len({tuple(s.summary for s in t.summaries) for t in tests}) == 30
    test = tests[0]
    right: dict[str, str] = {}
    for n, s in enumerate(test.summaries, start=1):
        right[f"s{n}"] = "yes" if s.error_type is None else "no"
        if s.error_type:
            right[f"s{n}_type"] = s.error_type
    assert bump_content.score_accuracy(right, test)[0] == 1.0
    accurate = next(k for k in right if right[k] == "yes")
    erroneous = next(k for k in right if right[k] == "no")
    assert bump_content.score_accuracy({**right, accurate: "no", f"{accurate}_type": "coreference"}, test)[0] == pytest.approx(10 / 11)
    wrong_type = next(c for c in bump_content.REQUESTABLE_CODES if c != right[f"{erroneous}_type"])
    assert bump_content.score_accuracy({**right, f"{erroneous}_type": wrong_type}, test)[1][erroneous] is False  # "No" alone is not enough
    assert bump_content.score_accuracy({**right, erroneous: "yes"}, test)[1][erroneous] is False
    with pytest.raises(bump_content.QualificationAnswerError, match="choose the error's type"):
        bump_content.score_accuracy({**right, f"{erroneous}_type": ""}, test)
    with pytest.raises(bump_content.QualificationAnswerError, match="Summary 11"):
        bump_content.score_accuracy({k: v for k, v in right.items() if k != "s11"}, test)
    assert "error_type" not in str(bump_content.accuracy_public_view(test)["summaries"])


@pytest.mark.slow
def test_sentence_rule_counts_punctuation_so_a_one_word_edit_never_moves_a_boundary(samples_dir):
    """The parser-based split gave 4 vs 5 sentences for BUMP's reference 3 after changing its first word."""
    from annotate.bump.protocol import count_sentences

    records = json.loads((samples_dir / "bump_task2_sample.json").read_text())
    for record in records:
        reference = record["reference_summary"]
        words = reference.split()
        words[0] = "Officials"
        edited = " ".join(words)
        assert edit_problems(reference, edited, max_distance=6, count_sentences=count_sentences) == {}, record["id"]
        added = reference + " Officials denied it ."
        assert "adds a sentence" in edit_problems(reference, added, max_distance=6, count_sentences=count_sentences)["edited"]
    assert count_sentences("The U.S. agency approved it on Jan. 5 . It was late .") == 2


def test_a_diff_reads_as_text_never_as_tokens():
    reference = "Mary was a 19-year-old operator at the time . Karo claimed 'hats' ( red ) for $5,000 ."
    edited = "Mary was a 20-year-old operator at the time. Karo claimed 'hats' (red) for $5,000."
    assert word_diff(reference, edited) == [
        ("equal", "Mary was a"), ("delete", "19-year-old"), ("insert", "20-year-old"),
        ("equal", "operator at the time. Karo claimed 'hats' (red) for $5,000."),
    ]
    assert word_edit_distance(reference, edited) == 1


ARTICLE_EBOLA = ("The Food and Drug Administration approved the first Ebola vaccine on Thursday. The vaccine, made by Merck, "
                 "was tested during the 2014 outbreak in Guinea, where 1,000 people were vaccinated.")


def _problem(edited: str, reference: str = REF) -> str:
    return edit_problems(reference, edited, max_distance=6, count_sentences=one_sentence, context=ARTICLE_EBOLA).get("edited", "")


@pytest.mark.parametrize(("edited", "reference", "reason"), [
    # A homoglyph: Cyrillic е for e, identical on screen.
    (REF.replace("The FDA", "Th\u0435 FDA"), REF,
     "changes nothing once these are ignored: letters of another alphabet that look like Latin ones (Cyrillic '\u0435'"),
    (REF.replace("Merck", "M\u0435rck").replace("Thursday", "Friday"), REF, "types letters of another alphabet that look like Latin ones"),
    (REF.replace("FDA", "F\u0414A"), REF, "letters of several alphabets in 'F\u0414A'"),
    (REF.replace("Merck", "Mer\u200bck"), REF, "changes nothing once these are ignored: invisible characters (zero-width space)"),
    (REF.replace("vaccine", "vac\u00adcine"), REF, "changes nothing once these are ignored: invisible characters (soft hyphen)"),
    (REF.replace("Merck", "\uff2d\uff45\uff52\uff43\uff4b"), REF, "variants of the same character (full-width letters"),
    (REF.replace("Merck", "MERCK"), REF, "changes nothing once these are ignored: capital letters ('MERCK' for 'Merck')"),
    (REF.replace("Merck", "Merk"), REF, "looks like a typo ('Merck' \u2192 'Merk' is not a word)"),
    (REF.replace("Thursday", "Thrusday"), REF, "looks like a typo ('Thursday' \u2192 'Thrusday' is not a word)"),
    ("Guinea vaccinated 1.000 people .", "Guinea vaccinated 1,000 people .",
     "only changes punctuation or spacing inside a word or number ('1,000' \u2192 '1.000')"),
    (REF.replace("FDA", "EMA").replace("Thursday", "Friday"), REF,
     "changes 2 places far apart ('FDA' \u2192 'EMA' and 'Thursday' \u2192 'Friday'): introduce one error, in one place"),
    (REF.replace("the first", "a first"), REF, "only changes an article ('the' \u2192 'a')"),
])
def test_edits_that_change_nothing_a_reader_sees_or_no_real_word_are_refused_with_their_reason(edited, reference, reason):
    assert reason in _problem(edited, reference)


@pytest.mark.parametrize(("edited", "reference"), [
    (REF.replace("Merck", "Pfizer"), REF),  # an entity substitution (extrinsic)
    (REF.replace("FDA", "EMA"), REF),  # a short entity: two letters of three are no typo
    (REF.replace("Merck", "Guinea"), REF),  # an entity from the article (intrinsic)
    (REF.replace("approved", "rejected"), REF),  # a predicate change
    (REF.replace("approved", "did not approve"), REF),  # a negation
    (REF.replace("Thursday", "Friday"), REF),  # a circumstance
    ("Pfizer beat Merck in the final on Thursday .", "Merck beat Pfizer in the final on Thursday ."),  # a swap is one change
    ("He said she had won .", "He said he had won ."),  # a coreference error
    ("Guinea vaccinated 1,500 people .", "Guinea vaccinated 1,000 people ."),  # a number
    (REF.replace("Merck", "M\u200berck").replace("approved", "rejected"), REF),  # invisible characters removed
])
def test_a_real_one_place_edit_is_accepted(edited, reference):
    assert _problem(edited, reference) == ""


def test_an_accepted_edit_is_stored_clean_and_compared_without_case_or_lookalikes():
    assert clean_edit("Pfi\u200bzer \uff2dade  it") == "Pfizer Made it"
    assert comparable("Th\u0435 FDA") == comparable("the fda") == "the fda"
    assert lexicon.is_english_word("approves") and lexicon.is_english_word("19-year-old") and not lexicon.is_english_word("Thrusday")
