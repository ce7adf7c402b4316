"""Peak memory of the streamed exports vs. materialising the rows (the export must stay flat as data grows).

Creates a throwaway campaign with N sentence judgements (bulk_create), then measures the peak of Python
allocations (tracemalloc) while

* ``baseline``: the judgements are loaded as a list of ``values()`` dicts and serialised to one string;
* ``jsonl``: the API's JSON-lines export (``iter_rows`` -> ``jsonl_lines`` -> ``batched_lines``) is consumed;
* ``csv``: the same through ``csv_lines``;
* ``frank``: the FRANK zip export (``stream_frank_zip``) is consumed.

The campaign is deleted at the end. Usage (any database the settings point at, migrated)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab .venv/bin/python benchmarks/export_memory.py --judgements 200000
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
# A throwaway key: this process serves nothing, and settings refuse to start without one.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + secrets.token_urlsafe(48))

import django

django.setup()

from django.contrib.auth import get_user_model

from annotate.exporters.tabular import batched_lines, csv_lines, iter_rows, jsonl_lines
from annotate.frank.exporter import stream_frank_zip
from annotate.models import Campaign, Document, SentenceJudgement, Summary, Worker
from annotate.protocols import layout_row_owners

SLUG = "bench-export-memory"
SENTENCES_PER_SUMMARY = 4
WORKERS = 3


def build_campaign(n_judgements: int) -> Campaign:
    """Documents with two systems each, 4 sentences per summary, 3 workers: ``n_judgements`` judgements in all."""
    Campaign.objects.filter(slug=SLUG).delete()
    campaign = Campaign.objects.create(slug=SLUG, name="Export memory benchmark")
    users = [get_user_model().objects.get_or_create(username=f"bench-worker-{i}")[0] for i in range(WORKERS)]
    workers = [Worker.objects.get_or_create(user=u, defaults={"provider": "bench", "external_id": u.username})[0] for u in users]
    per_summary = SENTENCES_PER_SUMMARY * WORKERS
    n_summaries = max(1, n_judgements // per_summary)
    n_documents = (n_summaries + 1) // 2
    sentences = [f"Sentence {i} of the summary." for i in range(SENTENCES_PER_SUMMARY)]
    documents = Document.objects.bulk_create(
        Document(campaign=campaign, external_id=f"doc-{i}", dataset="cnndm", split="test", text="An article. " * 20, sentences=["An article."] * 20)
        for i in range(n_documents)
    )
    summaries = Summary.objects.bulk_create(
        (Summary(document=d, system=s, text=" ".join(sentences), sentences=sentences) for d in documents for s in ("bart", "pegasus")),
        batch_size=5000,
    )[:n_summaries]
    batch: list[SentenceJudgement] = []
    created = 0
    for summary in summaries:
        for index in range(SENTENCES_PER_SUMMARY):
            for w, worker in enumerate(workers):
                wrong = (summary.pk + index + w) % 4 == 0
                batch.append(SentenceJudgement(
                    summary=summary, sentence_index=index, worker=worker, factual=not wrong,
                    categories=["EntE"] if wrong else [], lead_time_seconds=4.2,
                ))
        if len(batch) >= 20_000:
            SentenceJudgement.objects.bulk_create(batch)
            created += len(batch)
            batch = []
    SentenceJudgement.objects.bulk_create(batch)
    created += len(batch)
    print(f"created {created} judgements on {len(summaries)} summaries of {n_documents} documents")
    return campaign


def measure(name: str, run: Callable[[], int]) -> dict:
    tracemalloc.start()
    started = time.perf_counter()
    size = run()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    result = {"case": name, "peak_mib": round(peak / 2**20, 1), "output_mib": round(size / 2**20, 1), "seconds": round(seconds, 1)}
    print(json.dumps(result))
    return result


def consume(chunks: Iterable[bytes]) -> int:
    return sum(len(chunk) for chunk in chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=200_000)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark campaign")
    args = parser.parse_args()
    campaign = build_campaign(args.judgements)
    try:
        def baseline() -> int:
            rows = list(SentenceJudgement.objects.filter(summary__document__campaign=campaign).values(
                "summary_id", "summary__system", "summary__document__external_id", "sentence_index", "worker_id",
                "factual", "categories", "lead_time_seconds", "source", "created_at",
            ))
            return len("\n".join(json.dumps(r, default=str) for r in rows).encode())

        results = [
            measure("baseline: list of values() + one string", baseline),
            measure("jsonl export (streamed)", lambda: consume(batched_lines(jsonl_lines(iter_rows(campaign, layout_row_owners(), kinds=["judgements"]))))),
            measure("csv export (streamed)", lambda: consume(batched_lines(csv_lines(iter_rows(campaign, layout_row_owners(), kinds=["judgements"]))))),
            measure("frank zip export (streamed)", lambda: consume(stream_frank_zip(campaign))),
        ]
    finally:
        if not args.keep:
            Campaign.objects.filter(pk=campaign.pk).delete()
    print(f"process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    base = results[0]["peak_mib"]
    for r in results[1:]:
        print(f"{r['case']}: peak {r['peak_mib']} MiB vs baseline {base} MiB ({base / max(r['peak_mib'], 0.1):.0f}x less)")


if __name__ == "__main__":
    main()
