"""Write a campaign's reviewed minimal pairs in BUMP's JSON format."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.bump.exporter import iter_bump_records
from annotate.models import Campaign


class Command(BaseCommand):
    help = "Export a BUMP campaign's reviewed pairs (and imported pairs) to PATH in BUMP's JSON format."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("path", type=Path, help="Output .json file ('-' for standard output).")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']!r}")
        records = list(iter_bump_records(campaign))
        text = json.dumps(records, ensure_ascii=False, indent=1)
        if str(options["path"]) == "-":
            self.stdout.write(text)
        else:
            try:
                options["path"].write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot write {options['path']}: {exc}") from exc
            self.stdout.write(f"{len(records)} pairs written to {options['path']}")
