"""CoCo throughput: the batched scorer against a straightforward one-pair-at-a-time implementation.

Both run on the same randomly initialised BART (no download) with a byte-level BPE tokenizer trained
here on synthetic news-like text, over the same synthetic (document, summary) pairs:

* ``batched``: :class:`metrics_service.scorers.coco.CoCo` (X run once per summary and shared by the
  strategies, length-sorted padded batches, ``torch.inference_mode``, half precision on CUDA);
* ``naive``: for each summary and each strategy, one forward pass on X and one on X', batch size 1.

Shapes: ``large`` = bart-large-cnn's (d_model 1024, 12+12 layers, 16 heads, FFN 4096, vocab 50264,
1024 positions); ``small`` = d_model 256, 3+3 layers, 4 heads, FFN 1024, same vocabulary.

    .venv/bin/python benchmarks/coco_throughput.py --shape small --n 48
    .venv/bin/python benchmarks/coco_throughput.py --shape large --n 8

Prints summaries per second for both, their ratio, and the largest score difference between them; with
``--batch-sizes``, the batched scorer at each size with the share of the device's peak its pass uses
(``benchmarks/_compute_share.py``) and the best size:

    .venv/bin/python benchmarks/coco_throughput.py --shape large --n 64 --batch-sizes 8,16,32,64 --skip-naive   # GPU
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPES = {
    "large": {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
              "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096},
    "small": {"d_model": 256, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 4,
              "decoder_attention_heads": 4, "encoder_ffn_dim": 1024, "decoder_ffn_dim": 1024},
}
VOCAB_SIZE = 50264
MAX_POSITIONS = 1024

SUBJECTS = ["The president", "A spokesman", "Police", "The company", "Scientists", "The mayor", "Officials",
            "The team", "Residents", "The minister", "Doctors", "The court", "Investors", "The council"]
VERBS = ["announced", "rejected", "reported", "visited", "criticised", "approved", "discovered", "closed",
         "opened", "investigated", "celebrated", "described", "confirmed", "denied"]
OBJECTS = ["a new plan", "the budget", "record profits", "the hospital", "a rare species", "the bridge",
           "the election results", "the new stadium", "an inquiry", "the proposal", "the old factory",
           "a peace deal", "the museum", "the tax increase"]
PLACES = ["in London", "on Monday", "near the river", "in Paris", "after the storm", "last week",
          "in the city centre", "on Friday", "in Brazil", "at the summit", "in March", "overnight"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(PLACES)}."


def make_pairs(n: int, doc_sentences: int, summary_sentences: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Synthetic articles and summaries; about half of each summary's sentences come from its article."""
    rng = random.Random(seed)
    docs, sums = [], []
    for _ in range(n):
        doc = [sentence(rng) for _ in range(rng.randint(doc_sentences // 2, doc_sentences))]
        summ = [rng.choice(doc) if rng.random() < 0.5 else sentence(rng) for _ in range(summary_sentences)]
        docs.append(" ".join(doc))
        sums.append(" ".join(summ))
    return docs, sums


def build_model(shape: str, directory: Path) -> Path:
    import torch
    from tokenizers import AddedToken, ByteLevelBPETokenizer, processors
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        PreTrainedTokenizerFast,
    )

    corpus = [" ".join(sentence(random.Random(i)) for _ in range(5)) for i in range(2000)]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=2000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe._tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
        mask_token="<mask>", model_max_length=MAX_POSITIONS,
    )
    config = BartConfig(vocab_size=VOCAB_SIZE, max_position_embeddings=MAX_POSITIONS, pad_token_id=1,
                        bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_bos_token_id=None,
                        forced_eos_token_id=None, **SHAPES[shape])
    torch.manual_seed(0)
    BartForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def naive_coco(lm, document: str, summary: str, masks, mask_token: str) -> dict[str, float]:
    """CoCo for one pair, the plain way: per strategy, one unbatched pass on X and one on X'."""
    import numpy as np
    import torch

    from metrics_service.scorers.coco import (
        document_tokens,
        fit_document,
        key_tokens,
        mask_flags,
        masked_text,
    )
    from metrics_service.text import parse

    keys = key_tokens(parse(summary))
    tokens = document_tokens(parse(document))
    n, x = fit_document(lm, document, tokens, mask_token)
    target = lm.encode_target(summary)
    positions = [j for k in keys if (j := target.first_subword(k.start, k.end)) is not None]
    labels = torch.tensor([target.ids], device=lm.device)
    lower = {k.text.lower() for k in keys}

    def probs(source: str) -> np.ndarray:
        ids = torch.tensor([lm.source_ids(source)], device=lm.device)
        with torch.no_grad():
            logits = lm.model(input_ids=ids, decoder_input_ids=lm._decoder_inputs(labels)).logits[0].float()
        return torch.softmax(logits, -1)[torch.arange(labels.shape[1]), labels[0]].double().cpu().numpy()

    out = {}
    for m in masks:
        p_x = probs(x)  # recomputed for every strategy, as a straightforward implementation does
        p_cf = probs(masked_text(tokens.words[:n], mask_flags(tokens.words[:n], tokens.sent_ids[:n], lower, m), mask_token))
        out[f"coco_{m}"] = float(np.mean([p_x[j] - p_cf[j] for j in positions])) if positions else 0.0
    return out


def sweep_batch_sizes(model: str, masks: tuple[str, ...], args: argparse.Namespace, docs: list[str], sums: list[str]) -> None:
    """The batched scorer at each of ``--batch-sizes``: summaries per second and the share of the device's peak."""
    from benchmarks._compute_share import counted_flops, device_peak, share_line, timed
    from metrics_service.scorers.coco import CoCo

    best = None
    for batch_size in (int(b) for b in args.batch_sizes.split(",")):
        coco = CoCo(model=model, masks=masks, device=args.device, batch_size=batch_size)
        lm = coco.load()
        coco.score(docs[:2], sums[:2])
        _, seconds = timed(lambda coco=coco: coco.score(docs, sums), str(lm.device))
        flops = counted_flops(lambda coco=coco: coco.score(docs, sums))
        line = share_line(flops, seconds, device_peak(str(lm.device), lm.dtype, args.peak_tflops))
        print(f"batch {batch_size:4d}: {args.n / seconds:8.2f} summaries/s ({seconds:.1f}s); {line}")
        if best is None or seconds < best[1]:
            best = (batch_size, seconds, line)
    print(f"best batch {best[0]}: {args.n / best[1]:.2f} summaries/s, {best[2]}")


def main(argv: list[str] | None = None) -> int:
    import torch

    from metrics_service.scorers.coco import CoCo

    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description="CoCo throughput, batched vs one pair at a time")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="large" if cuda else "small")
    parser.add_argument("--n", type=int, default=48, help="number of (document, summary) pairs")
    parser.add_argument("--doc-sentences", type=int, default=30, help="max sentences per document")
    parser.add_argument("--summary-sentences", type=int, default=3)
    parser.add_argument("--masks", default="token,span,sent,doc")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default=None)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--batch-sizes", default="", help="comma-separated batch sizes to sweep for the batched scorer")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's peak, when it is not in the table")
    args = parser.parse_args(argv)
    masks = tuple(args.masks.split(","))

    docs, sums = make_pairs(args.n, args.doc_sentences, args.summary_sentences)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = build_model(args.shape, Path(tmp))
        coco = CoCo(model=str(path), masks=masks, device=args.device, batch_size=args.batch_size)
        lm = coco.load()
        n_params = sum(p.numel() for p in lm.model.parameters()) / 1e6
        coco.score(docs[:2], sums[:2])  # warm-up: spaCy, kernels
        src_len = sum(len(lm.source_ids(d)) for d in docs) / len(docs)
        print(f"device={lm.device} dtype={str(lm.dtype).replace('torch.', '')} shape={args.shape} "
              f"({n_params:.0f}M params) pairs={args.n} masks={','.join(masks)} batch_size={args.batch_size} "
              f"mean source tokens={src_len:.0f} threads={torch.get_num_threads()} setup={time.perf_counter() - t0:.1f}s")

        if args.batch_sizes:
            sweep_batch_sizes(str(path), masks, args, docs, sums)
        t0 = time.perf_counter()
        batched = coco.score(docs, sums)
        if cuda:
            torch.cuda.synchronize()
        t_batched = time.perf_counter() - t0
        print(f"batched: {args.n / t_batched:8.2f} summaries/s ({t_batched:.1f}s)")
        if args.skip_naive:
            return 0

        t0 = time.perf_counter()
        naive = [naive_coco(lm, d, s, masks, coco.mask_token) for d, s in zip(docs, sums)]
        if cuda:
            torch.cuda.synchronize()
        t_naive = time.perf_counter() - t0
        print(f"naive:   {args.n / t_naive:8.2f} summaries/s ({t_naive:.1f}s)")
        print(f"speed-up (batched / naive): {t_naive / t_batched:.2f}x")
        diff = max(abs(batched[k][i] - naive[i][k]) for k in batched for i in range(args.n))
        print(f"max |batched - naive| score difference: {diff:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
