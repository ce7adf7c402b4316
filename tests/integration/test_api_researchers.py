"""Self-service researchers: the group after migrate, the command, the invitation flow (API and
page), researchers' own campaigns from uploads, their metric scores (jsonl and csv), and report filters."""
from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotate.models import Campaign, ImportJob, MetricScore
from annotate.roles import RESEARCHER, role_of
from tests.test_api_fixtures import *
from tests.test_api_fixtures import client_for

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-research-passphrase-17"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _docs_jsonl(n: int = 8) -> bytes:
    """A small campaign of ``n`` documents, two systems each, with imported human Factuality."""
    lines = []
    for i in range(n):
        lines.append(json.dumps({
            "id": f"doc-{i}", "text": f"Article {i} says Paris beat Lyon {i} to 0.", "dataset": "xsum" if i % 2 else "cnndm",
            "summaries": [
                {"system": "bart", "text": f"Paris won {i}-0.", "human_scores": {"Factuality": (i % 4) / 3}},
                {"system": "pegasus", "text": f"Lyon won {i}-0.", "human_scores": {"Factuality": ((i + 1) % 3) / 2}},
            ],
        }))
    return ("\n".join(lines) + "\n").encode()


def _upload(client, capture, name: str, content: bytes, **fields):
    with capture(execute=True):
        return client.post("/api/imports/", {"file": SimpleUploadedFile(name, content), **fields}, format="multipart")


def _invite_and_accept(admin_client, username: str = "ada", campaigns: list[str] | None = None) -> APIClient:
    created = admin_client.post("/api/researchers/", {"username": username, "campaigns": campaigns or []}, format="json")
    assert created.status_code == 201, created.content
    invitation = created.json()["invitation"]
    accepted = APIClient().post(
        "/api/auth/invitation/", {"uid": invitation["uid"], "token": invitation["token"], "password": PASSWORD}, format="json"
    )
    assert accepted.status_code == 200, accepted.content
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {accepted.json()['token']}")
    return client


def test_migrate_creates_the_researchers_group():
    # The migration's step is run as `migrate` runs it, on an empty group table: a transactional test earlier in
    # this process may have emptied the tables, and the rows migrations wrote with them.
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(connection)
    key = ("annotate", "0002_researchers_group")
    Group.objects.filter(name="researchers").delete()
    with connection.schema_editor() as editor:
        loader.get_migration(*key).apply(loader.project_state(key, at_end=False), editor)
    assert Group.objects.filter(name="researchers").exists()


def test_command_creates_an_invited_researcher_and_the_link_works_once(campaign, capsys):
    call_command("create_researcher", "grace", "--email", "grace@example.org", "--campaign", "frank-api", "--base-url", "http://lab.example")
    out = capsys.readouterr().out
    assert "researcher grace (campaigns: frank-api)" in out
    link = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("invitation link"))
    assert link.startswith("http://lab.example/accounts/invite/")
    user = get_user_model().objects.get(username="grace")
    assert not user.is_active and not user.has_usable_password() and role_of(user) == RESEARCHER
    path = link.removeprefix("http://lab.example")
    browser = Client()
    assert browser.get(path).status_code == 200
    mismatch = browser.post(path, {"password1": PASSWORD, "password2": PASSWORD + "x"})
    assert mismatch.status_code == 200 and b"the two passwords differ" in mismatch.content
    done = browser.post(path, {"password1": PASSWORD, "password2": PASSWORD})
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.is_active and user.check_password(PASSWORD)
    assert Client().get(path).status_code == 400  # one-time: the password change voided the token
    token = APIClient().post("/api/auth/token/", {"username": "grace", "password": PASSWORD}, format="json")
    assert token.status_code == 201 and token.json()["role"] == "researcher"


def test_command_with_password_and_bad_campaign(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    call_command("create_researcher", "hopper", "--password-stdin")
    assert "invitation link" not in capsys.readouterr().out
    assert get_user_model().objects.get(username="hopper").check_password(PASSWORD)
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no campaign with slug 'missing'"):
        call_command("create_researcher", "lovelace", "--campaign", "missing")
    assert not get_user_model().objects.filter(username="lovelace").exists()  # nothing stored half-way


def test_invitation_api_refuses_bad_tokens_weak_passwords_and_non_admins(admin_client, researcher_client, annotator_client):
    assert researcher_client.post("/api/researchers/", {"username": "x"}, format="json").status_code == 403
    assert annotator_client.get("/api/researchers/").status_code == 403
    created = admin_client.post("/api/researchers/", {"username": "turing"}, format="json").json()
    uid, token = created["invitation"]["uid"], created["invitation"]["token"]
    assert created["invitation"]["url"].startswith("http://testserver/accounts/invite/")
    anonymous = APIClient()
    forged = anonymous.post("/api/auth/invitation/", {"uid": uid, "token": token[:-2] + "zz", "password": PASSWORD}, format="json")
    assert forged.status_code == 400 and "unknown, already used or expired" in forged.json()["detail"]
    weak = anonymous.post("/api/auth/invitation/", {"uid": uid, "token": token, "password": "123"}, format="json")
    assert weak.status_code == 400 and "password" in weak.json()
    assert not get_user_model().objects.get(username="turing").is_active
    assert anonymous.post("/api/auth/invitation/", {"uid": uid, "token": token, "password": PASSWORD}, format="json").status_code == 200
    again = anonymous.post("/api/auth/invitation/", {"uid": uid, "token": token, "password": PASSWORD + "2"}, format="json")
    assert again.status_code == 400
    duplicate = admin_client.post("/api/researchers/", {"username": "turing"}, format="json")
    assert duplicate.status_code == 409 and "already exists" in str(duplicate.json())
    listed = admin_client.get("/api/researchers/").json()
    assert [r["username"] for r in listed if r["username"] == "turing"] and all("invitation" not in r for r in listed)


def test_admin_invitation_page_shows_a_working_link(admin_user, campaign):
    browser = Client()
    browser.force_login(admin_user)
    page = browser.post("/researchers/", {"username": "noether", "campaigns": ["frank-api"]})
    assert page.status_code == 200
    html = page.content.decode()
    link = html.split('id="invitation-link" size="90"')[0].rsplit('value="', 1)[1].split('"')[0]
    assert "/accounts/invite/" in link and "noether" in html
    assert list(get_user_model().objects.get(username="noether").granted_campaigns.values_list("slug", flat=True)) == ["frank-api"]
    annotator_page = Client()
    annotator_page.force_login(get_user_model().objects.create_user("someone"))
    assert annotator_page.get("/researchers/").status_code == 403


def test_researcher_creates_a_campaign_uploads_scores_and_reads_a_filtered_report(
    admin_client, campaign, django_capture_on_commit_callbacks
):
    ada = _invite_and_accept(admin_client)
    created = _upload(ada, django_capture_on_commit_callbacks, "docs.jsonl", _docs_jsonl(), format="jsonl", campaign="ada-study")
    assert created.status_code == 202, created.content
    assert ada.get(f"/api/imports/{created.json()['id']}/").json()["status"] == "succeeded"
    assert Campaign.objects.get(slug="ada-study").researchers.filter(username="ada").exists()
    assert ada.get("/api/campaigns/ada-study/").status_code == 200

    summaries = ada.get("/api/campaigns/ada-study/summaries/?page_size=100").json()["results"]
    rows = ["summary_id,metric,value"] + [f"{s['id']},my_metric,{s['human_scores']['Factuality'] * 0.5 + 0.1 * (s['id'] % 2)}" for s in summaries]
    scores = _upload(
        ada, django_capture_on_commit_callbacks, "mine.csv", "\n".join(rows).encode(), format="csv", kind="scores", campaign="ada-study"
    )
    assert ada.get(f"/api/imports/{scores.json()['id']}/").json()["status"] == "succeeded"
    assert MetricScore.objects.filter(metric="my_metric", source="imported").count() == 16
    by_name = "document,system,metric,value\ndoc-0,bart,other_metric,0.5\n"
    second = _upload(ada, django_capture_on_commit_callbacks, "n.csv", by_name.encode(), format="csv", kind="scores", campaign="ada-study")
    assert ada.get(f"/api/imports/{second.json()['id']}/").json()["status"] == "succeeded"

    report = ada.get("/api/campaigns/ada-study/report/?partial=false").json()
    assert report["correlations"]["my_metric"]["n"] == 16
    only_bart = ada.get("/api/campaigns/ada-study/report/?partial=false&system=bart").json()
    assert only_bart["options"]["system"] == "bart" and only_bart["n_human_rated"] == 8
    assert only_bart["correlations"]["my_metric"]["n"] == 8
    assert ada.get("/api/campaigns/ada-study/report/?system=bart&dataset=xsum").json()["n_human_rated"] == 4

    # Their own jobs only; other campaigns stay hidden (404) and a taken slug is refused.
    assert {j["campaign_slug"] for j in ada.get("/api/imports/").json()["results"]} == {"ada-study"}
    admin_job = _upload(admin_client, django_capture_on_commit_callbacks, "a.jsonl", _docs_jsonl(1), format="jsonl", campaign="admins")
    assert ada.get(f"/api/imports/{admin_job.json()['id']}/").status_code == 404
    hidden = ada.post("/api/imports/", {"file": SimpleUploadedFile("s.csv", b"summary_id,metric,value\n1,m,0.1\n"), "format": "csv", "kind": "scores", "campaign": "frank-api"}, format="multipart")
    assert hidden.status_code == 404
    taken = ada.post("/api/imports/", {"file": SimpleUploadedFile("d.jsonl", _docs_jsonl(1)), "format": "jsonl", "campaign": "frank-api"}, format="multipart")
    assert taken.status_code == 400 and "taken" in taken.json()["detail"]
    assert ImportJob.objects.filter(created_by__username="ada").count() == 3


def test_granted_researcher_uploads_scores_but_not_documents_to_a_running_campaign(
    campaign, researcher_client, django_capture_on_commit_callbacks
):
    bart = campaign.documents.order_by("id").first().summaries.get(system="bart")
    line = json.dumps({"summary_id": bart.pk, "metric": "their_metric", "value": 0.7}).encode()
    ok = _upload(researcher_client, django_capture_on_commit_callbacks, "s.jsonl", line, format="jsonl", kind="scores", campaign="frank-api")
    assert researcher_client.get(f"/api/imports/{ok.json()['id']}/").json()["status"] == "succeeded"
    assert MetricScore.objects.get(metric="their_metric").value == 0.7
    Campaign.objects.filter(pk=campaign.pk).update(status="running")
    running = researcher_client.post(
        "/api/imports/", {"file": SimpleUploadedFile("d.jsonl", _docs_jsonl(1)), "format": "jsonl", "campaign": "frank-api"}, format="multipart"
    )
    assert running.status_code == 400 and "only draft campaigns" in running.json()["detail"]


def test_bad_csv_scores_fail_atomically_naming_line_and_field(campaign, researcher_client, django_capture_on_commit_callbacks):
    bart = campaign.documents.order_by("id").first().summaries.get(system="bart")
    content = f"summary_id,metric,value\n{bart.pk},m1,0.5\n{bart.pk},m2,high\n".encode()
    job = _upload(researcher_client, django_capture_on_commit_callbacks, "bad.csv", content, format="csv", kind="scores", campaign="frank-api")
    status = researcher_client.get(f"/api/imports/{job.json()['id']}/").json()
    assert status["status"] == "failed" and status["error"]["record"] == "line 3" and status["error"]["field"] == "value"
    assert not MetricScore.objects.filter(metric__in=["m1", "m2"]).exists()
    header = _upload(researcher_client, django_capture_on_commit_callbacks, "h.csv", b"id,score\n1,2\n", format="csv", kind="scores", campaign="frank-api")
    assert "header must name" in researcher_client.get(f"/api/imports/{header.json()['id']}/").json()["error"]["message"]
    wrong = researcher_client.post("/api/imports/", {"file": SimpleUploadedFile("x.csv", b"a"), "format": "csv", "campaign": "new-one"}, format="multipart")
    assert wrong.status_code == 400 and "no dataset import in format 'csv'" in wrong.json()["detail"]


def test_slug_taken_between_upload_and_run_fails_the_job(admin_user, django_capture_on_commit_callbacks, monkeypatch):
    from annotate.services.import_jobs import execute_import_job
    from factlab.celery import app

    # As with a real broker: the upload only queues the job (after commit, captured here), it runs later.
    monkeypatch.setitem(app.conf, "task_always_eager", False)

    ada = get_user_model().objects.create_user("ada2", password=PASSWORD)
    from annotate.roles import make_researcher

    make_researcher(ada)
    client = client_for(ada)
    response = client.post("/api/imports/", {"file": SimpleUploadedFile("d.jsonl", _docs_jsonl(1)), "format": "jsonl", "campaign": "race"}, format="multipart")
    assert response.status_code == 202
    Campaign.objects.create(slug="race", name="Someone else's")
    job = execute_import_job(response.json()["id"])
    assert job.status == "failed" and "taken" in job.error["message"] and job.error["field"] == "campaign"
    assert not Campaign.objects.get(slug="race").documents.exists()
