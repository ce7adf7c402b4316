"""MiniCheck (classifier and Flan-T5 variants) and AlignScore on tiny models built offline, checked against
hand computations with the models called directly."""
from __future__ import annotations

import numpy as np
import pytest

from tests.tiny_models import (  # noqa: F401 (fixtures)
    tiny_alignscore_dir,
    tiny_minicheck_roberta_dir,
    tiny_t5_dir,
)

DOCS = [
    (
        "The cat sat on the mat. The dog slept in the garden all afternoon. It was sunny. "
        "Police arrested two men after the robbery at the bank on Main Street. Nobody was hurt."
    ),
    "The company reported record profits of 12 million dollars in the first quarter.",
    "",
]
SUMMARIES = ["The cat sat on the mat. Two men robbed a bank.", "Profits fell. The firm is new.", "A summary."]


def _sents(text: str) -> list[str]:
    from metrics_service.text import split_sentences

    return split_sentences(text) if text.strip() else []


# -- chunking -------------------------------------------------------------------------------------------
def test_pack_chunks_keeps_order_and_limits():
    from metrics_service.scorers.chunking import aggregate_matrix, pack_chunks

    words = lambda s: len(s.split())
    sents = ["a b c", "d e", "f g h i", "j", "k l m n o p q"]
    assert pack_chunks(sents, 5, words) == ["a b c d e", "f g h i j", "k l m n o", "p q"]
    assert pack_chunks(sents, 100, words) == ["a b c d e f g h i j k l m n o p q"]
    assert pack_chunks(["", "  "], 5, words) == []
    with pytest.raises(ValueError, match="chunk size must be at least 1"):
        pack_chunks(sents, 0, words)
    m = np.array([[0.1, 0.9], [0.7, 0.2]])
    assert aggregate_matrix(m, "min") == pytest.approx(0.7)
    assert aggregate_matrix(m, "mean") == pytest.approx(0.8)
    assert aggregate_matrix(np.zeros((0, 2)), "mean") == 0.0


# -- MiniCheck ------------------------------------------------------------------------------------------
def test_minicheck_roberta_hand_computed(tiny_minicheck_roberta_dir):  # noqa: F811
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from metrics_service.scorers import get_scorer

    scorer = get_scorer("minicheck", model=str(tiny_minicheck_roberta_dir), chunk_size=12, device="cpu", batch_size=3)
    got = scorer.score(DOCS, SUMMARIES)["minicheck"]
    mean = get_scorer("minicheck", model=str(tiny_minicheck_roberta_dir), chunk_size=12, aggregate="mean").score(DOCS, SUMMARIES)["minicheck"]
    tok = AutoTokenizer.from_pretrained(tiny_minicheck_roberta_dir)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_minicheck_roberta_dir).eval()
    for i, (doc, summ) in enumerate(zip(DOCS[:2], SUMMARIES[:2])):
        claims = _sents(summ)
        chunks = scorer.chunks(doc, claims)
        assert len(chunks) > (1 if i == 0 else 0)  # the first document needs several 12-token chunks
        assert " ".join(chunks).split() == doc.split()  # nothing dropped, order kept
        # chunk sizes add up per-sentence token counts, so a joined chunk may differ by a token per sentence
        assert all(len(tok(c, add_special_tokens=False)["input_ids"]) <= 12 + 3 for c in chunks)
        with torch.no_grad():
            probs = np.array([[torch.softmax(model(**tok(c, s, return_tensors="pt")).logits[0], -1)[1].item()
                               for s in claims] for c in chunks])
        assert got[i] == pytest.approx(probs.max(axis=0).min(), abs=1e-6)
        assert mean[i] == pytest.approx(probs.max(axis=0).mean(), abs=1e-6)
    assert got[2] == 0.0  # empty document: nothing supported
    assert got[0] != pytest.approx(got[1], abs=1e-4)


def test_minicheck_flan_t5_hand_computed(tiny_t5_dir):  # noqa: F811
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from metrics_service.scorers.minicheck import MiniCheck

    scorer = MiniCheck(model=str(tiny_t5_dir), chunk_size=20, aggregate="mean", device="cpu", batch_size=2)
    got = scorer.score(DOCS, SUMMARIES)["minicheck"]
    tok = AutoTokenizer.from_pretrained(tiny_t5_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5_dir).eval()
    zero, one = tok.convert_tokens_to_ids("0"), tok.convert_tokens_to_ids("1")
    for i, (doc, summ) in enumerate(zip(DOCS[:2], SUMMARIES[:2])):
        claims = _sents(summ)
        rows = []
        for chunk in scorer.chunks(doc, claims):
            row = []
            for claim in claims:
                enc = tok(f"premise: {chunk} hypothesis: {claim}", return_tensors="pt")
                with torch.no_grad():
                    logits = model(**enc, decoder_input_ids=torch.tensor([[tok.pad_token_id]])).logits[0, 0]
                row.append(torch.softmax(logits[[zero, one]], -1)[1].item())
            rows.append(row)
        assert got[i] == pytest.approx(np.array(rows).max(axis=0).mean(), abs=1e-5)
    assert 0.0 < got[0] < 1.0 and got[2] == 0.0


def test_minicheck_bad_config_is_clear(tiny_minicheck_roberta_dir):  # noqa: F811
    from metrics_service.scorers import ScorerError, get_scorer
    from metrics_service.scoring.registry import build_scorer

    with pytest.raises(ValueError, match="unknown aggregate 'max'"):
        build_scorer("minicheck", {"aggregate": "max"})
    with pytest.raises(ScorerError, match="supported_label 5 out of range"):
        get_scorer("minicheck", model=str(tiny_minicheck_roberta_dir), supported_label=5).score(DOCS, SUMMARIES)
    with pytest.raises(ScorerError, match="no model hub is reachable"):
        get_scorer("minicheck").score(DOCS, SUMMARIES)


# -- AlignScore -----------------------------------------------------------------------------------------
def _alignscore_reference(directory, doc: str, summ: str, chunk_words: int) -> float:
    """AlignScore by hand from the checkpoint: backbone pooler -> tri_layer -> softmax[0], max, mean."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, RobertaModel

    state = torch.load(directory / "tiny-alignscore.ckpt", weights_only=True)["state_dict"]
    backbone = RobertaModel(AutoConfig.from_pretrained(directory / "backbone")).eval()
    backbone.load_state_dict({k.removeprefix("base_model."): v for k, v in state.items() if k.startswith("base_model.")})
    tok = AutoTokenizer.from_pretrained(directory / "backbone")
    chunks, current = [], []
    for sent in _sents(doc):  # pack sentences into chunks of at most chunk_words words
        if current and len(" ".join([*current, sent]).split()) > chunk_words:
            chunks.append(" ".join(current))
            current = []
        current.append(sent)
    chunks += [" ".join(current)] if current else []
    matrix = []
    for chunk in chunks:
        row = []
        for claim in _sents(summ):
            with torch.no_grad():
                pooled = backbone(**tok(chunk, claim, return_tensors="pt")).pooler_output
                logits = pooled @ state["tri_layer.weight"].T + state["tri_layer.bias"]
            row.append(torch.softmax(logits[0], -1)[0].item())
        matrix.append(row)
    return float(np.array(matrix).max(axis=0).mean())


def test_alignscore_checkpoint_and_converted_dir(tiny_alignscore_dir, tmp_path):  # noqa: F811
    from metrics_service.scorers import ScorerError, get_scorer
    from metrics_service.scorers.alignscore import save_converted

    ckpt = str(tiny_alignscore_dir / "tiny-alignscore.ckpt")
    scorer = get_scorer("alignscore", model=ckpt, backbone=str(tiny_alignscore_dir / "backbone"), chunk_size=14, device="cpu")
    got = scorer.score(DOCS, SUMMARIES)["alignscore"]
    for i in range(2):
        assert got[i] == pytest.approx(_alignscore_reference(tiny_alignscore_dir, DOCS[i], SUMMARIES[i], 14), abs=1e-5)
    assert got[2] == 0.0 and 0.0 < got[0] < 1.0
    assert scorer.matrices(DOCS[:1], SUMMARIES[:1])[0].shape[0] > 1  # several 14-word chunks
    converted = save_converted(ckpt, str(tiny_alignscore_dir / "backbone"), tmp_path / "alignscore")
    again = get_scorer("alignscore", model=str(converted), chunk_size=14, batch_size=1).score(DOCS, SUMMARIES)["alignscore"]
    np.testing.assert_allclose(again, got, atol=1e-6)
    with pytest.raises(ScorerError, match="needs backbone="):
        get_scorer("alignscore", model=ckpt).score(DOCS, SUMMARIES)
    with pytest.raises(ScorerError, match="has no alignscore_head.safetensors"):
        get_scorer("alignscore", model=str(tiny_alignscore_dir / "backbone")).score(DOCS, SUMMARIES)
    (tmp_path / "broken.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(ScorerError, match="cannot read the AlignScore checkpoint"):
        get_scorer("alignscore", model=str(tmp_path / "broken.ckpt"), backbone=str(tiny_alignscore_dir / "backbone")).score(DOCS, SUMMARIES)
