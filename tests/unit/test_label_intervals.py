"""The interval of a sentence label says what is known of the workers who judged it, not only how many."""
from __future__ import annotations

import numpy as np

from metrics_service.stats.label_aggregation import worker_aware_interval


def _history(worker: int, yes_sentences: int, no_sentences: int, says_yes_to_no: float, start: int):
    """A worker's judgements of known sentences: right on every "yes" sentence, "yes" on a share of the "no" ones."""
    tasks = list(range(start, start + yes_sentences + no_sentences))
    labels = [True] * yes_sentences + [False] * no_sentences
    votes = [True] * yes_sentences + [i < round(says_yes_to_no * no_sentences) for i in range(no_sentences)]
    return tasks, labels, votes, [worker] * len(tasks)


def _interval_of_one_agreed_label(history_size: int, says_yes_to_no: float = 0.1) -> tuple[float, float]:
    tasks, labels, votes, workers = [], [], [], []
    for worker in (1, 2):
        t, label, v, w = _history(worker, 3 * history_size // 4, history_size // 4, says_yes_to_no, start=(worker - 1) * history_size)
        # both workers judge the same sentences: the history's labels are the ones they agree on
        tasks += [x - (worker - 1) * history_size for x in t]
        labels = label
        votes += v
        workers += w
    probe = len(labels)
    labels = np.array([*labels, True])
    posterior = np.full(len(labels), 0.95)
    tasks += [probe, probe]
    votes += [True, True]
    workers += [1, 2]
    low, high = worker_aware_interval(labels, posterior, np.array(tasks), np.array(votes), np.array(workers))
    return float(low[probe]), float(high[probe])


def test_two_veterans_agreeing_give_a_narrower_interval_than_two_newcomers():
    veterans, newcomers = _interval_of_one_agreed_label(400), _interval_of_one_agreed_label(8)
    assert veterans[1] - veterans[0] < newcomers[1] - newcomers[0]
    assert newcomers[0] < veterans[0]


def test_a_yes_from_workers_who_say_yes_to_everything_counts_for_little():
    discerning = _interval_of_one_agreed_label(200, says_yes_to_no=0.1)
    yes_sayers = _interval_of_one_agreed_label(200, says_yes_to_no=0.9)
    assert yes_sayers[0] < discerning[0] - 0.2


def test_the_interval_holds_the_models_posterior_and_is_the_same_on_every_run():
    rng = np.random.default_rng(3)
    labels = rng.random(50) < 0.7
    task = np.repeat(np.arange(50), 3)
    votes = np.where(rng.random(150) < 0.85, labels[task], ~labels[task])
    workers = rng.integers(0, 10, 150)
    posterior = rng.uniform(0.5, 1.0, 50)
    first = worker_aware_interval(labels, posterior, task, votes, workers)
    second = worker_aware_interval(labels, posterior, task, votes, workers)
    assert np.all(first[0] <= posterior) and np.all(posterior <= first[1])
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
