"""Pure rules of BUMP edits (annotate/bump/edits.py) and the qualification keys (annotate/bump/content.py)."""
from __future__ import annotations

import json

import pytest

from annotate.bump import content as bump_content
from annotate.bump import taxonomy as bump_taxonomy
from annotate.bump.edits import (
    edit_hints,
    edit_problems,
    inserted_words,
    word_diff,
    word_edit_distance,
)

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
    assert rebuilt_ref.split() == REF.split() and rebuilt_edit.split() == edited.split()
    assert word_diff(REF, REF) == [("equal", REF)]


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


def test_taxonomy_qualification_key_covers_each_type_once_and_scores():
    assert sorted(e.error_type for e in bump_content.TAXONOMY_EDITS) == sorted(t.code for t in bump_taxonomy.REQUESTABLE)
    # Every qualification edit is a minimal edit of the reference.
    for edit in bump_content.TAXONOMY_EDITS:
        assert 1 <= word_edit_distance(bump_content.TAXONOMY_REFERENCE, edit.edited) <= 6
    right = {e.id: e.error_type for e in bump_content.TAXONOMY_EDITS}
    assert bump_content.score_taxonomy(right)[0] == 1.0
    wrong = {**right, "q1": "extrinsic_circumstance"}
    score, marks = bump_content.score_taxonomy(wrong)
    assert score == pytest.approx(6 / 7) and marks["q1"] is False
    with pytest.raises(bump_content.QualificationAnswerError, match="Edit 2: choose"):
        bump_content.score_taxonomy({"q1": "coreference"})
    with pytest.raises(bump_content.QualificationAnswerError, match="not one of the seven"):
        bump_content.score_taxonomy({**right, "q3": "other"})
    # The public view carries no answer.
    assert "error_type" not in str(bump_content.taxonomy_public_view()["edits"])


def test_accuracy_qualification_scores_all_four():
    right = {p.id: "yes" if p.accurate else "no" for p in bump_content.ACCURACY_PAIRS}
    assert len(right) == 4 and bump_content.score_accuracy(right) == (1.0, dict.fromkeys(right, True))
    assert bump_content.score_accuracy({**right, "a1": "no"})[0] == 0.75
    with pytest.raises(bump_content.QualificationAnswerError, match="Pair 4"):
        bump_content.score_accuracy({k: v for k, v in right.items() if k != "a4"})
    assert "accurate" not in str(bump_content.accuracy_public_view())


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
