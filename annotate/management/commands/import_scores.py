from django.core.management.base import BaseCommand, CommandError

from annotate.importers.base import ImportFailed
from annotate.services.imports import SCORE_FORMATS, import_scores

from ._progress import TerminalProgress


class Command(BaseCommand):
    help = "Import external metric scores (FRANK baseline outputs, JSONL or CSV) for a campaign's summaries."

    def add_arguments(self, parser):
        parser.add_argument("format", choices=sorted(SCORE_FORMATS))
        parser.add_argument("path")
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        progress = TerminalProgress(f"import {options['format']} scores", enabled=not options["no_progress"])
        try:
            report = import_scores(options["format"], [options["path"]], campaign_slug=options["campaign"], progress=progress)
        except ImportFailed as exc:
            raise CommandError(f"import failed, nothing was stored: {exc}") from None
        except Exception as exc:  # one line, not a traceback (--traceback or -v 3 shows it)
            if options["traceback"] or options["verbosity"] >= 3:
                raise
            raise CommandError(f"import failed, nothing was stored: internal error ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
        finally:
            progress.close()
        self.stdout.write(self.style.SUCCESS(report.summary_line()))
