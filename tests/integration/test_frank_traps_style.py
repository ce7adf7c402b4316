"""Traps cannot be told from genuine summary sentences by their look."""
from __future__ import annotations

import random

import pytest

from annotate.frank.page import choose_traps, present_page, repeats_visible
from annotate.presentation import detokenize, style_like
from benchmarks.trap_style_auc import (
    cross_validated_auc,
    default_frank_dir,
    load_articles,
    page_rows,
)


def test_detokenize_joins_corpus_tokens_and_leaves_plain_text_alone():
    assert detokenize("study 's author , dr kujala could n't go .") == "study's author, dr kujala couldn't go."
    assert detokenize("he said \" hello \" ( today ) .") == 'he said “hello” (today).'
    plain = "The council's budget, approved on Monday, wasn't final."
    assert detokenize(plain) == plain


def test_a_trap_takes_its_summary_style():
    lower = ["gary locke will be confirmed as manager."]
    assert style_like("Locke replaced Allan Johnston in February", lower, {}) == "locke replaced allan johnston in february."
    cased = ["Gary Locke will be confirmed as manager!"]
    casing = {"locke": "Locke", "allan": "Allan", "johnston": "Johnston", "february": "February"}
    assert style_like("locke replaced allan johnston in february .", cased, casing) == "Locke replaced Allan Johnston in February!"
    assert style_like("it was fine.", ["no final punctuation here"], {}) == "it was fine"


def test_every_shown_sentence_gets_the_same_number_of_underlines():
    article = ["The council approved the budget .", "Schools will open in 2026 .", "It rained on Monday ."]
    shown_article, pages = present_page(article, [["the council approved it ."]], ["zebras dance at night ."], 2)
    assert shown_article[0] == "The council approved the budget."
    # A lower-case summary is truecased, and its trap with it.
    assert [s["text"] for s in pages[0]] == ["The council approved it.", "Zebras dance at night."]
    assert [len(s["relevant"]) for s in pages[0]] == [2, 2]


def test_no_trap_repeats_a_visible_sentence_up_to_its_edit():
    page = [["the mayor was re-elected on sunday ."], ["he thanked his voters ."]]
    assert repeats_visible("the mayor was not re-elected on sunday.", page[0])
    assert repeats_visible("she thanked her voters.", page[1])
    assert repeats_visible("voters his thanked he.", page[1])
    assert not repeats_visible("the bridge will close for repairs in may.", page[0] + page[1])
    # An unedited copy may resemble a shown sentence, but not be identical to it.
    assert repeats_visible("The mayor was re-elected on Sunday.", page[0], edited=False)
    assert not repeats_visible("the mayor was re-elected on sunday by a wide margin.", page[0], edited=False)
    traps = [(1, "the mayor was not re-elected on sunday .", True), (2, "she thanked her voters .", True),
             (3, "the bridge will close for repairs in may .", True)]
    for seed in range(20):
        assert choose_traps(page, traps, [0, 1], random.Random(seed)) in ({0: 3}, {1: 3})


def test_a_style_classifier_cannot_separate_traps_on_a_frank_sample():
    articles = load_articles(default_frank_dir(), 120)
    before = cross_validated_auc(*_style_only(*page_rows(articles, "before")))
    after = cross_validated_auc(*_style_only(*page_rows(articles, "after")))
    assert max(before.values()) > 0.7  # the old page gave traps away
    assert max(after.values()) <= 0.6  # the bound (0.569 on all 499 articles)
    assert max(after.values()) < max(before.values()) - 0.2


def _style_only(X, y, groups):
    return X[:, :-1], y, groups


def test_summary_like_article_sentences_become_factual_copy_traps_once(db):
    from annotate.frank.protocol import build_layout
    from annotate.models import Trap
    from tests.factories import ARTICLE, make_campaign, make_document

    campaign = make_campaign(trap_rate=1.0)
    article = ["The city council of Greenvale, a town of 20,000 people, approved a new budget on Monday.", *ARTICLE[1:]]
    document = make_document(campaign, article=article, summaries=[["The council of Greenvale approved a budget on Monday."]],
                             traps={"F1": "Carter did not say it."})
    for seed in range(3):
        build_layout(document, 1.0, random.Random(seed))
    # The summary-like sentences, restated so that none is a sentence of the article (a reader would spot a
    # copy); those with nothing to leave out ("Carter said she expects the schools to open in 2026.") are no trap.
    copies = Trap.objects.filter(document=document, code="F0")
    assert [(t.text, t.expected_factual) for t in copies] == [("The city council of Greenvale approved a new budget on Monday.", True)]
    assert not set(copies.values_list("text", flat=True)) & set(document.sentences)


RESTATED = [
    ("Gary Locke, 39, will be confirmed as Kilmarnock manager on Friday.", "Gary Locke will be confirmed as Kilmarnock manager on Friday."),
    ("Mayor Helen Carter, who was elected in 2019, said the budget includes money for three new schools.",
     "Mayor Helen Carter said the budget includes money for three new schools."),
    ("On Thursday, the 39-year-old paid tribute to the players at the club.", "The 39-year-old paid tribute to the players at the club."),
    ("The city council of Greenvale approved a new budget on Monday.", None),  # nothing can go
    ("He met Helen Carter, the mayor.", None),  # too short once restated
]


@pytest.mark.parametrize("sentence, restated", RESTATED)
def test_a_copied_sentence_is_restated_as_a_shorter_sentence_it_entails(sentence, restated):
    from annotate.frank.traps import restate

    assert restate(sentence) == restated


def test_a_documents_copies_restated_together_read_as_each_restated_alone():
    from annotate.frank.traps import restate_many

    assert restate_many([sentence for sentence, _ in RESTATED]) == [restated for _, restated in RESTATED]
    assert restate_many([]) == []
