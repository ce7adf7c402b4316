from django.core.management.base import BaseCommand, CommandError

from annotate.importers.base import ImportFailed
from annotate.protocols import PROTOCOLS, dataset_formats
from annotate.services.imports import import_dataset

from ._progress import TerminalProgress


class Command(BaseCommand):
    help = "Import documents and summaries (FRANK, BUMP, QAGS, FactLab JSONL, AggreFact or LLM-AggreFact) into a campaign, atomically and idempotently."

    def add_arguments(self, parser):
        parser.add_argument("format", choices=sorted(dataset_formats()))
        parser.add_argument("paths", nargs="+", help="Files (bump, qags, jsonl, aggrefact, llm_aggrefact) or FRANK's data folder (frank).")
        parser.add_argument("--campaign", required=True, help="Campaign slug; created if missing.")
        parser.add_argument("--kind", choices=list(PROTOCOLS), help="Kind of a newly created campaign.")
        parser.add_argument("--name", help="Name of a newly created campaign.")
        parser.add_argument("--dataset", choices=["cnndm", "xsum", "other"], help="qags: dataset of records that do not name one (default: from the file name, else other).")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        progress = TerminalProgress(f"import {options['format']}", enabled=not options["no_progress"])
        try:
            report = import_dataset(
                options["format"], options["paths"], campaign_slug=options["campaign"],
                campaign_kind=options["kind"], campaign_name=options["name"], progress=progress,
                dataset=options["dataset"],
            )
        except ImportFailed as exc:
            raise CommandError(f"import failed, nothing was stored: {exc}") from None
        except Exception as exc:  # one line, not a traceback (--traceback or -v 3 shows it)
            if options["traceback"] or options["verbosity"] >= 3:
                raise
            raise CommandError(f"import failed, nothing was stored: internal error ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
        finally:
            progress.close()
        self.stdout.write(self.style.SUCCESS(report.summary_line()))
