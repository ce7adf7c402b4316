"""Tiny random HuggingFace models built offline for the scorer tests (session-scoped fixtures).

* a byte-level BPE tokenizer trained here on :data:`CORPUS` with ``<s> <pad> </s> <unk> <mask>``;
* a 2+2-layer BART (d_model 32) saved with that tokenizer: :func:`tiny_seq2seq_dir`;
* a 2-layer BERT sequence classifier with 3 NLI labels: :func:`tiny_nli_dir`, and the same with
  uninformative ``LABEL_i`` names: :func:`tiny_nli_unnamed_dir`.

Weights use a large init std so that the models' distributions are far from uniform and score
differences are well above float noise.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# The scorers must never reach a model hub in tests (set before transformers is imported).
os.environ["HF_HUB_OFFLINE"] = "1"

_BUILT: dict[str, Path] = {}

CORPUS = [
    "The U.S. president visited Paris on Monday and met the French prime minister.",
    "He stayed home on Tuesday. The weather in Paris was cold and rainy.",
    "A fire broke out in a factory near the river; nobody was hurt, officials said.",
    "The company reported record profits of 12 million dollars in the first quarter.",
    "Scientists found a new species of frog in the rain forest of Brazil.",
    "The cat sat on the mat. The dog slept in the garden all afternoon.",
    "Police arrested two men after the robbery at the bank on Main Street.",
    "The team won the final match 3-1 and the fans celebrated in the streets.",
]
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
#: Input limit of the tiny seq2seq model, in tokens (special tokens included).
SEQ2SEQ_MAX_TOKENS = 96
NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


def build_tokenizer(max_length: int):
    """A fast byte-level BPE tokenizer (BART/RoBERTa conventions) trained on :data:`CORPUS`."""
    from tokenizers import AddedToken, ByteLevelBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 4, vocab_size=400, min_frequency=1, special_tokens=SPECIAL_TOKENS)
    # As in BART, the mask token absorbs the space before it.
    bpe._tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>")), trim_offsets=True
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer,
        bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
        cls_token="<s>", sep_token="</s>",
        mask_token="<mask>",
        model_max_length=max_length,
    )


def build_tiny_seq2seq(directory: Path) -> Path:
    """Save a tiny random BART summarizer and its tokenizer in ``directory``."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = build_tokenizer(SEQ2SEQ_MAX_TOKENS)
    config = BartConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=SEQ2SEQ_MAX_TOKENS, init_std=0.5, dropout=0.0, attention_dropout=0.0,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.eos_token_id,
        forced_bos_token_id=None, forced_eos_token_id=None,
    )
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_nli(directory: Path, id2label: dict[int, str] | None = None) -> Path:
    """Save a tiny random 3-label BERT sequence classifier and its tokenizer in ``directory``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = build_tokenizer(128)
    id2label = id2label or NLI_LABELS
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, initializer_range=0.5,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=tokenizer.pad_token_id,
        num_labels=len(id2label), id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(1)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _once(key: str, factory, tmp_path_factory) -> Path:
    """Build each tiny model once per test session, even when several test modules import the fixture."""
    if key not in _BUILT or not _BUILT[key].is_dir():
        _BUILT[key] = factory(tmp_path_factory.mktemp(key))
    return _BUILT[key]


@pytest.fixture(scope="session")
def tiny_seq2seq_dir(tmp_path_factory) -> Path:
    return _once("tiny-bart", build_tiny_seq2seq, tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory) -> Path:
    return _once("tiny-nli", build_tiny_nli, tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_nli_unnamed_dir(tmp_path_factory) -> Path:
    unnamed = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    return _once("tiny-nli-unnamed", lambda d: build_tiny_nli(d, unnamed), tmp_path_factory)


@pytest.fixture(scope="session")
def wordnet_data_dir(tmp_path_factory) -> Path:
    """An NLTK data dir with WordNet installed by scripts/install_wordnet.py (independent of the repo's copy)."""
    from scripts.install_wordnet import install

    def build(directory: Path) -> Path:
        install(directory)
        return directory

    return _once("nltk-data", build, tmp_path_factory)
