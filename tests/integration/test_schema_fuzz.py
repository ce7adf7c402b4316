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


# --- every constraint the API enforces is in the schema, and the server holds exactly to it


def _parameter(schema: dict, path: str, method: str, name: str) -> dict:
    return next(p["schema"] for p in schema["paths"][path][method]["parameters"] if p["name"] == name)


@pytest.mark.django_db
def test_schema_states_the_constraints_the_server_enforces(campaign, admin_client, researcher_client):
    from annotate.kinds import kind_choices
    from annotate.models import Campaign
    from metrics_service.scoring.registry import REGISTRY

    schema = admin_client.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    export, outputs = "/api/campaigns/{slug}/export/", "/api/campaigns/{slug}/report/outputs/{filename}"

    # Registry values are enums, read when the schema is generated; the server refuses anything else.
    kinds = _parameter(schema, "/api/campaigns/", "get", "kind")["enum"]
    assert kinds == [value for value, _ in kind_choices()]
    assert admin_client.get("/api/campaigns/?kind=" + kinds[0]).status_code == 200
    assert admin_client.get("/api/campaigns/?kind=nonsense").status_code == 400
    metrics = components["ScoringJobCreateRequest"]["properties"]["metric"]["enum"]
    assert metrics == sorted(REGISTRY) and "rouge" in metrics
    assert researcher_client.post("/api/campaigns/frank-api/scoring-jobs/", {"metric": "nonsense"}, format="json").status_code == 400

    # Row kinds: exactly the comma-separated list the pattern describes.
    rows = re.compile(_parameter(schema, export, "get", "rows")["pattern"])
    for value in ("judgements", "judgements,scores", "judgements,,scores", "judgements, scores", "documents", "judgements,"):
        response = researcher_client.get(f"/api/campaigns/frank-api/export/?format=jsonl&rows={value}")
        assert (response.status_code == 200) == bool(rows.match(value)), value

    # Report files: the endings the view answers.
    filename = re.compile(_parameter(schema, outputs, "get", "filename")["pattern"])
    assert filename.match("correlations.tex") and filename.match("roc_xsum.png") and not filename.match("report.pdf")
    assert researcher_client.get("/api/campaigns/frank-api/report/outputs/report.pdf").status_code == 400

    # Amounts: at least one digit, never negative where the model has a minimum of 0.
    amount = components["CampaignRequest"]["properties"]["pay_per_item"]["pattern"]
    for value in ("", "-", "-1.00", "1.5", ".5", "12.25"):
        response = admin_client.patch("/api/campaigns/frank-api/", {"pay_per_item": value}, format="json")
        assert (response.status_code == 200) == bool(re.match(amount, value)), (value, response.content)

    # Well-formed but taken: a conflict with the current state (409), which no schema can state.
    Campaign.objects.create(slug="taken-slug", name="Taken")
    taken = admin_client.patch("/api/campaigns/frank-api/", {"slug": "taken-slug"}, format="json")
    assert taken.status_code == 409 and "slug" in taken.json()
    assert admin_client.patch("/api/campaigns/frank-api/", {"slug": "taken slug"}, format="json").status_code == 400

    # Booleans are JSON's: campaigns and gold labels take JSON bodies only (a form's "0" is not a boolean).
    assert list(schema["paths"]["/api/campaigns/"]["post"]["requestBody"]["content"]) == ["application/json"]
    form = admin_client.post("/api/campaigns/", {"slug": "by-form", "name": "F", "bonus_on_public_labels": "0"}, format="multipart")
    assert form.status_code == 415
    visibility = schema["paths"]["/api/campaigns/{slug}/gold/{id}/"]["patch"]["requestBody"]
    assert visibility["required"] is True and list(visibility["content"]) == ["application/json"]
    assert visibility["content"]["application/json"]["schema"]["required"] == ["public"]
    # Row ids in filters: integers in PostgreSQL's bigint range from 1, and nothing else.
    summary = _parameter(schema, "/api/campaigns/{slug}/judgements/", "get", "summary")
    assert summary["type"] == "integer" and summary["minimum"] == 1 and summary["maximum"] == 2**63 - 1
    for value, ok in (("1", True), ("0", False), ("9.9e305", False), (str(2**63), False), ("1.5", False)):
        answer = researcher_client.get(f"/api/campaigns/frank-api/judgements/?summary={value}")
        assert (answer.status_code == 200) == ok, (value, answer.status_code)

    # Query options are single values, never empty; yes/no ones are true, false, 1 or 0.
    for query in ("factual=null", "factual=true&factual=false", "factual=", "reveal_workers=maybe", "system="):
        answer = admin_client.get(f"/api/campaigns/frank-api/judgements/?{query}")
        assert answer.status_code == 400 and query.split("=")[0] in answer.json()["detail"], (query, answer.content)
    for query in ("factual=true", "factual=0", "reveal_workers=1", "reveal_workers=false"):
        assert admin_client.get(f"/api/campaigns/frank-api/judgements/?{query}").status_code == 200, query
    assert "414" in schema["paths"]["/api/campaigns/{slug}/scores/"]["get"]["responses"]
    assert _parameter(schema, "/api/campaigns/{slug}/judgements/", "get", "system")["minLength"] == 1

    # NUL, which PostgreSQL text cannot hold, is refused anywhere and every free-text string says so.
    name = components["CampaignRequest"]["properties"]["name"]
    assert re.match(name["pattern"], "FRANK pilot") and not re.match(name["pattern"], "FRANK\x00pilot")
    assert _parameter(schema, "/api/campaigns/{slug}/judgements/", "get", "system")["pattern"] == name["pattern"]
    nul = admin_client.patch("/api/campaigns/frank-api/", {"name": "FRANK\x00pilot"}, format="json")
    assert nul.status_code == 400 and "NUL" in nul.json()["detail"]

    auto = components["CampaignRequest"]["properties"]["auto_score_metrics"]["items"]["enum"]
    assert auto == metrics
    refused = admin_client.patch("/api/campaigns/frank-api/", {"auto_score_metrics": ["nonsense"]}, format="json")
    assert refused.status_code == 400 and "auto_score_metrics" in refused.json()
