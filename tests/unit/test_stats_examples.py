"""The public statistics functions show how they are called: each docstring has Examples that pytest runs
(``--doctest-modules`` on metrics_service/stats, in the fast lane)."""
from __future__ import annotations

import doctest

import metrics_service.stats as public_stats


def test_every_public_statistics_function_has_examples_that_doctest_finds():
    finder = doctest.DocTestFinder()
    missing = [name for name in public_stats.__all__
               if not any(t.examples for t in finder.find(getattr(public_stats, name), name))]
    assert missing == []
