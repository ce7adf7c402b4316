"""Report and dashboard speed on FRANK with 15 metrics, against the previous implementation in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python benchmarks/report_speed.py [--metrics 15] [--repeat 3]

Imports FRANK (the shared data, else the committed subset) into campaign ``bench-report`` once, stores
``--metrics`` imported metric columns (human factuality plus seeded noise of growing size, so every statistic
has work to do), then prints:

* the report cold (cache cleared) with the current code, and with the implementation of commit
  ``BASELINE_COMMIT`` (least-squares fit per pair, bootstrap loops), loaded from git into a temporary
  package and run on the same data: the ratio is the speed-up;
* the report served from the cache (``get_or_compute_report``) and the API's first answer (202: queued);
* the dashboard page cold and cached, and its size.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")

import django

django.setup()

import numpy as np
from django.core.cache import cache

from annotate.models import Campaign, MetricScore, MetricSource, Summary

SLUG = "bench-report"
BASELINE_COMMIT = "f662b4b"  # before the vectorised statistics: lstsq per pair, Python bootstrap loops


def frank_dir() -> Path:
    shared = REPO_ROOT.parent / "shared" / "data" / "frank"
    return shared if (shared / "human_annotations.json").is_file() else REPO_ROOT / "data" / "frank-subset"


def prepare(n_metrics: int) -> Campaign:
    from annotate.services.imports import import_dataset

    campaign = Campaign.objects.filter(slug=SLUG).first()
    if campaign is None:
        import_dataset("frank", [frank_dir()], campaign_slug=SLUG)
        campaign = Campaign.objects.get(slug=SLUG)
    MetricScore.objects.filter(summary__document__campaign=campaign).delete()
    summaries = list(Summary.objects.filter(document__campaign=campaign, is_reference=False).order_by("id").values_list("id", "human_scores"))
    rng = np.random.default_rng(0)
    rows = []
    for m in range(n_metrics):
        noise = rng.normal(scale=0.5 + m / 5, size=len(summaries))
        for (summary_id, human), e in zip(summaries, noise, strict=True):
            rows.append(MetricScore(summary_id=summary_id, metric=f"metric{m:02d}", value=float((human or {}).get("Factuality", 0.5)) + e,
                                    source=MetricSource.IMPORTED))
    MetricScore.objects.bulk_create(rows, batch_size=10_000)
    return campaign


def _importable(source: str) -> str:
    """Baseline source importable beside today's code: the FRANK and BUMP taxonomies have moved since
    (``annotate.frank.typology`` and ``annotate.bump.taxonomy`` to ``taxonomies``), with the same values."""
    return source.replace("annotate.frank.typology", "taxonomies.frank").replace("annotate.bump.taxonomy", "taxonomies.bump")


def load_baseline():
    """The report module of ``BASELINE_COMMIT`` with its own copy of the statistics package."""
    folder = Path(tempfile.mkdtemp(prefix="factlab-baseline-"))
    package = folder / "_baseline_stats"
    package.mkdir()
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{BASELINE_COMMIT}:metrics_service/stats"], cwd=REPO_ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in names:
        text = subprocess.run(["git", "show", f"{BASELINE_COMMIT}:metrics_service/stats/{name}"], cwd=REPO_ROOT,
                              capture_output=True, text=True, check=True).stdout
        (package / name).write_text(_importable(text))
    report = subprocess.run(["git", "show", f"{BASELINE_COMMIT}:metrics_service/report.py"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout
    (folder / "_baseline_report.py").write_text(_importable(report.replace("metrics_service.stats", "_baseline_stats")))
    sys.path.insert(0, str(folder))
    import _baseline_report

    return _baseline_report


def timed(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        cache.clear()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from factlab.celery import app
    from metrics_service.report import build_report, get_or_compute_report

    campaign = prepare(args.metrics)
    n = Summary.objects.filter(document__campaign=campaign, is_reference=False).count()
    print(f"FRANK campaign {SLUG}: {n} summaries, {args.metrics} metrics (best of {args.repeat})")

    new, report = timed(lambda: build_report(campaign), args.repeat)
    baseline = load_baseline()
    old, _ = timed(lambda: baseline.build_report(campaign), args.repeat)
    print(f"report cold, current code:        {new:7.2f} s")
    print(f"report cold, baseline {BASELINE_COMMIT}:     {old:7.2f} s   -> {old / new:.1f}x faster")

    get_or_compute_report(campaign)
    start = time.perf_counter()
    get_or_compute_report(campaign)
    print(f"report cached:                    {time.perf_counter() - start:7.3f} s")

    user, _ = get_user_model().objects.get_or_create(username="bench-report-admin", defaults={"is_staff": True})
    client = Client()
    client.force_login(user)
    url = f"/campaigns/{SLUG}/dashboard/"
    cold, response = timed(lambda: client.get(url), args.repeat)
    client.get(url)
    start = time.perf_counter()
    cached_response = client.get(url)
    warm = time.perf_counter() - start
    assert response.status_code == cached_response.status_code == 200
    print(f"dashboard cold:                   {cold:7.2f} s")
    print(f"dashboard cached:                 {warm:7.3f} s   page {len(cached_response.content) / 1024:.0f} KiB")

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False  # as with a worker: the API only queues the task
    cache.clear()
    start = time.perf_counter()
    api = client.get(f"/api/campaigns/{SLUG}/report/")
    print(f"API first answer:                 {time.perf_counter() - start:7.3f} s   HTTP {api.status_code}")
    app.conf.task_always_eager = previous
    assert report["correlations"] and len(report["correlations"]) == args.metrics


if __name__ == "__main__":
    main()
