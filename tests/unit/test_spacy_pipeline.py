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


@pytest.mark.slow
def test_every_use_runs_the_one_loaded_model_and_parses_as_a_model_loaded_without_its_left_out_components(monkeypatch):
    import spacy

    from annotate import spacy_pipeline

    monkeypatch.delenv("FACTLAB_SPACY_MODEL", raising=False)
    loads = []
    real_load = spacy.load
    monkeypatch.setattr(spacy, "load", lambda *args, **kwargs: loads.append((args, kwargs)) or real_load(*args, **kwargs))
    spacy_pipeline._without.cache_clear()
    spacy_pipeline._load.cache_clear()
    try:
        nlp.load_pipelines()
        scoring_pipeline()
        assert loads == [((DEFAULT_MODEL,), {})]  # one model for the splits, entities, traps and scorers
        for disabled in (nlp.SPLIT_DISABLED, nlp.ENTITIES_DISABLED, nlp.TRAPS_DISABLED):
            shared = nlp.get_nlp(disable=disabled)
            alone = real_load(DEFAULT_MODEL, disable=list(disabled))
            assert shared.disabled == alone.disabled and shared.pipe_names == alone.pipe_names
            parses = [[(t.text, t.dep_, t.head.i, t.tag_, t.ent_type_) for t in doc] + [s.text for s in doc.sents]
                      for pipeline in (shared, alone) for doc in pipeline.pipe([SAMPLE, ENTITY_SAMPLE], batch_size=2)]
            assert parses[:2] == parses[2:]
            assert [t.dep_ for t in shared(SAMPLE)] == [t.dep_ for t in alone(SAMPLE)]
        # A component the model lacks is ignored, as spaCy's loader ignores it.
        assert spacy_pipeline.load_pipeline(("ner", "coref")).disabled == real_load(DEFAULT_MODEL, disable=["ner", "coref"]).disabled
        assert len(loads) == 1  # still the one model (the pipelines loaded alone to compare with are not counted)
    finally:
        spacy_pipeline._without.cache_clear()
        spacy_pipeline._load.cache_clear()



_PARSE_IN_A_NEW_PROCESS = """
import json, sys
if sys.argv[1] == "torch first":
    import torch  # as in a process whose scorer loaded a model before any pipeline
from annotate.spacy_pipeline import load_pipeline
doc = load_pipeline()(sys.argv[2])
torch_after_pipeline = "torch" in sys.modules
import torch  # a scorer's later import still works
print(json.dumps({"torch_after_pipeline": torch_after_pipeline, "torch_works": float(torch.ones(3).sum()) == 3.0,
                  "parse": [[t.text, t.tag_, t.dep_, t.head.i, t.ent_type_, t.is_sent_start] for t in doc]}))
"""


@pytest.mark.slow
def test_a_pipeline_loads_without_torch_and_parses_as_with_it(monkeypatch):
    import json
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    monkeypatch.delenv("FACTLAB_SPACY_MODEL", raising=False)

    def parse(mode: str) -> dict:
        ran = subprocess.run([sys.executable, "-c", _PARSE_IN_A_NEW_PROCESS, mode, SAMPLE], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=120, check=False)
        assert ran.returncode == 0, ran.stderr[-3000:]
        return json.loads(ran.stdout)

    without, with_torch = parse("pipeline first"), parse("torch first")
    assert not without["torch_after_pipeline"] and with_torch["torch_after_pipeline"]
    assert without["torch_works"] and with_torch["torch_works"]
    assert without["parse"] == with_torch["parse"] and len(without["parse"]) > 40
