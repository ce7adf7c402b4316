from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from annotate.services.check_counts import recount_checked_answers


class Command(BaseCommand):
    help = (
        "Count every worker's checked answers (gold and trap answers per class and stratum, which the block and pay "
        "rules read) again from their submitted work, e.g. after gold was changed outside the application."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", help="campaign slug (default: every campaign)")

    def handle(self, *args, **options):
        campaign = None
        if options["campaign"]:
            campaign = Campaign.objects.filter(slug=options["campaign"]).first()
            if campaign is None:
                raise CommandError(f"no campaign with slug '{options['campaign']}'")
        counted = recount_checked_answers(campaign)
        self.stdout.write(self.style.SUCCESS(f"{counted} participation(s) counted again"))
