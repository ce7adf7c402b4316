"""Prepare the BUMP demo: Task 1 (taxonomy) and Task 2 (free-style, exclusive with Task 1) campaigns, running."""
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotate.bump import kinds as bump_kinds
from annotate.bump.review import make_reviewer
from annotate.bump.services import create_bump_campaign
from annotate.demo_accounts import DEMO_REVIEWER, refuse_in_production
from annotate.importers.base import ImportFailed
from annotate.models import Campaign, CampaignStatus
from annotate.protocols import kinds_of_family
from annotate.services.campaigns import set_campaign_status
from annotate.services.crowd import ensure_prolific_codes
from annotate.services.imports import import_dataset

TASK1_SLUG = "bump-task1"
TASK2_SLUG = "bump-task2"
REVIEWER = DEMO_REVIEWER


def default_samples_dir() -> Path:
    shared = Path(settings.BASE_DIR).parent / "shared" / "data" / "samples"
    if (shared / "bump_task1_sample.json").is_file() and (shared / "bump_task2_sample.json").is_file():
        return shared
    return Path(settings.BASE_DIR) / "data" / "bump-samples"


class Command(BaseCommand):
    help = "Create the running BUMP demo campaigns 'bump-task1' and 'bump-task2' (redundancy 1) and a demo reviewer."

    def add_arguments(self, parser):
        parser.add_argument("--samples", type=Path, default=None, help="Folder with bump_task1_sample.json and bump_task2_sample.json.")

    def handle(self, *args, **options):
        refuse_in_production("setup_bump_demo")
        samples = options["samples"] or default_samples_dir()
        task1 = Campaign.objects.filter(slug=TASK1_SLUG).first() or create_bump_campaign(
            TASK1_SLUG, "BUMP Task 1 demo: introduce a given error type", bump_kinds.TAXONOMY,
            description="Edit a reference summary to introduce exactly one error of the requested type (BUMP Task 1).",
        )
        task2 = Campaign.objects.filter(slug=TASK2_SLUG).first() or create_bump_campaign(
            TASK2_SLUG, "BUMP Task 2 demo: introduce any error", bump_kinds.FREE, exclusive_with=task1,
            description="Edit a reference summary to introduce one factual error of any kind (BUMP Task 2).",
        )
        for campaign, name in ((task1, "bump_task1_sample.json"), (task2, "bump_task2_sample.json")):
            if campaign.kind not in kinds_of_family("bump"):
                raise CommandError(f"campaign {campaign.slug!r} exists and is not a BUMP campaign ({campaign.kind})")
            try:
                report = import_dataset("bump", [samples / name], campaign_slug=campaign.slug)
            except ImportFailed as exc:
                raise CommandError(f"BUMP demo import failed: {exc}") from exc
            self.stdout.write(report.summary_line())
            # A demo: it takes BUMP's shipped qualification pools, whose keys are in the source (a real campaign
            # imports its own material, manage.py import_training_material).
            Campaign.objects.filter(pk=campaign.pk).update(shipped_qualification_accepted=True)
            ensure_prolific_codes(campaign)
            if campaign.status in (CampaignStatus.DRAFT, CampaignStatus.PAUSED):
                set_campaign_status(campaign, CampaignStatus.RUNNING)
        user, created = get_user_model().objects.get_or_create(username=REVIEWER[0])
        if created:
            user.set_password(REVIEWER[1])
            user.save(update_fields=["password"])
        make_reviewer(user)
        self.stdout.write(self.style.SUCCESS(
            f"BUMP demo ready from {samples}: /c/{TASK1_SLUG}/ and /c/{TASK2_SLUG}/ (Task 2 excludes Task 1 qualifiers); "
            f"review at /c/<slug>/bump/review/ as {REVIEWER[0]} / {REVIEWER[1]}"
        ))
