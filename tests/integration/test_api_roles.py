"""Authentication and role checks of every API endpoint: admin, researcher (granted or not), annotator, anonymous."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.test_api_fixtures import *
from tests.test_api_fixtures import NEGATIVE_ENTITY, TRAP_TEXT, client_for

pytestmark = pytest.mark.django_db

C = "/api/campaigns/frank-api"
RESEARCHER_READABLE = [
    "/api/campaigns/", f"{C}/", f"{C}/documents/", f"{C}/summaries/", f"{C}/judgements/", f"{C}/edits/", f"{C}/scores/",
    f"{C}/scoring-jobs/", f"{C}/report/", f"{C}/export/?format=jsonl", f"{C}/export/?format=csv", f"{C}/export/?format=frank",
]
ADMIN_ONLY = [f"{C}/items/", f"{C}/assignments/", f"{C}/participations/", "/api/workers/", "/api/researchers/"]
OWN_JOBS = ["/api/imports/"]  # researchers list only their own uploads (tests/integration/test_api_researchers.py)


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


def test_token_is_created_with_password_and_revoked(researcher):
    client = APIClient()
    first = client.post("/api/auth/token/", {"username": "api-researcher", "password": "research-pass-123"}, format="json")
    assert first.status_code == 201 and first.json()["role"] == "researcher"
    again = client.post("/api/auth/token/", {"username": "api-researcher", "password": "research-pass-123"}, format="json")
    assert again.status_code == 200 and again.json()["token"] == first.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {first.json()['token']}")
    assert client.get("/api/campaigns/").status_code == 200
    assert client.delete("/api/auth/token/").status_code == 204
    assert client.get("/api/campaigns/").status_code == 401  # the revoked token no longer works


def test_token_refused_for_wrong_password_and_anonymous(researcher):
    client = APIClient()
    wrong = client.post("/api/auth/token/", {"username": "api-researcher", "password": "nope"}, format="json")
    assert wrong.status_code == 400 and "wrong password" in str(wrong.json())
    assert client.post("/api/auth/token/", {}, format="json").status_code == 400
    assert client.delete("/api/auth/token/").status_code in (401, 403)


def test_token_from_a_session(researcher):
    client = APIClient(enforce_csrf_checks=False)
    client.force_login(researcher)
    response = client.post("/api/auth/token/", {}, format="json")
    assert response.status_code == 201 and response.json()["username"] == "api-researcher"


@pytest.mark.parametrize("url", RESEARCHER_READABLE + ADMIN_ONLY + OWN_JOBS)
def test_anonymous_gets_401(campaign, url):
    assert APIClient().get(url).status_code == 401


@pytest.mark.parametrize("url", RESEARCHER_READABLE + ADMIN_ONLY + OWN_JOBS + [f"{C}/documents/1/", f"{C}/export/?format=bump"])
def test_annotator_token_is_refused_everywhere(campaign, annotator_client, url):
    response = annotator_client.get(url)
    assert response.status_code == 403
    body = _body(response).decode()
    assert TRAP_TEXT not in body and NEGATIVE_ENTITY not in body


def test_annotator_cannot_write(campaign, annotator_client):
    assert annotator_client.post(f"{C}/scoring-jobs/", {"metric": "rouge"}, format="json").status_code == 403
    assert annotator_client.post(f"{C}/start/").status_code == 403
    assert annotator_client.post("/api/campaigns/", {"slug": "x", "name": "x"}, format="json").status_code == 403


@pytest.mark.parametrize("url", RESEARCHER_READABLE)
def test_granted_researcher_reads_without_gold(campaign, researcher_client, url):
    response = researcher_client.get(url)
    assert response.status_code == 200, _body(response)[:300]
    body = _body(response)
    if url.endswith("format=frank"):
        import io
        import zipfile

        archive = zipfile.ZipFile(io.BytesIO(body))
        body = b"".join(archive.read(name) for name in archive.namelist())
    text = body.decode()
    assert TRAP_TEXT not in text and NEGATIVE_ENTITY not in text
    for username in ("user-a", "EXT-a", "api-annotator"):
        assert username not in text  # workers are pseudonymised


@pytest.mark.parametrize("url", ADMIN_ONLY)
def test_researcher_refused_admin_endpoints(campaign, researcher_client, url):
    assert researcher_client.get(url).status_code == 403


def test_researcher_cannot_manage_campaigns_or_reveal_workers(campaign, researcher_client):
    assert researcher_client.post("/api/campaigns/", {"slug": "new", "name": "New"}, format="json").status_code == 403
    assert researcher_client.post(f"{C}/start/").status_code == 403
    assert researcher_client.patch(f"{C}/", {"name": "x"}, format="json").status_code == 403
    assert researcher_client.get(f"{C}/judgements/?reveal_workers=1").status_code == 403
    assert researcher_client.get(f"{C}/export/?format=jsonl&reveal_workers=1").status_code == 403
    worker = campaign.workers_for_tests[0]
    assert researcher_client.post(f"/api/workers/{worker.pk}/block/", {}, format="json").status_code == 403


def test_researcher_not_granted_sees_nothing(campaign, django_user_model):
    from annotate.roles import make_researcher

    other = django_user_model.objects.create_user("other-researcher")
    make_researcher(other)
    client = client_for(other)
    assert client.get("/api/campaigns/").json()["count"] == 0
    for url in RESEARCHER_READABLE[1:]:
        assert client.get(url).status_code == 404, url
    assert client.post(f"{C}/scoring-jobs/", {"metric": "rouge"}, format="json").status_code == 404


def test_only_admin_sees_gold_in_documents(campaign, admin_client, researcher_client):
    admin_doc = admin_client.get(f"{C}/documents/?split=test").json()["results"][0]
    assert admin_doc["negative_entity"] == NEGATIVE_ENTITY
    assert admin_doc["traps"][0]["text"] == TRAP_TEXT and admin_doc["traps"][0]["expected_factual"] is False
    researcher_doc = researcher_client.get(f"{C}/documents/{admin_doc['id']}/").json()
    assert "negative_entity" not in researcher_doc and "traps" not in researcher_doc


def test_a_documents_traps_are_listed_in_id_order_after_one_of_them_changed(campaign, admin_client):
    # An update writes the row elsewhere in the table, so a list read in table order would move it to the end.
    from annotate.models import Document, Trap

    document = Document.objects.get(campaign=campaign, external_id="doc-cnn")
    for n in range(3):
        Trap.objects.create(document=document, code="ENT", text=f"Trap {n} of the ordering check.", expected_factual=False)
    first = Trap.objects.filter(document=document).order_by("id").first()
    Trap.objects.filter(pk=first.pk).update(overlap=0.5)
    listed = next(d for d in admin_client.get(f"{C}/documents/").json()["results"] if d["external_id"] == "doc-cnn")["traps"]
    expected = list(Trap.objects.filter(document=document).order_by("id").values_list("text", flat=True))
    assert [t["text"] for t in listed] == expected


def test_admin_export_includes_gold_only_for_admin(campaign, admin_client, researcher_client):
    import json

    admin_articles = json.loads(_body(admin_client.get(f"{C}/export/?format=frank&file=articles")))
    assert {a["hash"]: a["negative_entity"] for a in admin_articles}["doc-cnn"] == NEGATIVE_ENTITY
    researcher_articles = json.loads(_body(researcher_client.get(f"{C}/export/?format=frank&file=articles")))
    assert all("negative_entity" not in a and "traps" not in a for a in researcher_articles)
