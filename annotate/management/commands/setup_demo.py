"""Prepare the demo: FRANK campaign imported and running, a demo admin and a demo annotator."""
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotate.demo_accounts import DEMO_ADMIN, DEMO_ANNOTATOR, refuse_in_production
from annotate.importers.base import ImportFailed
from annotate.models import Campaign, CampaignStatus, Worker
from annotate.services.campaigns import set_campaign_status
from annotate.services.crowd import ensure_prolific_codes
from annotate.services.imports import import_dataset

from ._progress import TerminalProgress

DEMO_SLUG = "frank-demo"
DEMO_USERS = (
    # username, password, staff
    (*DEMO_ADMIN, True),
    (*DEMO_ANNOTATOR, False),
)


def default_frank_data() -> Path:
    shared = Path(settings.BASE_DIR).parent / "shared" / "data" / "frank"
    return shared if (shared / "human_annotations.json").is_file() else Path(settings.BASE_DIR) / "data" / "frank-subset"


class Command(BaseCommand):
    help = "Import FRANK into the 'frank-demo' campaign, start it, and create the demo admin and annotator."

    def add_arguments(self, parser):
        parser.add_argument("--frank-data", type=Path, default=None, help="FRANK data folder (default: ../shared/data/frank, else data/frank-subset).")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        refuse_in_production("setup_demo")
        frank_dir = options["frank_data"] or default_frank_data()
        progress = TerminalProgress("import FRANK", enabled=not options["no_progress"])
        try:
            report = import_dataset(
                "frank", [frank_dir], campaign_slug=DEMO_SLUG, campaign_kind="frank", campaign_name="FRANK demo", progress=progress
            )
        except ImportFailed as exc:
            raise CommandError(f"demo import failed: {exc}") from exc
        finally:
            progress.close()
        self.stdout.write(report.summary_line())
        campaign = Campaign.objects.get(slug=DEMO_SLUG)
        if not campaign.description:
            campaign.description = (
                "Read a news article, then judge each sentence of its machine-written summaries: are the facts correct? "
                "If not, say which kind of error it is (FRANK protocol)."
            )
            campaign.save(update_fields=["description"])
        ensure_prolific_codes(campaign)
        if campaign.status in (CampaignStatus.DRAFT, CampaignStatus.PAUSED):
            set_campaign_status(campaign, CampaignStatus.RUNNING)
        User = get_user_model()
        for username, password, staff in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff, "is_superuser": staff})
            if created:
                user.set_password(password)
                user.save()
            if not staff:
                Worker.objects.get_or_create(user=user)
            else:
                campaign.researchers.add(user)
        self.stdout.write(self.style.SUCCESS(
            f"Demo ready: campaign '{DEMO_SLUG}' is running. Sign in as demo-admin / factlab-admin or demo-annotator / factlab-annotator."
        ))
