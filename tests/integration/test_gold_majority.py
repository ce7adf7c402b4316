"""Gold from imported judgements follows the one sentence-majority rule with its tie rule "none": a sentence
its annotators split evenly on gets no gold (a worker answering either way would be scored against a coin),
where the summary scores and statistics count the same tie as factual."""
from __future__ import annotations

import pytest

from annotate.models import GoldLabel, JudgementSource, SentenceJudgement, Summary
from annotate.services.gold import gold_from_imported_labels
from metrics_service.stats.majority import majority_label
from tests.factories import make_campaign, make_document, make_worker

pytestmark = pytest.mark.django_db


def test_an_even_split_of_imported_judgements_gives_no_gold_while_the_scores_count_it_factual():
    campaign = make_campaign()
    document = make_document(campaign, summaries=[["The council approved a budget.", "It funds three schools.", "Carter spoke."]])
    summary = Summary.objects.get(document=document)
    workers = [make_worker() for _ in range(4)]
    votes = {0: [True, True, False, False], 1: [True, True, True, False], 2: [False, False, True, False]}
    for index, answers in votes.items():
        for worker, factual in zip(workers, answers):
            SentenceJudgement.objects.create(summary=summary, sentence_index=index, worker=worker, factual=factual,
                                             categories=[] if factual else ["EntE"], source=JudgementSource.IMPORTED)
    assert gold_from_imported_labels(campaign) == 2
    gold = {g.sentence_index: (g.factual, g.category) for g in GoldLabel.objects.filter(summary=summary)}
    assert gold == {1: (True, ""), 2: (False, "EntE")}  # the 2-2 split of sentence 0 is no label
    assert majority_label(2, 4) is True and majority_label(2, 4, tie="none") is None
    assert campaign.items.get().is_control


def test_gold_is_numbered_in_sentence_order_whatever_order_the_judgements_came_in():
    # Gold ids order the control page's predictability halvings and the exports: they must follow the data
    # (summary, then sentence), not the order in which rows were written or happen to lie in the table.
    campaign = make_campaign()
    document = make_document(campaign, summaries=[["A one.", "A two.", "A three."], ["B one.", "B two."]])
    summaries = list(Summary.objects.filter(document=document).order_by("pk"))
    workers = [make_worker() for _ in range(3)]
    for summary in reversed(summaries):
        for index in reversed(range(len(summary.sentences))):
            for worker in workers:
                SentenceJudgement.objects.create(summary=summary, sentence_index=index, worker=worker, factual=index % 2 == 0,
                                                 categories=[] if index % 2 == 0 else ["EntE"], source=JudgementSource.IMPORTED)
    assert gold_from_imported_labels(campaign) == 5
    numbered = list(GoldLabel.objects.filter(summary__document=document).order_by("pk").values_list("summary_id", "sentence_index"))
    assert numbered == sorted(numbered) == [(s.pk, i) for s in summaries for i in range(len(s.sentences))]
