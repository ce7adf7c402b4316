"""Schema-based fuzzing of the whole API (schemathesis, in-process WSGI): no request may cause a server error.

Every operation of ``/api/schema/`` gets a few generated requests as an admin (the role that reaches the
most code), with the campaign slug pinned to a campaign holding data so that the handlers run for real.
Bounded: a handful of examples per operation, no deadline, about two minutes; every response is also checked
against the schema (documented status code, content type and body).
"""
from __future__ import annotations

import re

import pytest
import schemathesis
from django.db import transaction
from hypothesis import HealthCheck, settings

from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.test_api_fixtures import *
from tests.test_api_fixtures import client_for

# The answer must be no server error, a documented status code and content type, and a body that matches
# the documented schema (0 server errors and 0 schema mismatches).
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def _keep_test_connection():
    """Like Django's test client: the WSGI handler must not close the test's connection (and its transaction)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _load_schema():
    from factlab.wsgi import application

    loaded = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    # Revoking the token would only turn the rest of the run into 401s.
    return loaded.exclude(path="/api/auth/token/", method="DELETE")


schema = _load_schema()


@pytest.fixture
def fuzz_token(campaign, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    client_for(admin_user)  # creates the token
    return admin_user.auth_token.key


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_error(case, fuzz_token, _keep_test_connection):
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = "frank-api"
    # A savepoint per request: a database error in one request must not poison the next examples.
    with transaction.atomic():
        response = case.call(headers={"Authorization": f"Token {fuzz_token}"})
    assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.query} -> {response.status_code}: {response.text[:500]}"
    case.validate_response(response, checks=CHECKS)


@pytest.mark.django_db
def test_schema_and_local_docs_are_served(client):
    schema_response = client.get("/api/schema/?format=json")
    assert schema_response.status_code == 200
    paths = schema_response.json()["paths"]
    assert {"/api/campaigns/{slug}/export/", "/api/campaigns/{slug}/report/", "/api/imports/", "/api/auth/token/"} <= set(paths)
    docs = client.get("/api/docs/").content.decode()
    # No asset from a CDN (a random token on the page may contain the letters "cdn": look at URLs only).
    from_cdn = re.compile(r"(https?:)?//[^\s\"'<>]*(cdn|jsdelivr|unpkg)", re.IGNORECASE)
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in docs and not from_cdn.search(docs)
    redoc = client.get("/api/redoc/").content.decode()
    assert "/static/drf_spectacular_sidecar/redoc/" in redoc and not from_cdn.search(redoc)
