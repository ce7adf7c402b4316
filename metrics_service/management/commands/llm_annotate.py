"""``manage.py llm_annotate --campaign SLUG [--model NAME] [--config OPTION=VALUE ...] [--sync]``.

Runs the LLM annotator (the FRANK task, sentence by sentence) on a FRANK campaign through the endpoint of
``FACTLAB_LLM_BASE_URL``: a chunked scoring job (``llm_frank``) whose judgements are stored by the
pseudo-worker ``llm:<model>``. Rerunning costs no request for answers already obtained (response cache).
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from metrics_service.llm_annotation import submit_llm_annotation
from metrics_service.models import JobStatus
from metrics_service.scoring.jobs import job_progress


class Command(BaseCommand):
    help = "Annotate a FRANK campaign with an LLM judge (stored as a marked model annotator, not as a human)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug (a FRANK campaign).")
        parser.add_argument("--model", help="Served model name (default FACTLAB_LLM_MODEL).")
        parser.add_argument("--config", action="append", default=[], metavar="OPTION=VALUE",
                            help="An llm_frank option (concurrency, requests_per_minute, attempts, json_schema...); repeatable.")
        parser.add_argument("--chunk-size", type=int, default=16)
        parser.add_argument("--sync", action="store_true", help="Run the chunks in this process, without a broker.")

    def handle(self, *args, **options):
        try:
            campaign = Campaign.objects.get(slug=options["campaign"])
        except Campaign.DoesNotExist:
            raise CommandError(f"no campaign with slug {options['campaign']!r}") from None
        config = {}
        for value in options["config"]:
            key, sep, raw = value.partition("=")
            if not sep or not key:
                raise CommandError(f"--config {value!r}: expected OPTION=VALUE, e.g. concurrency=16")
            try:
                config[key] = json.loads(raw)
            except json.JSONDecodeError:
                config[key] = raw
        try:
            job = submit_llm_annotation(campaign=campaign, model=options["model"], config=config,
                                        chunk_size=options["chunk_size"], sync=options["sync"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        info = job_progress(job)
        line = f"job {job.pk} llm_frank ({job.config.get('model') or 'FACTLAB_LLM_MODEL'}): {info['status']} - {info['message']}"
        if options["sync"] and job.status != JobStatus.DONE:
            raise CommandError(f"{line} ({info['error']})")
        self.stdout.write(line)
