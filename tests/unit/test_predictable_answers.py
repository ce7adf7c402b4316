"""The predictable-answers rule on answer tables says what it says one answer at a time: the same evidence, word
for word, as the rule's definition applied to each answer in turn, on answer sets a page rule and readers give."""
from __future__ import annotations

import random

from annotate.services.predictable_answers import (
    ALMOST_PERFECT,
    FEATURES,
    FOLLOWS_RULE_SHARE,
    MIN_ANSWERS_PER_CLASS,
    MIN_CONTRADICTED,
    Answer,
    AnswerTable,
    predictable_evidence,
    rule_fits,
)


def evidence_one_answer_at_a_time(answers: list[Answer]) -> str | None:
    """The rule's definition, answer by answer (the fits come from the same rule fitter)."""
    yes = sum(a.factual for a in answers)
    if min(yes, len(answers) - yes) < MIN_ANSWERS_PER_CLASS:
        return None
    for fit in sorted(rule_fits(AnswerTable.of(answers)), key=lambda f: -f.score):
        if fit.score < ALMOST_PERFECT:
            return None
        column = FEATURES.index(fit.feature)
        contradicted = [a for a in answers if a.known is not None and fit.predicts(a.features[column]) != a.known]
        as_rule = sum(fit.predicts(a.features[column]) == a.factual for a in contradicted)
        if len(contradicted) >= MIN_CONTRADICTED and as_rule >= FOLLOWS_RULE_SHARE * len(contradicted):
            return (f"predictable answers: a page feature predicts them, not the reading: {fit.describe()}; where the rule "
                    f"contradicts the known label ({len(contradicted)} sentences) the worker answered as the rule on {as_rule}")[:300]
    return None


def random_answers(rng: random.Random) -> list[Answer]:
    answers = []
    threshold = rng.choice([0.5, 0.7, 0.9])
    kind = rng.choice(["rule", "reader", "noisy rule"])
    for _ in range(rng.randint(5, 400)):
        features = (round(rng.random(), 3), float(rng.randint(3, 40)), float(rng.randint(0, 4)), float(rng.randint(1, 5)))
        label = rng.random() < 0.6
        known = rng.choice([None, None, label])
        if kind == "rule":
            factual = features[0] >= threshold
        elif kind == "noisy rule":
            factual = (features[0] >= threshold) != (rng.random() < 0.02)
        else:
            factual = label if rng.random() < 0.9 else not label
        answers.append(Answer(factual, features, known))
    return answers


def test_the_table_gives_the_evidence_of_the_rule_applied_one_answer_at_a_time():
    rng = random.Random(11)
    held = 0
    for _ in range(400):
        answers = random_answers(rng)
        expected = evidence_one_answer_at_a_time(answers)
        assert predictable_evidence(answers) == expected
        assert predictable_evidence(AnswerTable.of(answers)) == expected
        held += expected is not None
    assert 20 < held < 380  # both outcomes were compared


def test_a_table_gives_back_its_answers():
    answers = random_answers(random.Random(3))
    assert AnswerTable.of(answers).answers() == answers
    assert AnswerTable.of([]).answers() == [] and len(AnswerTable.of([])) == 0


def test_the_rules_of_all_columns_at_once_are_each_column_s_best_by_definition():
    # Every (threshold, direction) of a column scored in turn, one answer at a time: the rule found for each column
    # scores the best there is there, and says its own score.
    import numpy as np

    from annotate.services.predictable_answers import best_threshold_rules

    def score_of(values, factual, threshold, above):
        predicted = [(value >= threshold) == above for value in values]
        recalls = [sum(guess == truth for guess, truth in zip(predicted, factual) if truth == label) / factual.count(label)
                   for label in (True, False)]
        return sum(recalls) / 2

    rng = random.Random(5)
    for _ in range(200):
        count = rng.randint(2, 30)
        values = np.array([[rng.randint(0, 4), round(rng.random(), 1), rng.random(), 1.0] for _ in range(count)])
        factual = [rng.random() < 0.6 for _ in range(count)]
        rules = best_threshold_rules(values, factual)
        assert len(rules) == 4
        if len(set(factual)) < 2:
            assert rules == [(0.5, 0.0, True)] * 4
            continue
        for column, (score, threshold, above) in enumerate(rules):
            column_values = values[:, column].tolist()
            best = max(score_of(column_values, factual, t, a) for t in set(column_values) for a in (True, False))
            assert abs(score - max(best, 0.5)) < 1e-12, (column_values, factual)
            if score > 0.5:
                assert abs(score_of(column_values, factual, threshold, above) - score) < 1e-12
