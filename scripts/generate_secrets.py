#!/usr/bin/env python3
"""Print the two production keys as shell `export` lines, for the production recipe in docs/running.md.

The recipe writes them once into var/secrets.env (readable by its owner only) and sources that file at every
start: the secret key signs sessions and the pseudonym key derives export pseudonyms, so both must stay the same
across restarts (a new pseudonym key would give every worker new pseudonyms in later exports).
"""
import secrets

for name in ("DJANGO_SECRET_KEY", "FACTLAB_PSEUDONYM_KEY"):
    print(f"export {name}={secrets.token_urlsafe(64)}")
