"""Exit 0 when the Celery workers of this machine consume their queues, 1 (naming why) otherwise.

The containers' health check and a supervisor's watchdog: a worker that answers pings but no longer takes
messages, one whose process froze, and one that is gone all fail (factlab/liveness.py).
"""
from django.core.management.base import BaseCommand, CommandError

from factlab.liveness import problems


class Command(BaseCommand):
    help = "Check that this machine's Celery workers still consume their queues (exit status 1 when not)."

    def add_arguments(self, parser):
        parser.add_argument("--name", help="the worker's node name (celery -n), e.g. celery@host; default: every worker here")
        parser.add_argument("--kill-frozen", action="store_true",
                            help="SIGKILL a worker process that gives no sign of life, so that its supervisor restarts it")

    def handle(self, *args, name=None, kill_frozen=False, **options):
        found = problems(name, kill_frozen=kill_frozen)
        if found:
            raise CommandError("; ".join(found))
        self.stdout.write("alive")
