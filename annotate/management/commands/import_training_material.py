"""Import a campaign's own tutorial and qualification material (JSON, see docs/training-material.md)."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from annotate.protocols import protocol_for
from annotate.qualification_pool import MaterialError


class Command(BaseCommand):
    help = (
        "Validate PATH (FRANK: tutorial and/or qualification material; BUMP Task 1/Task 2: a qualification pool) "
        "and store it on the campaign; --reset restores the default."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("path", type=Path, nargs="?", help="Material .json file.")
        parser.add_argument("--reset", action="store_true", help="Drop the campaign's material (its protocol's default again).")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']!r}")
        protocol = protocol_for(campaign.kind)
        if not protocol.takes_training_material:
            raise CommandError(f"campaign {campaign.slug!r} is a {campaign.get_kind_display()} campaign, which takes no imported material")
        if options["reset"]:
            Campaign.objects.filter(pk=campaign.pk).update(training_material={})
            self.stdout.write(f"{campaign.slug}: default material restored")
            return
        if options["path"] is None:
            raise CommandError("give the material file (or --reset)")
        try:
            data = json.loads(options["path"].read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(f"cannot read {options['path']}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise CommandError(f"{options['path']}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
        try:
            material = protocol.parse_training_material(data)
        except MaterialError as exc:
            raise CommandError(f"{options['path']}: {exc}; nothing was stored") from exc
        Campaign.objects.filter(pk=campaign.pk).update(training_material=material)
        self.stdout.write(f"{campaign.slug}: imported {', '.join(sorted(material))}")
