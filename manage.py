#!/usr/bin/env python
"""Django's command-line utility for FactLab."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A deployment mistake (e.g. no DJANGO_SECRET_KEY): one clear line and status 1, no traceback.
        print(f"FactLab is not configured: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
