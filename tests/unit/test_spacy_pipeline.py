"""Both apps load spaCy through one loader, configured by one setting (FACTLAB_SPACY_MODEL)."""
from __future__ import annotations

import pytest

from annotate import nlp
from annotate.spacy_pipeline import DEFAULT_MODEL, PipelineMissing, load_pipeline, model_name
from metrics_service import text
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
    with pytest.raises(ScorerError, match="factlab_missing_model"):
        text.split_sentences_many(["One sentence."])


SAMPLE = ("Gary Locke will be confirmed as Kilmarnock boss on Friday. The club went unbeaten in his first six games. "
          "\"We are delighted,\" said chairman Jim Mann, 39. He paid tribute to the players... and to the fans! "
          "Dr. Smith arrived at 5 p.m. in the U.S. capital.")


def test_annotators_pages_and_the_scorers_split_sentences_alike_and_as_the_full_parse_does(monkeypatch):
    monkeypatch.delenv("FACTLAB_SPACY_MODEL", raising=False)
    full = [s.text.strip() for s in load_pipeline()(SAMPLE).sents if s.text.strip()]
    assert len(full) >= 4
    # Without the tagger, attribute ruler, lemmatizer and entity recogniser the parser draws the same boundaries.
    assert nlp.split_sentences(SAMPLE) == full
    assert text.split_sentences(SAMPLE) == full
    assert text.split_sentences_many([SAMPLE, "  ", "Short one."]) == [full, [], ["Short one."]]


# Sentences whose entities sit at sentence boundaries: the recogniser alone reads "Washington D.C. Pictured" as
# one name, the parser's boundaries stop it.
ENTITY_SAMPLE = ("She flew to Washington D.C. Pictured is the plane she took. \"The Red Cross said so,\" he added. "
                 "It was the First Great Escape’. Bader led it in World War Two, and Thomas Hitzlsperger watched.")


def test_the_entity_pipeline_finds_the_entities_of_the_full_parse(monkeypatch):
    monkeypatch.delenv("FACTLAB_SPACY_MODEL", raising=False)
    entities = nlp.get_nlp(disable=nlp.ENTITIES_DISABLED)
    assert "parser" not in entities.disabled and "tagger" in entities.disabled
    for sample in (SAMPLE, ENTITY_SAMPLE):
        assert nlp.entity_spans(entities(sample)) == nlp.entity_spans(load_pipeline()(sample))
