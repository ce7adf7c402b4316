"""CPU of a request's check of its kept PostgreSQL connection: Django's, or FactLab's backend's.

Django checks a kept connection before each request's first query by sending ``SELECT 1`` (``CONN_HEALTH_CHECKS``);
FactLab's backend (``factlab/postgresql/base.py``) sends it only when the connection is not quiet. An item cycle is
two requests, so it runs two such checks. This script measures what a request's start costs with each, as Django
runs it (the ``request_started`` signal, then the first query: the session's user by id, which every page reads),
on one connection, in blocks that alternate between the two checks (the order alternating from block to block, so
a machine whose speed drifts shifts both alike). Prints, for each check, the median CPU per request of this process
and of PostgreSQL's backend (system calls included, which ``cycle_instructions.py`` does not count), and what the
difference comes to per item cycle.

    DJANGO_DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/factlab_bench .venv/bin/python benchmarks/kept_connection_check.py
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=20, help="blocks of each check (alternating order)")
    parser.add_argument("--requests", type=int, default=1000, help="requests per block")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    args = parse_args(argv)
    import django

    django.setup()
    import psutil
    from django.contrib.auth import get_user_model
    from django.core.signals import request_finished, request_started
    from django.db import connections
    from django.db.backends.postgresql import base as django_postgresql

    from annotate.auth_backend import WorkerAwareBackend
    from factlab.postgresql.base import DatabaseWrapper

    connection = connections["default"]
    if not isinstance(connection, DatabaseWrapper):
        sys.exit("kept_connection_check.py needs PostgreSQL: set DATABASE_URL")
    user, _ = get_user_model().objects.get_or_create(username="kept-connection-check")
    backend_of_users = WorkerAwareBackend()

    def request() -> None:
        request_started.send(sender=None)
        backend_of_users.get_user(user.pk)
        request_finished.send(sender=None)

    checks = {
        "Django's check (SELECT 1 at every request)": types.MethodType(django_postgresql.DatabaseWrapper.close_if_health_check_failed, connection),
        "FactLab's check (SELECT 1 when not quiet)": types.MethodType(DatabaseWrapper.close_if_health_check_failed, connection),
    }
    names = list(checks)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    request()
    for block in range(args.blocks):
        for name in (names if block % 2 == 0 else names[::-1]):
            connection.close_if_health_check_failed = checks[name]
            request()
            backend = psutil.Process(connection.connection.info.backend_pid)
            server_before, web_before = sum(backend.cpu_times()[:2]), time.process_time()
            for _ in range(args.requests):
                request()
            if connection.connection is None or connection.connection.info.backend_pid != backend.pid:
                continue  # the connection was replaced meanwhile: its backend's CPU is not this block's
            results[name].append((1e6 * (time.process_time() - web_before) / args.requests,
                                  1e6 * (sum(backend.cpu_times()[:2]) - server_before) / args.requests))
    medians = {name: [statistics.median(r[i] for r in results[name]) for i in (0, 1)] for name in names}
    for name in names:
        web, server = medians[name]
        print(f"{name}: this process {web:.0f} µs, PostgreSQL {server:.0f} µs per request (median of {len(results[name])} blocks "
              f"of {args.requests})")
    (django_web, django_server), (ours_web, ours_server) = medians[names[0]], medians[names[1]]
    saved = (django_web + django_server) - (ours_web + ours_server)
    print(f"saved per request: {django_web - ours_web:.0f} µs here, {django_server - ours_server:.0f} µs in PostgreSQL; "
          f"per item cycle (two requests): {2 * saved / 1000:.2f} ms of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
