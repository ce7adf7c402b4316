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


# -- detectors: MiniCheck (classifier and seq2seq), AlignScore, and a causal LM behind a local server ----
def build_tiny_t5(directory: Path) -> Path:
    """Save a tiny random T5 (the MiniCheck-Flan-T5 architecture) and its tokenizer in ``directory``."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = build_tokenizer(128)
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2,
        initializer_factor=4.0, dropout_rate=0.0, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(2)
    T5ForConditionalGeneration(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _tiny_roberta_config(tokenizer, **extra):
    from transformers import RobertaConfig

    return RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=130, initializer_range=0.5, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        **extra,
    )


def build_tiny_minicheck_roberta(directory: Path) -> Path:
    """A tiny random 2-label RoBERTa classifier (the MiniCheck-RoBERTa architecture; label 1 = supported)."""
    import torch
    from transformers import RobertaForSequenceClassification

    tokenizer = build_tokenizer(128)
    torch.manual_seed(3)
    model = RobertaForSequenceClassification(_tiny_roberta_config(tokenizer, num_labels=2)).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_alignscore_checkpoint(directory: Path) -> Path:
    """A tiny AlignScore in the released checkpoint's layout: ``directory/backbone`` (config + tokenizer of a
    RoBERTa) and ``directory/tiny-alignscore.ckpt`` (a Lightning-style ``state_dict`` with ``base_model.*``,
    ``mlm_head.*`` and the ``bin_layer`` / ``tri_layer`` / ``reg_layer`` heads)."""
    import torch
    from transformers import RobertaModel

    tokenizer = build_tokenizer(128)
    config = _tiny_roberta_config(tokenizer)
    torch.manual_seed(4)
    backbone = RobertaModel(config, add_pooling_layer=True).eval()
    (directory / "backbone").mkdir()
    config.save_pretrained(directory / "backbone")
    tokenizer.save_pretrained(directory / "backbone")
    state = {f"base_model.{k}": v for k, v in backbone.state_dict().items()}
    for name, n_out in (("bin_layer", 2), ("tri_layer", 3), ("reg_layer", 1)):
        layer = torch.nn.Linear(config.hidden_size, n_out)
        torch.nn.init.normal_(layer.weight, std=0.5)
        state.update({f"{name}.{k}": v for k, v in layer.state_dict().items()})
    state["mlm_head.bias"] = torch.zeros(config.vocab_size)
    torch.save({"state_dict": state, "hyper_parameters": {"model_name_or_path": "roberta-large"}}, directory / "tiny-alignscore.ckpt")
    return directory


def build_tiny_causal_lm(directory: Path) -> Path:
    """A tiny random GPT-2 and its tokenizer: the model behind the test OpenAI-compatible server."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = build_tokenizer(512)
    tokenizer.add_tokens(["Yes", "No"])  # one token each, as in real chat models' vocabularies
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=512, n_embd=32, n_layer=2, n_head=2, initializer_range=0.5,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(5)
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_t5_dir(tmp_path_factory) -> Path:
    return _once("tiny-t5", build_tiny_t5, tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_minicheck_roberta_dir(tmp_path_factory) -> Path:
    return _once("tiny-minicheck-roberta", build_tiny_minicheck_roberta, tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_alignscore_dir(tmp_path_factory) -> Path:
    return _once("tiny-alignscore", build_tiny_alignscore_checkpoint, tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_causal_lm_dir(tmp_path_factory) -> Path:
    return _once("tiny-gpt2", build_tiny_causal_lm, tmp_path_factory)
