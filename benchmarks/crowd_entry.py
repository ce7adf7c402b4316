"""Replay the identity-farming attack found on the crowd entry against the crowd entry and print what it gets now.

300 anonymous arrivals with fresh Prolific ids from one address (the attack), then the same number from
distinct addresses until the campaign's hourly cap, then returning workers in their own browsers (the
baseline: the cost of an arrival that creates nothing). Runs in-process (Django test client) on a throwaway
test database and its own Redis cache keys; prints identities created, status counts and ms per arrival.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python benchmarks/crowd_entry.py [--arrivals 300]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arrivals", type=int, default=300)
    args = parser.parse_args()

    import logging

    import django

    django.setup()
    logging.getLogger("django.request").setLevel(logging.ERROR)  # refusals are the point here, not noise
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from annotate.models import Worker
        from annotate.providers import study_token
        from tests.factories import make_campaign, make_document

        campaign = make_campaign(new_crowd_workers_per_hour=100)
        make_document(campaign)
        base = f"/c/{campaign.slug}/?study={study_token(campaign)}&PROLIFIC_PID="
        run = uuid.uuid4().hex[:8]

        def replay(label: str, ids: list[str], ips: list[str], clients: list[Client] | None = None) -> None:
            before = Worker.objects.count()
            statuses: Counter[int] = Counter()
            start = time.perf_counter()
            for k, (pid, ip) in enumerate(zip(ids, ips, strict=True)):
                client = clients[k] if clients else Client()
                statuses[client.get(base + pid, REMOTE_ADDR=ip).status_code] += 1
            elapsed = time.perf_counter() - start
            print(f"{label:<46} {len(ids):>4} arrivals  {Worker.objects.count() - before:>4} identities created  "
                  f"statuses {dict(sorted(statuses.items()))}  {1000 * elapsed / len(ids):6.1f} ms/arrival")
            return elapsed / len(ids)

        n = args.arrivals
        one_ip = f"10.77.{uuid.uuid4().int % 250}.1"
        replay("attack: fresh ids from one address", [f"A{run}{k}" for k in range(n)], [one_ip] * n)
        spread = [f"10.{(k // 250) % 250}.{k % 250}.{uuid.uuid4().int % 250 + 1}" for k in range(n)]
        replay("attack: fresh ids from distinct addresses", [f"B{run}{k}" for k in range(n)], spread)
        # Baseline: the workers the caps let in come back, each in its own browser (cookie bound).
        returning = list(Worker.objects.filter(provider="prolific").values_list("external_id", flat=True))
        clients = []
        for pid in returning:
            client = Client()
            client.force_login(Worker.objects.get(external_id=pid).user)
            client.get(base + pid)  # session of the worker; the cookie binding is checked per arrival
            clients.append(client)
        per_new = replay("baseline: returning workers, own browser", returning, ["10.1.1.1"] * len(returning), clients)
        impostors = replay("impersonation: the same ids, other browsers", returning, ["10.2.2.2"] * len(returning))
        print(f"ratio impersonation refusal / returning arrival: {impostors / per_new:.2f}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()


if __name__ == "__main__":
    main()
