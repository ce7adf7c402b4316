"""Error traps read as fluent text: a word-order rule cannot spot them as it spots FRANK's word salad."""
from __future__ import annotations

import pytest

from annotate.frank.prepared import prepared_page
from annotate.frank.traps import FLUENT_TRAPS_FLAG, make_error_traps_fluent
from annotate.models import Document, Trap
from benchmarks.trap_fluency import corpus_sets, measure
from benchmarks.trap_style_auc import load_articles
from tests.factories import ARTICLE, make_campaign, make_document

SHIPPED = {
    "F1": "there has not n't been a vote on the budget.",  # a doubled negation, as FRANK ships some
    "F4": "the museum in oslo reopened after a long renovation last week.",  # another article
    "F5": "budget the approved council monday new greenvale.",  # word salad
    "F6": "Carter said he expects the schools to open in 2026.",
}


@pytest.mark.django_db
def test_spotted_shipped_traps_give_way_to_fluent_ones_once():
    document = make_document(make_campaign(), traps=SHIPPED)
    made = make_error_traps_fluent(document, seed=0)
    traps = {t.code: t for t in Trap.objects.filter(document=document, weight__gt=0)}
    # Word salad, the other article and the doubled negation are gone; the pronoun swap stays.
    assert traps["F6"].text == SHIPPED["F6"] and "F4" not in traps and "F5" not in traps
    assert set(traps) == {"F1", "F2", "F3", "F6"} and {t.code for t in made} == {"F1", "F2", "F3"}
    assert "n't" not in traps["F1"].text and " not " in traps["F1"].text
    for trap in made:
        # An article sentence with one fact made false: fluent, not the article's own sentence.
        assert trap.text not in ARTICLE and not trap.expected_factual
        assert trap.text[:1].isupper() and trap.text.endswith(".")
    assert traps["F2"].expected_category == "EntE" and traps["F3"].expected_category == ""
    assert any(name in traps["F2"].text for name in ("Greenvale", "Helen Carter", "Carter", "Smith", "Jones"))
    assert Document.objects.get(pk=document.pk).metadata[FLUENT_TRAPS_FLAG]
    assert make_error_traps_fluent(document) == [] and Trap.objects.filter(document=document).count() == 4


@pytest.mark.django_db
def test_a_prepared_page_shows_no_word_salad():
    document = make_document(make_campaign(trap_rate=1.0), traps={"F5": SHIPPED["F5"], "F4": SHIPPED["F4"]})
    shown = [row["text"] for row in prepared_page(document)["traps"]]
    assert shown and SHIPPED["F5"] not in shown and SHIPPED["F4"] not in shown
    assert set(Trap.objects.filter(document=document, weight__gt=0).values_list("code", flat=True)) <= {"F0", "F1", "F2", "F3", "F6"}


def test_a_fluency_rule_spots_frank_word_salad_but_not_the_traps_shown_now(frank_dir):
    result = measure(corpus_sets(load_articles(frank_dir, 80)))
    # The rule may flag 5% of genuine summary sentences; at that rate it finds half of the word salad (53% on
    # this sample, 61% on all of FRANK) ...
    assert result["word_salad_spotted"] >= 0.45
    assert result["before_spotted"] >= 0.12
    # ... and the error traps shown now no more often than genuine sentences, give or take sampling.
    assert result["after_spotted"] <= 0.08
    assert result["before_spotted"] - result["after_spotted"] >= 0.08
