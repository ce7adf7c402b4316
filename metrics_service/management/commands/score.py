"""``manage.py score --campaign SLUG --metrics coco,rouge,bleu [--coco-mask sent] [--sync]``.

Submits one scoring job per metric and shows a progress bar per job, polling the job rows (or, with
``--sync``, runs the chunks here without a broker).
"""
from __future__ import annotations

import json
import sys
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.models import Campaign
from metrics_service.models import JobStatus, ScoringJob
from metrics_service.scoring.jobs import job_progress, submit_scoring_job
from metrics_service.scoring.registry import build_scorer


def parse_config_options(values: list[str]) -> dict[str, dict]:
    """Parse ``METRIC.OPTION=VALUE`` strings (VALUE as JSON when it parses, else as text) per metric."""
    configs: dict[str, dict] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        metric, dot, option = key.partition(".")
        if not sep or not dot or not metric or not option:
            raise CommandError(f"--config {value!r}: expected METRIC.OPTION=VALUE, e.g. coco.model=/models/bart-large-cnn")
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = raw
        configs.setdefault(metric, {})[option] = parsed
    return configs


class Command(BaseCommand):
    help = "Score a campaign's summaries with one or more metrics (one background job per metric)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("--metrics", required=True, help="Comma-separated scorer names, e.g. coco,rouge,bleu.")
        parser.add_argument("--coco-mask", help="CoCo masking strategies, comma-separated: token, span, sent, doc (sets coco.masks).")
        parser.add_argument("--config", action="append", default=[], metavar="METRIC.OPTION=VALUE", help="A scorer option; repeatable.")
        parser.add_argument("--chunk-size", type=int, default=64)
        parser.add_argument("--sync", action="store_true", help="Run the chunks in this process, without a broker.")
        parser.add_argument("--no-wait", action="store_true", help="Submit and return without waiting.")
        parser.add_argument("--timeout", type=float, default=0, help="Stop waiting after this many seconds (0: wait until done).")
        parser.add_argument("--poll-interval", type=float, default=1.0)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        try:
            campaign = Campaign.objects.get(slug=options["campaign"])
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign with slug {options['campaign']!r}") from None
        metrics = [m.strip() for m in options["metrics"].split(",") if m.strip()]
        if not metrics:
            raise CommandError("--metrics is empty; give comma-separated scorer names, e.g. rouge,bleu")
        configs = parse_config_options(options["config"])
        if options["coco_mask"]:
            masks = [m.strip() for m in options["coco_mask"].split(",") if m.strip()]
            configs.setdefault("coco", {})["masks"] = masks
        unused = sorted(set(configs) - set(metrics))
        if unused:
            raise CommandError(f"options given for metric(s) not requested: {', '.join(unused)}")
        for metric in metrics:  # validate every metric first: a typo in the last one submits nothing
            try:
                build_scorer(metric, configs.get(metric))
            except ValueError as exc:
                raise CommandError(f"{metric}: {exc}") from exc
        show = not options["no_progress"]

        jobs: list[ScoringJob] = []
        for metric in metrics:
            bar = None
            if options["sync"]:
                bar = tqdm(desc=metric, unit="summary", file=sys.stderr, disable=not show, dynamic_ncols=True)

                def progress(job: ScoringJob, bar=bar) -> None:
                    bar.total = job.total
                    bar.n = job.done + job.failed
                    bar.refresh()
            try:
                job = submit_scoring_job(
                    metric=metric, config=configs.get(metric), campaign=campaign, chunk_size=options["chunk_size"],
                    sync=options["sync"], progress=progress if bar is not None else None,
                )
            except ValueError as exc:
                raise CommandError(f"{metric}: {exc}") from exc
            finally:
                if bar is not None:
                    bar.close()
            jobs.append(job)
            if not options["sync"]:
                self.stdout.write(f"submitted scoring job {job.pk} ({metric}, queue {job.queue}, {job.total} summaries)")
        if not options["sync"] and not options["no_wait"]:
            self._wait(jobs, options["timeout"], options["poll_interval"], show)
        self._report(jobs, waited=options["sync"] or not options["no_wait"])

    def _wait(self, jobs: list[ScoringJob], timeout: float, interval: float, show: bool) -> None:
        bars = {
            job.pk: tqdm(desc=job.metric, total=job.total, unit="summary", position=n, file=sys.stderr, disable=not show, dynamic_ncols=True)
            for n, job in enumerate(jobs)
        }
        deadline = time.monotonic() + timeout if timeout > 0 else None
        try:
            while True:
                for job in jobs:
                    job.refresh_from_db()
                    bars[job.pk].n = job.done + job.failed
                    bars[job.pk].refresh()
                if all(job.is_finished for job in jobs):
                    return
                if deadline is not None and time.monotonic() > deadline:
                    running = ", ".join(str(job.pk) for job in jobs if not job.is_finished)
                    raise CommandError(f"timed out after {timeout:g} s; job(s) {running} go on in the background")
                time.sleep(interval)
        finally:
            for bar in bars.values():
                bar.close()

    def _report(self, jobs: list[ScoringJob], waited: bool) -> None:
        failed = []
        for job in jobs:
            job.refresh_from_db()
            info = job_progress(job)
            line = f"job {job.pk} {job.metric}: {info['status']} - {info['message']}"
            if job.status == JobStatus.DONE or not waited:
                self.stdout.write(self.style.SUCCESS(line) if job.status == JobStatus.DONE else line)
            else:
                failed.append(line + (f" ({info['error']})" if info["error"] else ""))
        if failed:
            raise CommandError("scoring did not complete:\n" + "\n".join(failed))
