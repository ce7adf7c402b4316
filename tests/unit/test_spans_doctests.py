"""The docstring examples of the span protocol's plain modules (no database)."""
from __future__ import annotations

import doctest

import pytest

from annotate.spans import gold, taxonomy, words


@pytest.mark.parametrize("module", [gold, taxonomy, words], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
