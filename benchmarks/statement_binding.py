"""CPU of a FRANK item cycle with the queries' parameters bound by the client or by PostgreSQL, paired in one process.

Runs task page + submit cycles through Django's test client on a database the load benchmark seeded
(``benchmarks/load_test.py --database NAME``: FRANK imported into a running campaign), in blocks that switch
between client-side binding (psycopg quotes the values into the SQL: a new statement text per call, parsed
and planned on every run) and server-side binding (one text per statement, prepared by psycopg after its
second run on the connection: the settings' default). Each block opens a new connection and a new
annotator; the order of the two alternates from block to block, so a machine whose speed drifts during
the run shifts both alike. Prints, for each binding, the median CPU per cycle of PostgreSQL's backend and
of this process (the web side: views, ORM, driver).

    DJANGO_DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab_bench .venv/bin/python benchmarks/statement_binding.py --blocks 16
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")

TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=16, help="blocks of each binding (alternating order)")
    parser.add_argument("--cycles", type=int, default=15, help="measured item cycles per block (after 2 to warm up)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import django

    django.setup()
    import psutil
    from django.db import connection
    from django.test import Client

    from benchmarks.cycle_instructions import seeded_campaign_for_cycles
    from tests.factories import make_worker, qualify

    if connection.vendor != "postgresql":
        sys.exit("statement_binding.py needs PostgreSQL: set DATABASE_URL to a database load_test.py seeded")
    campaign, task_url = seeded_campaign_for_cycles()  # nobody blocked for answering "factual" everywhere

    def cycle(client: Client) -> bool:
        found = TASK_DATA.search(client.get(task_url).content.decode())
        if found is None:
            return False
        data = json.loads(found.group(1))
        body = {"submission_key": data["submission_key"],
                "summaries": [{"answers": [{"factual": True, "categories": []} for _ in s["sentences"]]} for s in data["summaries"]]}
        if data.get("entity_options"):  # the reading check: the option the article does not name
            article = json.dumps(data["article"]).lower()
            body["entity_choice"] = next((i for i, o in enumerate(data["entity_options"]) if o.lower() not in article), 0)
        return client.post(data["urls"]["submit"], body, content_type="application/json").status_code == 200

    def backend_cpu(process: psutil.Process) -> float:
        times = process.cpu_times()
        return times.user + times.system

    per_cycle: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for block in range(args.blocks):
        for server_side in ((False, True) if block % 2 == 0 else (True, False)):
            connection.close()
            connection.settings_dict["OPTIONS"]["server_side_binding"] = server_side
            connection.settings_dict["OPTIONS"]["prepare_threshold"] = 2 if server_side else None
            worker = make_worker(f"binding-{uuid.uuid4().hex[:12]}")
            qualify(worker, campaign)
            client = Client()
            client.force_login(worker.user)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backend = psutil.Process(cursor.fetchone()[0])
            cycle(client), cycle(client)  # what a connection does once (and the statements' first two runs)
            postgres_before, web_before, done = backend_cpu(backend), time.process_time(), 0
            for _ in range(args.cycles):
                done += cycle(client)
            if done:
                per_cycle[server_side].append((1000 * (backend_cpu(backend) - postgres_before) / done,
                                               1000 * (time.process_time() - web_before) / done))
    medians = {}
    for server_side, rows in per_cycle.items():
        name = "server-side binding (prepared)" if server_side else "client-side binding"
        medians[server_side] = [statistics.median(r[i] for r in rows) for i in (0, 1)]
        print(f"{name}: PostgreSQL {medians[server_side][0]:.1f} ms, web side {medians[server_side][1]:.1f} ms per cycle "
              f"(median of {len(rows)} blocks)")
    if medians[False][0] and medians[False][1]:
        print(f"ratio server-side / client-side: PostgreSQL {medians[True][0] / medians[False][0]:.2f}, "
              f"web side {medians[True][1] / medians[False][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
