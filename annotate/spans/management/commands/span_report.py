"""``manage.py span_report <campaign>``: the span section of a campaign's report, as JSON."""
import json

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from annotate.spans.report import span_report


class Command(BaseCommand):
    help = "Print a span campaign's agreement, unified-type distribution and word-level detector figures as JSON."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("--min-annotators", type=int, default=2, help="annotators needed for a type (AggreFact: 2)")
        parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the intervals")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']!r}")
        section = span_report(campaign, min_annotators=options["min_annotators"], n_resamples=options["resamples"])
        self.stdout.write(json.dumps(section, indent=2))
