"""Create the first admin of a deployment: asked for at the terminal, or from environment variables.

The production recipe (docs/running.md) runs this once per release; it is idempotent (an existing account is left
as it is), so running the recipe again never resets a password someone chose.
"""
from __future__ import annotations

import os
import sys

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from annotate.demo_accounts import is_published_credential

USERNAME_VAR = "FACTLAB_ADMIN_USERNAME"
EMAIL_VAR = "FACTLAB_ADMIN_EMAIL"
PASSWORD_VAR = "FACTLAB_ADMIN_PASSWORD"


class Command(BaseCommand):
    help = (
        f"Create the first admin (a superuser). With {USERNAME_VAR} and {PASSWORD_VAR} (and optionally {EMAIL_VAR}) "
        "set, it reads them; otherwise it asks at the terminal. An existing account of that name is left unchanged."
    )

    def handle(self, *args, **options):
        username = os.environ.get(USERNAME_VAR, "").strip()
        password = os.environ.get(PASSWORD_VAR, "")
        email = os.environ.get(EMAIL_VAR, "").strip()
        User = get_user_model()
        if username and User.objects.filter(username=username).exists():
            self.stdout.write(f"admin {username!r} exists; left unchanged")
            return
        if not (username and password):
            if User.objects.filter(is_superuser=True, is_active=True).exists() and not username:
                self.stdout.write(f"an admin exists; set {USERNAME_VAR} to create another one")
                return
            if not sys.stdin.isatty():
                raise CommandError(
                    f"no admin exists: set {USERNAME_VAR} and {PASSWORD_VAR} (and optionally {EMAIL_VAR}), "
                    "or run `manage.py create_admin` at a terminal to be asked"
                )
            call_command("createsuperuser", interactive=True, username=username or None, email=email or None)
            return
        if is_published_credential(username, password):
            raise CommandError(f"{PASSWORD_VAR}: this password is published in the README; choose another one")
        candidate = User(username=username, email=email)
        try:
            validate_password(password, user=candidate)
        except ValidationError as exc:
            raise CommandError(f"{PASSWORD_VAR}: " + " ".join(exc.messages)) from exc
        User.objects.create_superuser(username=username, email=email, password=password)
        self.stdout.write(self.style.SUCCESS(f"admin {username!r} created"))
