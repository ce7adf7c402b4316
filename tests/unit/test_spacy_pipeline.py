"""Both apps load spaCy through one loader, configured by one setting (FACTLAB_SPACY_MODEL)."""
from __future__ import annotations

import pytest

from annotate import nlp
from annotate.spacy_pipeline import DEFAULT_MODEL, PipelineMissing, load_pipeline, model_name
from metrics_service.errors import ScorerError
from metrics_service.text import scoring_pipeline


def test_the_annotation_pipelines_and_the_scorers_pipeline_come_from_one_loader_and_one_model(monkeypatch):
    monkeypatch.delenv("FACTLAB_SPACY_MODEL", raising=False)
    assert model_name() == DEFAULT_MODEL
    split = nlp.get_nlp(disable=nlp.SPLIT_DISABLED)
    assert split is load_pipeline(nlp.SPLIT_DISABLED)  # loaded once per set of disabled components
    full = scoring_pipeline()
    assert full is load_pipeline()
    assert split.meta["name"] == full.meta["name"] and f"{full.meta['lang']}_{full.meta['name']}" == DEFAULT_MODEL
    assert "parser" not in split.disabled and "ner" in split.disabled and "ner" not in full.disabled


def test_a_model_that_is_not_installed_is_named_by_both_apps(monkeypatch):
    monkeypatch.setenv("FACTLAB_SPACY_MODEL", "factlab_missing_model")
    with pytest.raises(PipelineMissing, match="'factlab_missing_model' \\(FACTLAB_SPACY_MODEL\\) is not installed"):
        nlp.get_nlp(disable=nlp.SPLIT_DISABLED)
    with pytest.raises(ScorerError, match="factlab_missing_model"):
        scoring_pipeline()
