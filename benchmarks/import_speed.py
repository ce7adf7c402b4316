"""Import speed at research scale: BUMP Task 1 (693 pairs), FRANK, FRANK's baseline scores, a million scores.

Runs on a fresh PostgreSQL database (``factlab_bench*``, dropped and created here) and prints, per import,
wall-clock and CPU seconds of this process (CPU time is what a shared machine does not inflate; the
database's own time is in the wall figure only), and the re-import (idempotent: nothing new).

* ``bump``: a synthetic Task 1 file of full size (99 FRANK articles, 7 pairs each, the 24 score keys of the
  sample records); the baseline in the same run is the old way (three spaCy parses per record and one
  query per score) on the first ``--baseline-pairs`` pairs, extrapolated per pair.
* ``frank``: the FRANK folder (``../shared/data/frank`` where present, else ``data/frank-subset``).
* ``frank-scores``: a baseline-metrics file like ``baseline_factuality_metrics_outputs.json`` (15 metrics per
  annotated summary), imported into the FRANK campaign.
* ``million``: ``--scores`` metric scores as JSON lines and as CSV; the peak resident memory is printed
  after a tenth of them and after all of them: the import streams, so the two stay close.

Usage::

    .venv/bin/python benchmarks/import_speed.py --database factlab_bench_15_import
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import bench_env, default_frank_dir, recreate_database, use_env_here

REFERENCE_SCORE_METRICS = 12  # x2 sides = the 24 score keys of a BUMP Task 1 record
FRANK_BASELINE_METRICS = ["BERTScore P Art", "BERTScore R Art", "BERTScore F1 Art", "FEQA", "QAGS", "OpenIE",
                          "Dep Entail", "FactCC", "BLEU", "METEOR", "Rouge 1", "Rouge 2", "Rouge L", "BARTScore", "CoCo"]


class Timer:
    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def done(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bump_file(frank_dir: Path, target: Path, articles: int = 99) -> int:
    """A Task 1 file of 7 pairs per article (one per requestable type), built from FRANK articles."""
    from taxonomies import bump as taxonomy

    types = [t.code for t in taxonomy.REQUESTABLE]
    paths = sorted((frank_dir / "articles").glob("*.json"))[:articles]
    records = []
    rng = random.Random(7)
    for a_index, path in enumerate(paths):
        article = json.loads(path.read_text())
        text = article["article"]
        # A CNN/DM highlight as reference, else the article's first words (BUMP's references are 26 to 91 words).
        reference = (article.get("bart_reference") or "").strip() or " ".join(text.split()[:50]).rstrip(".") + "."
        for p_index in range(7):
            words = reference.split()
            words[rng.randrange(len(words))] = "not"
            scores = {}
            for m in range(REFERENCE_SCORE_METRICS):
                scores[f"M{m}_reference"] = rng.random()
                scores[f"M{m}_edited"] = rng.random()
            records.append({
                "id": f"a{a_index}-p{p_index}", "article_id": f"art-{a_index}", "article": text,
                "reference_summary": reference, "edited_summary": " ".join(words),
                "error_type": types[p_index % len(types)], "corrected_error_type": "", "scores": scores,
            })
    target.write_text(json.dumps(records))
    return len(records)


def old_way_bump(path: Path, pairs: int) -> float:
    """Seconds per pair the old importer spent: three spaCy parses per record, one query per score."""
    from annotate.models import Campaign, Document, MetricScore, Summary
    from annotate.nlp import split_sentences

    records = json.loads(path.read_text())[:pairs]
    campaign = Campaign.objects.create(slug="bench-old-bump", name="old way", kind="bump_taxonomy")
    timer = Timer()
    for r in records:
        doc, _ = Document.objects.get_or_create(
            campaign=campaign, external_id=r["article_id"], defaults={"text": r["article"], "sentences": split_sentences(r["article"])}
        )
        ref, _ = Summary.objects.get_or_create(
            document=doc, system="reference", edited_from=None,
            defaults={"text": r["reference_summary"], "is_reference": True, "sentences": split_sentences(r["reference_summary"])},
        )
        edit, _ = Summary.objects.get_or_create(
            document=doc, edited_from=ref, external_id=r["id"],
            defaults={"system": "human-edit", "text": r["edited_summary"], "sentences": split_sentences(r["edited_summary"])},
        )
        for key, value in r["scores"].items():
            metric, _, side = key.rpartition("_")
            MetricScore.objects.update_or_create(
                summary=ref if side == "reference" else edit, metric=metric, config_key="imported", defaults={"value": value}
            )
    wall, _ = timer.done()
    campaign.delete()
    return wall / len(records)


def frank_scores_file(frank_dir: Path, target: Path) -> int:
    rng = random.Random(3)
    annotations = json.loads((frank_dir / "human_annotations.json").read_text())
    rows = [{"hash": a["hash"], "model_name": a["model_name"], **{m: rng.random() for m in FRANK_BASELINE_METRICS}} for a in annotations]
    target.write_text(json.dumps(rows))
    return len(rows) * len(FRANK_BASELINE_METRICS)


def million_files(summary_ids: list[int], scores: int, folder: Path, prefix: str) -> tuple[Path, Path]:
    metrics = -(-scores // len(summary_ids))
    jsonl, csv_path = folder / f"{prefix}.jsonl", folder / f"{prefix}.csv"
    rng = random.Random(1)
    written = 0
    with jsonl.open("w") as out_j, csv_path.open("w", newline="") as out_c:
        writer = csv.writer(out_c)
        writer.writerow(["summary_id", "metric", "value"])
        for m in range(metrics):
            for sid in summary_ids:
                if written == scores:
                    break
                value = rng.random()
                out_j.write(json.dumps({"summary_id": sid, "metric": f"{prefix}_{m:04d}", "value": value}) + "\n")
                writer.writerow([sid, f"{prefix}_{m:04d}", repr(value)])
                written += 1
    return jsonl, csv_path


def line(label: str, timer: Timer, report, target: float | None = None, extra: str = "") -> None:
    wall, cpu = timer.done()
    goal = f" (target <= {target:g} s: {'met' if wall <= target else 'MISSED'})" if target else ""
    made = ", ".join(f"{n} {k}" for k, n in sorted(report.created.items()))
    print(f"{label:<34} wall {wall:7.2f} s  cpu {cpu:7.2f} s{goal}  created: {made or 'nothing'}{extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="factlab_bench_import")
    parser.add_argument("--redis-db", type=int, default=11)
    parser.add_argument("--frank-data", type=Path, default=default_frank_dir())
    parser.add_argument("--scores", type=int, default=1_000_000)
    parser.add_argument("--baseline-pairs", type=int, default=14)
    parser.add_argument("--only", nargs="*", default=["bump", "frank", "frank-pages", "frank-scores", "million"])
    args = parser.parse_args()

    recreate_database(args.database)
    # The import is timed alone; the page preparation job that follows it in production is timed on its own line.
    use_env_here(bench_env(database=args.database, redis_db=args.redis_db, extra={"FACTLAB_PREPARE_PAGES_AFTER_IMPORT": "0"}))
    from django.core.management import call_command

    from annotate.models import Summary
    from annotate.nlp import SPLIT_DISABLED, get_nlp
    from annotate.services.imports import import_dataset, import_scores

    call_command("migrate", verbosity=0, interactive=False)
    get_nlp(disable=SPLIT_DISABLED)  # loading the pipeline is start-up, not import work
    with tempfile.TemporaryDirectory(prefix="factlab-bench-import-") as tmp:
        folder = Path(tmp)
        if "bump" in args.only:
            path = folder / "bump_task1.json"
            pairs = bump_file(args.frank_data, path)
            per_pair = old_way_bump(path, args.baseline_pairs)
            print(f"BUMP Task 1 old way (first {args.baseline_pairs} pairs): {per_pair:.3f} s per pair -> {per_pair * pairs:.1f} s for {pairs}")
            timer = Timer()
            report = import_dataset("bump", [path], campaign_slug="bench-bump", campaign_kind="bump_taxonomy")
            wall = time.perf_counter() - timer.wall
            line(f"BUMP Task 1 ({pairs} pairs)", timer, report, 10, f"  ({per_pair * pairs / wall:.1f}x the old way)")
            timer = Timer()
            line("BUMP Task 1 again (idempotent)", timer, import_dataset("bump", [path], campaign_slug="bench-bump"))
        if {"frank", "frank-scores", "million"} & set(args.only):
            timer = Timer()
            report = import_dataset("frank", [args.frank_data], campaign_slug="bench-frank", campaign_kind="frank")
            line(f"FRANK ({args.frank_data.name})", timer, report, 5)
            timer = Timer()
            line("FRANK again (idempotent)", timer, import_dataset("frank", [args.frank_data], campaign_slug="bench-frank"))
            if "frank-pages" in args.only:
                from annotate.frank.prepared import prepare_campaign
                from annotate.models import Campaign

                timer = Timer()
                prepared = prepare_campaign(Campaign.objects.get(slug="bench-frank"))
                wall, cpu = timer.done()
                print(f"{'FRANK pages prepared (job after import)':<34} wall {wall:7.2f} s  cpu {cpu:7.2f} s  {prepared} documents "
                      f"({1000 * wall / max(prepared, 1):.0f} ms each; claims then do no NLP)", flush=True)
        if "frank-scores" in args.only:
            path = folder / "baseline_factuality_metrics_outputs.json"
            n = frank_scores_file(args.frank_data, path)
            timer = Timer()
            line(f"FRANK baseline scores ({n})", timer, import_scores("frank", [path], campaign_slug="bench-frank"), 5)
            timer = Timer()
            line("FRANK baseline scores again", timer, import_scores("frank", [path], campaign_slug="bench-frank"))
        if "million" in args.only:
            ids = list(Summary.objects.filter(document__campaign__slug="bench-frank").values_list("id", flat=True))
            print(f"peak RSS before the score files: {peak_rss_mib():.0f} MiB")
            tenth_j, _ = million_files(ids, args.scores // 10, folder, "tenth")
            full_j, _ = million_files(ids, args.scores, folder, "json")
            _, full_c = million_files(ids, args.scores, folder, "csv")
            timer = Timer()
            line(f"{args.scores // 10} scores, jsonl", timer, import_scores("jsonl", [tenth_j], campaign_slug="bench-frank"),
                 extra=f"  peak RSS {peak_rss_mib():.0f} MiB")
            timer = Timer()
            line(f"{args.scores} scores, jsonl", timer, import_scores("jsonl", [full_j], campaign_slug="bench-frank"), 60,
                 extra=f"  peak RSS {peak_rss_mib():.0f} MiB")
            timer = Timer()
            line(f"{args.scores} scores, csv", timer, import_scores("csv", [full_c], campaign_slug="bench-frank"), 60,
                 extra=f"  peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
