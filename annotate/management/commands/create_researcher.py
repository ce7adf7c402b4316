"""``manage.py create_researcher USERNAME [--email E] [--campaign SLUG ...] [--password-stdin] [--base-url URL]``."""
from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from annotate.services.researchers import (
    ResearcherError,
    create_researcher,
    invitation_for,
)


class Command(BaseCommand):
    help = (
        "Create a researcher (or make an existing user one) and grant campaigns. Without --password-stdin the "
        "account stays inactive and a one-time invitation link is printed, where the researcher sets a password."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--campaign", action="append", default=[], help="Slug of a campaign to grant (repeatable).")
        parser.add_argument("--password-stdin", action="store_true", help="Read the password from the first line of stdin.")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="Site address used in the invitation link.")

    def handle(self, *args, **options):
        password = None
        if options["password_stdin"]:
            password = sys.stdin.readline().rstrip("\n")
            if not password:
                raise CommandError("--password-stdin: the first line of stdin is empty")
        try:
            user = create_researcher(options["username"], email=options["email"], password=password, campaigns=options["campaign"])
        except ResearcherError as exc:
            raise CommandError(str(exc)) from exc
        granted = ", ".join(sorted(user.granted_campaigns.values_list("slug", flat=True))) or "none"
        self.stdout.write(self.style.SUCCESS(f"researcher {user.get_username()} (campaigns: {granted})"))
        if user.has_usable_password() and user.is_active:
            return
        link = options["base_url"].rstrip("/") + invitation_for(user).path
        self.stdout.write(f"invitation link (one-time): {link}")
