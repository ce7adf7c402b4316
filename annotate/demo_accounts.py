"""The demo's accounts, whose passwords are published in the README.

They exist so that `make demo` can be tried at once; on a server they would be an open door. So the commands
that create them refuse to run in production mode, and in production mode the sign-in backend refuses these
username/password pairs even where an older database still holds them.
"""
from __future__ import annotations

from django.conf import settings
from django.core.management.base import CommandError

DEMO_ADMIN = ("demo-admin", "factlab-admin")
DEMO_ANNOTATOR = ("demo-annotator", "factlab-annotator")
DEMO_REVIEWER = ("demo-reviewer", "factlab-reviewer")
PUBLISHED_CREDENTIALS = frozenset((DEMO_ADMIN, DEMO_ANNOTATOR, DEMO_REVIEWER))


def is_published_credential(username: str | None, password: str | None) -> bool:
    """True for a username/password pair printed in the README (the demo's accounts).

    Examples
    --------
    >>> is_published_credential("demo-admin", "factlab-admin")
    True
    >>> is_published_credential("demo-admin", "a password of its own")
    False
    """
    return (username, password) in PUBLISHED_CREDENTIALS


def refuse_in_production(command: str) -> None:
    """Stop a demo command before it creates accounts with published passwords on a production database."""
    if settings.PRODUCTION:
        raise CommandError(
            f"{command} creates the demo accounts, whose passwords are published in the README, and refuses to run "
            "in production mode (FACTLAB_PRODUCTION=1, the default under gunicorn). Create your first admin with "
            "`manage.py create_admin` instead; run the demo with `make demo`."
        )
