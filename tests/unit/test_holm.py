"""Holm's adjustment gives statsmodels' values, without the garbage collection statsmodels runs at each call."""
from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from metrics_service.stats.significance import holm, holm_matrix


@pytest.mark.parametrize("seed", range(20))
def test_holm_gives_statsmodels_values_on_random_families(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    pvalues = rng.choice([rng.random(), *rng.random(size) ** 3], size)  # ties, tiny values and products above 1
    expected = multipletests(pvalues, method="holm")[1]
    assert holm(list(pvalues)) == pytest.approx(list(expected), abs=0, rel=1e-12)


def test_none_entries_stay_in_place_and_are_not_counted():
    assert holm([None, 0.02, None, 0.01]) == pytest.approx([None, 0.02, None, 0.02])
    assert holm([None, None]) == [None, None] and holm([]) == []


def test_the_matrix_is_one_family_of_its_off_diagonal_entries():
    adjusted = holm_matrix({"a": {"a": None, "b": 0.01}, "b": {"a": 0.04, "b": None}})
    assert adjusted == {"a": {"b": pytest.approx(0.02)}, "b": {"a": pytest.approx(0.04)}}


def test_no_garbage_collection_runs(monkeypatch):
    collections = []
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or 0)
    holm([0.01, 0.2, 0.03])
    assert collections == []
