"""The docstring examples of gold and quality (overlap, the balanced score, FRANK's and BUMP's gold rules, the
protocol's gold tally), the bonus rule and the spaCy loader: plain functions, no database."""
from __future__ import annotations

import doctest

import pytest

from annotate import spacy_pipeline
from annotate.bump import gold as bump_gold
from annotate.frank import gold as frank_gold
from annotate.protocols import base
from annotate.services import bonus_rule, overlap, predictable_answers, quality


@pytest.mark.parametrize("module", [overlap, quality, predictable_answers, frank_gold, bump_gold, base, bonus_rule, spacy_pipeline], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
