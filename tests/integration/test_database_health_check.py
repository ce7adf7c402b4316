"""The per-request health check of a kept PostgreSQL connection: no round trip while the connection is quiet, and
a connection the server closed is still found and replaced before the request's first query."""
from __future__ import annotations

import pytest
from django.db import connection, connections

from factlab.postgresql.base import DatabaseWrapper, quiet

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks_sent(monkeypatch):
    """How many times Django's own check (``SELECT 1``) ran."""
    sent = []
    original = DatabaseWrapper.is_usable

    def counted(self):
        sent.append(self.alias)
        return original(self)

    monkeypatch.setattr(DatabaseWrapper, "is_usable", counted)
    return sent


def next_request_check() -> None:
    """What Django does before the first query of a request on a kept connection."""
    connection.health_check_done = False
    connection.close_if_health_check_failed()


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_quiet_connection_is_kept_without_a_round_trip(checks_sent):
    pid = backend_pid()
    assert isinstance(connections["default"], DatabaseWrapper) and connection.health_check_enabled
    for _ in range(3):
        next_request_check()
    assert checks_sent == [] and connection.connection is not None and backend_pid() == pid


def test_a_connection_the_server_closed_is_replaced_before_the_first_query(checks_sent):
    import psycopg

    pid = backend_pid()
    killed_socket = connection.connection
    with psycopg.connect(_dsn(), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]
    _wait_until_readable(killed_socket)
    assert not quiet(killed_socket)
    next_request_check()  # Django's SELECT 1 fails: the connection is closed, and the query below opens another
    assert checks_sent == ["default"] and connection.connection is None
    assert backend_pid() != pid


def test_a_connection_inside_a_transaction_gets_djangos_check(checks_sent):
    from django.db import transaction

    with transaction.atomic():
        backend_pid()
        assert not quiet(connection.connection)
        next_request_check()
    assert checks_sent == ["default"]


def _dsn() -> str:
    params = connection.get_connection_params()
    return " ".join(f"{key}={value}" for key, value in params.items() if key in ("dbname", "user", "host", "port", "password") and value)


def _wait_until_readable(raw, timeout: float = 5.0) -> None:
    import select

    select.select([raw.fileno()], [], [], timeout)
