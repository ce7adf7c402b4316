"""CPU of preparing FRANK task pages with one parse per article, against a second parse of its sentences.

Preparing a document's page (:func:`annotate.frank.prepared.prepare_documents`, the job after an import) parses
the article with spaCy for its entity pool, and its fluent error traps swap named entities of its sentences.
The release before this one parsed every sentence again for those swaps; now they read the spans of the
whole-article parse the pool made (:func:`annotate.nlp.sentence_entities`). This benchmark imports FRANK once,
then prepares the same blocks of documents both ways in one process, in alternating order (a machine whose
speed drifts shifts both alike), each inside a transaction rolled back afterwards, so every run starts from
the imported state (its shipped traps, no pools, no pages). "Sentences parsed again" is the older way: the
benchmark makes :func:`annotate.nlp.sentence_entities` answer None, as for sentences not found in the text.

    .venv/bin/python benchmarks/page_preparation.py --blocks 6 --documents 40

Prints each block's CPU seconds per way, then the median CPU per document and the ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._bench_common import bench_env, default_frank_dir, recreate_database, reference_loop_ms, use_env_here


class _RolledBack(Exception):
    """Raised at the end of a measured run: its transaction is rolled back."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frank-data", type=Path, default=default_frank_dir(), help="FRANK's folder (human_annotations.json)")
    parser.add_argument("--database", default="factlab_bench_pages", help="benchmark database (recreated)")
    parser.add_argument("--redis-db", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=6, help="blocks of documents, each prepared both ways")
    parser.add_argument("--documents", type=int, default=40, help="documents per block")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    recreate_database(args.database)
    use_env_here(bench_env(database=args.database, redis_db=args.redis_db))
    from django.core.management import call_command
    from django.db import transaction
    from django.test.utils import override_settings

    from annotate import nlp
    from annotate.frank import traps
    from annotate.frank.entities import campaign_common_words
    from annotate.frank.prepared import prepare_documents
    from annotate.models import Campaign, Document
    from annotate.services.imports import import_dataset

    call_command("migrate", verbosity=0)
    with override_settings(FACTLAB_PREPARE_PAGES_AFTER_IMPORT=False):
        import_dataset("frank", [args.frank_data], campaign_slug="bench-pages")
    campaign = Campaign.objects.get(slug="bench-pages")
    ids = list(Document.objects.filter(campaign=campaign).order_by("id").values_list("id", flat=True))
    nlp.load_pipelines()
    campaign_common_words(campaign.pk)  # the campaign's casing model, cached for both ways alike
    whole_parse = traps.sentence_entities

    def prepare(block_ids: list[int], way: str) -> float:
        traps.sentence_entities = whole_parse if way == "one parse" else (lambda sentences, text: None)
        nlp._article_entities.clear()  # nothing parsed before the run
        started = time.process_time()
        try:
            with transaction.atomic():
                prepare_documents(list(Document.objects.filter(pk__in=block_ids).order_by("id")))
                spent = time.process_time() - started
                raise _RolledBack
        except _RolledBack:
            pass
        finally:
            traps.sentence_entities = whole_parse
        return spent

    # Blocks spread over the benchmark (CNN/DM's long articles first, XSum's short ones after).
    step = max(1, (len(ids) - args.documents) // max(1, args.blocks - 1))
    ways = ("one parse", "sentences parsed again")
    per_document: dict[str, list[float]] = {way: [] for way in ways}
    print(f"machine speed: reference loop {reference_loop_ms()} ms; FRANK {len(ids)} documents, "
          f"{args.blocks} blocks of {args.documents}", flush=True)
    for block in range(args.blocks):
        block_ids = ids[block * step:block * step + args.documents]
        order = ways if block % 2 == 0 else ways[::-1]
        seconds = {way: prepare(block_ids, way) for way in order}
        for way in ways:
            per_document[way].append(1000 * seconds[way] / len(block_ids))
        print(f"block {block + 1}: " + ", ".join(f"{way} {seconds[way]:.2f} s" for way in ways), flush=True)
    now, before = (statistics.median(per_document[way]) for way in ways)
    print(f"CPU per document prepared (median of {args.blocks} blocks): one parse {now:.0f} ms, "
          f"sentences parsed again {before:.0f} ms; ratio {now / before:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
