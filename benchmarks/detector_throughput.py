"""MiniCheck and AlignScore throughput (summaries per second) on randomly initialised models of the real shapes.

No weights are downloaded: the models have the architecture of the released ones and random weights
(speed does not depend on the weight values), with a byte-level BPE tokenizer trained here on synthetic
news-like text (the corpus and pairs of ``coco_throughput.py``):

* ``minicheck-roberta``: RoBERTa sequence classifier, MiniCheck-RoBERTa-Large's shape (``large``: hidden 1024,
  24 layers, 16 heads, FFN 4096; ``small``: hidden 256, 4 layers, 4 heads, FFN 1024);
* ``minicheck-t5``: T5 encoder-decoder, MiniCheck-Flan-T5-Large's shape (``large``: d_model 1024, 24+24 layers,
  16 heads, gated-GELU FFN 2816; ``small``: d_model 256, 4+4 layers, 4 heads, FFN 1024);
* ``alignscore``: RoBERTa backbone + 3-way head as an AlignScore checkpoint, AlignScore-large's shape.

    .venv/bin/python benchmarks/detector_throughput.py --shape small --n 32
    .venv/bin/python benchmarks/detector_throughput.py --shape large --n 64      # on a GPU machine

Prints, per detector and batch size: device, dtype, summaries per second, (document chunk, claim sentence) pairs
per second, and the share of the device's peak the scoring pass uses (``benchmarks/_compute_share.py``: the
datasheet's dense bf16 figure on a GPU, a measured matmul on a CPU); then the best batch size. The same code
runs on a CPU today and on a GPU when one is lent.

    .venv/bin/python benchmarks/detector_throughput.py --shape large --n 256 --batch-sizes 16,32,64,128   # GPU
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._compute_share import counted_flops, device_peak, share_line, timed
from benchmarks.coco_throughput import make_pairs, sentence

ROBERTA = {
    "large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
    "small": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 1024},
}
T5 = {
    "large": {"d_model": 1024, "num_layers": 24, "num_decoder_layers": 24, "num_heads": 16, "d_ff": 2816, "d_kv": 64,
              "feed_forward_proj": "gated-gelu"},
    "small": {"d_model": 256, "num_layers": 4, "num_decoder_layers": 4, "num_heads": 4, "d_ff": 1024, "d_kv": 64,
              "feed_forward_proj": "gated-gelu"},
}
VOCAB = {"roberta": 50265, "t5": 32128}


def tokenizer():
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    corpus = [" ".join(sentence(random.Random(i)) for _ in range(5)) for i in range(2000)]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=2000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", cls_token="<s>", sep_token="</s>", mask_token="<mask>", model_max_length=512)


def build(kind: str, shape: str, directory: Path) -> dict:
    """Save the model of ``kind`` in ``directory``; returns the scorer configuration that loads it."""
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaModel, T5Config, T5ForConditionalGeneration

    tok = tokenizer()
    torch.manual_seed(0)
    if kind == "minicheck-t5":
        config = T5Config(vocab_size=VOCAB["t5"], pad_token_id=1, eos_token_id=2, decoder_start_token_id=1, **T5[shape])
        T5ForConditionalGeneration(config).save_pretrained(directory)
        tok.save_pretrained(directory)
        return {"model": str(directory)}
    config = RobertaConfig(vocab_size=VOCAB["roberta"], max_position_embeddings=514, pad_token_id=1, **ROBERTA[shape])
    if kind == "minicheck-roberta":
        labelled = RobertaConfig(vocab_size=VOCAB["roberta"], max_position_embeddings=514, pad_token_id=1, num_labels=2, **ROBERTA[shape])
        RobertaForSequenceClassification(labelled).save_pretrained(directory)
        tok.save_pretrained(directory)
        return {"model": str(directory)}
    backbone = RobertaModel(config)
    config.save_pretrained(directory / "backbone")
    tok.save_pretrained(directory / "backbone")
    state = {f"base_model.{k}": v for k, v in backbone.state_dict().items()}
    head = torch.nn.Linear(config.hidden_size, 3)
    state.update({f"tri_layer.{k}": v for k, v in head.state_dict().items()})
    torch.save({"state_dict": state}, directory / "alignscore.ckpt")
    return {"model": str(directory / "alignscore.ckpt"), "backbone": str(directory / "backbone")}


def main(argv: list[str] | None = None) -> int:
    import torch

    from metrics_service.scorers import get_scorer

    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description="MiniCheck and AlignScore throughput on random models of the real shapes")
    parser.add_argument("--shape", choices=sorted(ROBERTA), default="large" if cuda else "small")
    parser.add_argument("--n", type=int, default=32, help="number of (document, summary) pairs")
    parser.add_argument("--doc-sentences", type=int, default=30, help="max sentences per document")
    parser.add_argument("--summary-sentences", type=int, default=3)
    parser.add_argument("--batch-sizes", default="16,32,64,128" if cuda else "4,8,16",
                        help="comma-separated batch sizes to sweep; the best is reported")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's peak, when it is not in the table")
    parser.add_argument("--only", choices=["minicheck-roberta", "minicheck-t5", "alignscore"], action="append")
    args = parser.parse_args(argv)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    docs, sums = make_pairs(args.n, args.doc_sentences, args.summary_sentences)
    print(f"{args.n} pairs, documents up to {args.doc_sentences} sentences, {args.summary_sentences}-sentence summaries, "
          f"shape {args.shape}, torch threads {torch.get_num_threads()}, cuda {cuda}")
    for kind in args.only or ["minicheck-roberta", "minicheck-t5", "alignscore"]:
        with tempfile.TemporaryDirectory() as tmp:
            config = build(kind, args.shape, Path(tmp))
            name = "alignscore" if kind == "alignscore" else "minicheck"
            best = None
            for batch_size in batch_sizes:
                scorer = get_scorer(name, batch_size=batch_size, **config)
                scorer.score(docs[:2], sums[:2])  # load and warm up
                loaded = scorer.load()
                module = getattr(loaded, "model", None) or getattr(getattr(loaded, "nli", None), "model", None) or loaded.encoder
                parameter = next(module.parameters())
                # what score() computes before its max and aggregate
                matrices, seconds = timed(lambda scorer=scorer: scorer.matrices(docs, sums), str(parameter.device))
                pairs = sum(m.size for m in matrices)
                flops = counted_flops(lambda scorer=scorer: scorer.matrices(docs, sums))
                peak = device_peak(str(parameter.device), parameter.dtype, args.peak_tflops)
                print(f"{kind:18s} batch {batch_size:4d} device {parameter.device} dtype {parameter.dtype}: "
                      f"{args.n / seconds:8.2f} summaries/s, {pairs / seconds:8.1f} chunk-sentence pairs/s ({seconds:.1f} s); "
                      f"{share_line(flops, seconds, peak)}")
                if best is None or seconds < best[1]:
                    best = (batch_size, seconds, share_line(flops, seconds, peak))
            print(f"{kind:18s} best batch {best[0]}: {args.n / best[1]:.2f} summaries/s, {best[2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
