"""Shared fixtures of the API tests: three roles with tokens and a small campaign with every kind of row.

Imported by the ``test_api_*``/``test_export_*`` modules (``from tests.test_api_fixtures import *``).
"""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.bump.models import Edit
from annotate.models import (
    Assignment,
    AssignmentStatus,
    BonusEntry,
    Campaign,
    Document,
    Item,
    MetricScore,
    Participation,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)
from annotate.roles import make_researcher

TRAP_TEXT = "The gold trap sentence that no annotator may ever read via the API."
NEGATIVE_ENTITY = "Zanzibarville"


def client_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def admin_user(db):
    return get_user_model().objects.create_user("api-admin", password="admin-pass-123", is_staff=True)


@pytest.fixture
def researcher(db):
    user = get_user_model().objects.create_user("api-researcher", password="research-pass-123")
    make_researcher(user)
    return user


@pytest.fixture
def annotator(db):
    user = get_user_model().objects.create_user("api-annotator", password="annot-pass-123")
    Worker.objects.create(user=user, provider="prolific", external_id="ANNOT1")
    return user


@pytest.fixture
def admin_client(admin_user):
    return client_for(admin_user)


@pytest.fixture
def researcher_client(researcher):
    return client_for(researcher)


@pytest.fixture
def annotator_client(annotator):
    return client_for(annotator)


def _worker(name: str, **fields) -> Worker:
    user = get_user_model().objects.create_user(f"user-{name}")
    return Worker.objects.create(user=user, provider="prolific", external_id=f"EXT-{name}", **fields)


@pytest.fixture
def campaign(db, researcher, annotator):
    """A FRANK campaign granted to ``researcher``: 2 documents, 2 systems + references, 3 workers (one blocked here)."""
    camp = Campaign.objects.create(slug="frank-api", name="FRANK API", kind="frank")
    camp.researchers.add(researcher)
    docs = [
        Document.objects.create(
            campaign=camp, external_id="doc-cnn", dataset="cnndm", split="test", text="Paris beat Lyon. Lopez scored.",
            sentences=["Paris beat Lyon.", "Lopez scored."], entities=["Paris", "Lyon", "Lopez"], negative_entity=NEGATIVE_ENTITY,
        ),
        Document.objects.create(
            campaign=camp, external_id="doc-bbc", dataset="xsum", split="valid", text="Rain fell in Leeds.",
            sentences=["Rain fell in Leeds."], entities=["Leeds"], negative_entity="Atlantis",
        ),
    ]
    Trap.objects.create(document=docs[0], code="F1", text=TRAP_TEXT, expected_factual=False, expected_category="RelE")
    workers = [_worker("a"), _worker("b"), _worker("c")]
    Participation.objects.create(worker=workers[2], campaign=camp, is_blocked=True, blocked_reason="traps", trap_total=4, trap_correct=1)
    Participation.objects.create(worker=workers[0], campaign=camp, trap_total=4, trap_correct=4, items_submitted=2)
    summaries = {}
    for doc in docs:
        Summary.objects.create(document=doc, system="reference", text="Ref.", sentences=["Ref."], is_reference=True)
        for system in ("bart", "pegasus"):
            summaries[(doc.external_id, system)] = Summary.objects.create(
                document=doc, system=system, text=f"{system} one. {system} two.", sentences=[f"{system} one.", f"{system} two."],
                human_scores={"Factuality": 0.5} if system == "pegasus" else {},
            )
        item = Item.objects.create(campaign=camp, document=doc)
        for worker in workers:
            assignment = Assignment.objects.create(
                item=item, worker=worker, status=AssignmentStatus.SUBMITTED, expires_at=timezone.now() + timedelta(hours=1),
                layout={"trap_positions": [1]},
            )
            for system in ("bart", "pegasus"):
                for index in range(2):
                    factual = not (worker is workers[2] or (system == "bart" and index == 1 and worker is workers[1]))
                    SentenceJudgement.objects.create(
                        summary=summaries[(doc.external_id, system)], sentence_index=index, worker=worker, assignment=assignment,
                        factual=factual, categories=[] if factual else ["EntE"], lead_time_seconds=3.0,
                    )
    bart = summaries[("doc-cnn", "bart")]
    edited = Summary.objects.create(document=docs[0], system="human-edit", text="Lyon beat Paris.", sentences=["Lyon beat Paris."], edited_from=bart)
    Edit.objects.create(worker=workers[0], source_summary=bart, edited_summary=edited, requested_error_type="EntE", text="Lyon beat Paris.", word_distance=2)
    for (_doc_id, system), summary in summaries.items():
        MetricScore.objects.create(summary=summary, metric="rouge2", value=0.25 if system == "bart" else 0.5)
    BonusEntry.objects.create(key="b1", worker=workers[0], campaign=camp, amount=Decimal("1.50"), reason="item bonus")
    BonusEntry.objects.create(key="b2", worker=workers[0], campaign=camp, amount=Decimal("2.00"), reason="item bonus")
    camp.workers_for_tests = workers  # convenience for assertions
    return camp


__all__ = [
    "NEGATIVE_ENTITY",
    "TRAP_TEXT",
    "admin_client",
    "admin_user",
    "annotator",
    "annotator_client",
    "campaign",
    "client_for",
    "researcher",
    "researcher_client",
]
