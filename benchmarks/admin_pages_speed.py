"""Cold times of the three admin pages on a FRANK-sized campaign: the campaign page (/manage/<slug>/), the
dashboard and the report API, as an admin opens them after the data changed.

    DJANGO_DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python benchmarks/admin_pages_speed.py [--repeat 3]

Imports FRANK (the shared data, else the committed subset) into campaign ``bench-admin-pages`` once, with
ROUGE and BLEU against the references stored as scores and a crowd of ``--workers`` people who judged every
sentence of every summary three times (so the label models have FRANK-sized work: about 15,000
judgements). Then, with the broker as in production (``REDIS_URL``; no worker consumes here), prints per page:

* **nothing stored**: the cache cleared and the stored figures dropped (the first view right after a change,
  before a worker finished: the page queues the computation and says so);
* **figures stored**: the cache cleared, the figures computed by a worker after the last change (the worker's
  part runs in this process first, timed);

and each page's query count. Each time is the best of ``--repeat`` runs. Before the pages read stored figures
(commit 30db528) they computed them in the request: on this campaign, cold, the campaign page took 23.1 s (32
queries), the dashboard 161 s (43 queries) and the report API answered 202 in 0.4 s, on a 2-core machine with
a load of 7 to 10; this script, on the same machine and load, printed 0.3 s, 0.1-0.2 s and 0.1-0.2 s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Django is set up before the models are imported (the report benchmark, which finds the FRANK data as this one
# needs, does the same; importing it first is not enough once the imports are sorted).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")

import django

django.setup()

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Campaign, MetricScore, SentenceJudgement, Summary
from benchmarks.report_speed import frank_dir

SLUG = "bench-admin-pages"


def prepare(workers: int) -> Campaign:
    from annotate.services.imports import import_dataset
    from tests.factories import judge_like_a_crowd
    from tests.test_report_support import score_against_references

    campaign = Campaign.objects.filter(slug=SLUG).first()
    if campaign is None:
        import_dataset("frank", [frank_dir()], campaign_slug=SLUG)
        campaign = Campaign.objects.get(slug=SLUG)
        score_against_references(campaign)
        judge_like_a_crowd(campaign, workers=workers)
    return campaign


def timed_get(client, url: str, repeat: int, before=None) -> tuple[float, int, object]:
    """Best time of ``repeat`` cold GETs (``before()`` runs first each time, untimed), its queries, the response."""
    best, queries, response = float("inf"), 0, None
    for _ in range(repeat):
        cache.clear()
        if before is not None:
            before()
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - start
        if elapsed < best:
            best, queries = elapsed, len(captured)
    return best, queries, response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--workers", type=int, default=30, help="crowd size")
    args = parser.parse_args()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from factlab.celery import app

    app.conf.task_always_eager = False  # as in production: a request may only queue work for the workers
    from django.core.management import call_command

    call_command("migrate", verbosity=0)  # a new, empty database works too (an up-to-date one: nothing to do)
    campaign = prepare(args.workers)
    n = Summary.objects.filter(document__campaign=campaign, is_reference=False).count()
    judgements = SentenceJudgement.objects.filter(summary__document__campaign=campaign).count()
    scores = MetricScore.objects.filter(summary__document__campaign=campaign).count()
    print(f"FRANK campaign {SLUG}: {n} summaries, {scores} metric scores, {judgements} judgements (best of {args.repeat})")
    user, _ = get_user_model().objects.get_or_create(username="bench-admin-pages-staff", defaults={"is_staff": True})
    client = Client()
    client.force_login(user)
    pages = {
        "campaign page": f"/manage/{SLUG}/",
        "dashboard": f"/campaigns/{SLUG}/dashboard/",
        "report API": f"/api/campaigns/{SLUG}/report/",
    }
    from metrics_service.figures import compute_campaign_figures
    from metrics_service.models import CampaignFigures
    from metrics_service.tasks_report import compute_report

    def drop_stored() -> None:
        CampaignFigures.objects.filter(campaign=campaign).delete()

    for name, url in pages.items():
        seconds, queries, response = timed_get(client, url, args.repeat, before=drop_stored)
        print(f"{name + ', nothing stored:':34s} {seconds:7.2f} s   {queries:4d} queries   HTTP {response.status_code}")
    # What the workers do after the data changed (in this process): the figures, then the default report's job.
    start = time.perf_counter()
    compute_campaign_figures(campaign, report=False)
    compute_report(campaign.slug)
    print(f"{'worker: figures and report:':34s} {time.perf_counter() - start:7.2f} s")
    for name, url in pages.items():
        seconds, queries, response = timed_get(client, url, args.repeat)
        print(f"{name + ', figures stored:':34s} {seconds:7.2f} s   {queries:4d} queries   HTTP {response.status_code}")


if __name__ == "__main__":
    main()
