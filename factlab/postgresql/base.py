"""Django's PostgreSQL backend (psycopg 3), whose per-request health check costs no round trip on a quiet connection.

With ``CONN_HEALTH_CHECKS`` Django sends ``SELECT 1`` before the first query of every request on a kept connection,
so that one PostgreSQL closed meanwhile (a restart, ``pg_terminate_backend``, an idle timeout) is replaced instead of
failing the request. On an item cycle that is two of its round trips, each with its share of the web worker's and
the server's CPU. Nothing else arrives on an idle connection between requests: a server that closes it sends its
goodbye (or the socket's end), which makes the socket readable. So the check looks first: an idle connection with
nothing to read is healthy; anything else (data waiting, a transaction left open, a closed or broken connection)
gets Django's own check, which sends ``SELECT 1`` and replaces the connection if that fails. After an error in a
request (``close_if_unusable_or_obsolete``) Django's check runs unchanged.
"""
from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self):
        if self.connection is not None and self.health_check_enabled and not self.health_check_done and quiet(self.connection):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()


def quiet(connection) -> bool:
    """Whether a psycopg ``connection`` is open, idle (no transaction) and has nothing waiting on its socket: what a
    connection the server has not closed looks like between two requests."""
    if connection.closed or connection.broken or connection.info.transaction_status != pq.TransactionStatus.IDLE:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):  # the descriptor is gone
        return False
    return not readable
