from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from annotate.protocols import protocol_for

from ._progress import TerminalProgress


class Command(BaseCommand):
    help = (
        "Prepare what a campaign's task pages need (FRANK: entity options, traps, shown sentences, relevance), "
        "as the background job after each import does, so that claims do no NLP."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--all", action="store_true", help="recompute documents already prepared too")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug '{options['campaign']}'")
        progress = TerminalProgress(f"prepare pages of {campaign.slug}", enabled=not options["no_progress"])
        try:
            done = protocol_for(campaign.kind).prepare_campaign(campaign, only_missing=not options["all"], progress=progress)
        finally:
            progress.close()
        self.stdout.write(self.style.SUCCESS(f"{campaign.slug}: {done} document(s) prepared"))
