from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from metrics_service.scoring.healing import requeue_stale_chunks


class Command(BaseCommand):
    help = "Send again the scoring chunks stuck in 'running' (their worker was lost and the broker did not re-deliver)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than", type=int, default=None, metavar="SECONDS",
            help="Running for longer than this (default: FACTLAB_SCORING_STALE_SECONDS).",
        )

    def handle(self, *args, **options):
        seconds = options["older_than"]
        if seconds is not None and seconds < 0:
            raise CommandError("--older-than must be zero or more seconds")
        ids = requeue_stale_chunks(timedelta(seconds=seconds) if seconds is not None else None)
        self.stdout.write(f"re-queued {len(ids)} chunk(s)" + (f": {', '.join(map(str, ids))}" if ids else ""))
