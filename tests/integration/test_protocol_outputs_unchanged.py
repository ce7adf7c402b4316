"""What FRANK and BUMP campaigns put out stays byte for byte the same while the code under them is rearranged.

One seeded scenario per protocol goes through the real claim, submit and review paths on a frozen clock:
three workers judge a FRANK campaign's summaries, two workers edit a BUMP Task 1 campaign's references and an
expert reviews the edits. Then every output a researcher or a payer reads is taken: the exports in every
format (jsonl, csv and parquet rows, FRANK's data folder with its parts, BUMP's minimal pairs through the API
and ``manage.py export_bump``), the report
(API JSON and ``manage.py report`` as text and JSON) and the pay decisions (the ledger, the payment and
approval files). Their SHA-256 digests were recorded before the protocols' models and hooks moved into their apps
(``tests/data/protocol_outputs.json``); the test recomputes them and names each output that differs.

Recording again (only when an output is meant to change): ``FACTLAB_RECORD_PROTOCOL_OUTPUTS=1`` with this test;
``FACTLAB_PROTOCOL_OUTPUTS_DIR=DIR`` also writes the outputs themselves there, to compare two runs' files.
"""
from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import random
import sys
import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.bump.models import Edit
from annotate.models import (
    BonusEntry,
    Campaign,
    Document,
    Item,
    MetricScore,
    Participation,
    PayDecision,
    QualificationStatus,
    Summary,
    Worker,
)
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.bonuses import PAYMENT_FORMATS, ledger_csv
from annotate.services.campaigns import create_campaign
from annotate.services.pay_rules import APPROVAL_FORMATS, approval_csv
from tests.guarantee_support import require_postgresql

RECORDED = Path(__file__).resolve().parent.parent / "data" / "protocol_outputs.json"
PROJECT_CODE = tuple(str(Path(__file__).resolve().parents[2] / package) + os.sep for package in ("annotate", "metrics_service", "factlab"))
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

ARTICLES = [
    ["The council of Greenvale approved a budget of 40 million dollars on Monday.",
     "Mayor Helen Carter said it pays for three new schools near the river.",
     "Councillors Smith and Jones voted against the plan."],
    ["A storm closed the port of Marlow for two days last week.",
     "Harbour master Ian Reyes said ferries would resume on Friday.",
     "No one was hurt, the coast guard said."],
    ["The Rovers beat the Lions 3-1 in the cup final on Saturday.",
     "Striker Ana Lopes scored twice in the second half.",
     "It is the club's first cup since 1998."],
]
SUMMARIES = [
    [["Greenvale's council approved a 40 million dollar budget.", "It pays for three schools."],
     ["Helen Carter voted against the budget."]],
    [["A storm closed Marlow's port for two days."], ["Ferries resume on Monday, Ian Reyes said.", "Two people were hurt."]],
    [["The Rovers won the cup final 3-1."], ["Ana Lopes scored three goals.", "The club last won the cup in 1998."]],
]
BUMP_ARTICLES = [
    ("The Food and Drug Administration approved the first Ebola vaccine on Thursday. The vaccine, made by Merck, "
     "was tested during the 2014 outbreak in Guinea.",
     "The FDA approved the first Ebola vaccine , made by Merck , on Thursday ."),
    ("Heavy rain flooded the town of Elmsford on Sunday. Fire crews rescued twelve people from their homes.",
     "Fire crews rescued twelve people after rain flooded Elmsford on Sunday ."),
]
BUMP_EDITS = {  # (document, requested type) -> the edit a worker writes, "" for N/A
    (0, "extrinsic_entity"): ("Merck", "Pfizer"),
    (0, "intrinsic_entity"): ("Thursday", "Guinea"),
    (1, "extrinsic_entity"): ("Elmsford", "Oxford"),
    (1, "intrinsic_entity"): ("twelve", "Sunday"),
}
BUMP_TYPES = ["extrinsic_entity", "intrinsic_entity"]


class Clock:
    """``timezone.now`` frozen at a moment the scenario moves on explicitly, so every stored time is fixed."""

    def __init__(self) -> None:
        self.at = START

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def _made_by_project(depth: int) -> bool:
    """Whether the code ``depth`` frames above the caller is the project's own (not a library's)."""
    return sys._getframe(depth + 1).f_code.co_filename.startswith(PROJECT_CODE)


def _project_draws(ours, theirs):
    """A random-module function that draws from ``ours`` when the project's code calls it, else from ``theirs``."""
    def draw(*args, **kwargs):
        return (ours if _made_by_project(1) else theirs)(*args, **kwargs)
    return draw


@pytest.fixture
def clock(monkeypatch, settings):
    # Claims draw from the random module (which candidate next, when a control item) and pages from their own
    # random.Random() (the order of summaries, traps borrowed from other articles): seeded, the same draws.
    # Only the project's own draws are seeded and numbered: a library imported for the first time during the
    # test draws too (rich takes 24 bits of the random module at import), and would shift every draw after it
    # whenever no earlier test of the process had imported it.
    claims = random.Random(20260302)
    for name in ("random", "shuffle", "choice", "choices", "sample", "randrange", "randint", "uniform", "getrandbits"):
        monkeypatch.setattr(random, name, _project_draws(getattr(claims, name), getattr(random, name)))
    unseeded = itertools.count()
    seed = random.Random.seed

    def seeded(self, a=None, version=2):
        if a is None:  # two frames up: the code that called ``Random()`` (tempfile makes one at its first file)
            a = f"golden-{next(unseeded)}" if _made_by_project(2) else "golden-library"
        return seed(self, a, version)

    monkeypatch.setattr(random.Random, "seed", seeded)
    # The database draws too (ORDER BY random(): the article a trap sentence is borrowed from).
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.302)")
    frozen = Clock()
    monkeypatch.setattr(timezone, "now", frozen)
    return frozen


def _worker(name: str, *, provider: str = "") -> Worker:
    user = get_user_model().objects.create_user(username=name, password="pw-factlab-1")
    return Worker.objects.create(user=user, provider=provider, external_id=f"{name.upper()}-ID" if provider else "")


def _qualified(worker: Worker, campaign: Campaign) -> None:
    Participation.objects.update_or_create(worker=worker, campaign=campaign, defaults={
        "tutorial_done": True, "qualification_status": QualificationStatus.PASSED})


def _frank_campaign(clock: Clock) -> Campaign:
    campaign = create_campaign(slug="golden-frank", name="Golden FRANK", kind="frank", fields={
        "pay_per_item": Decimal("0.60"), "bonus_per_item": Decimal("0.10"), "trap_rate": 0.0, "redundancy": 3,
        "entity_check_enabled": False, "tutorial_required": False, "qualification_required": False,
        "min_seconds_per_sentence": 8.0, "crowd_platform": "prolific", "prolific_completion_code": "GOLDDONE",
        "prolific_screenout_code": "GOLDOUT"})
    for k, (article, summaries) in enumerate(zip(ARTICLES, SUMMARIES, strict=True)):
        document = Document.objects.create(campaign=campaign, external_id=f"frank-{k}", text=" ".join(article), sentences=article,
                                           entities=[], dataset="cnndm", split="test")
        for s, sentences in enumerate(summaries):
            summary = Summary.objects.create(document=document, system=f"system-{s}", text=" ".join(sentences), sentences=sentences,
                                             human_scores={"Factuality": 1.0 if s == 0 else 0.0})
            for metric, value in (("golden-a", 0.9 - 0.2 * s + 0.01 * k), ("golden-b", 0.4 + 0.1 * s - 0.02 * k)):
                MetricScore.objects.create(summary=summary, metric=metric, value=value)
        Item.objects.create(campaign=campaign, document=document, position=k)
    Campaign.objects.filter(pk=campaign.pk).update(status="running")
    campaign.refresh_from_db()
    # Prolific workers (approval files); the first is faster than the speed rule allows (pay held).
    workers = [_worker(f"golden-frank-{n}", provider="prolific") for n in range(3)]
    for worker in workers:
        _qualified(worker, campaign)
    for round_ in range(len(ARTICLES)):
        for n, worker in enumerate(workers):
            clock.advance(60)
            assignment = request_assignment(worker, campaign)
            assert assignment is not None, (round_, n)
            clock.advance(20 + 7 * n)
            answers = []
            for row in assignment.layout["summaries"]:
                system = Summary.objects.get(pk=row["summary"]).system
                # system-0 is right, system-1 wrong; each worker errs on one sentence of their own.
                rows = []
                for index in range(row["sentences"]):
                    factual = (system == "system-0") != (index == (n + round_) % 2 and n == 2)
                    rows.append({"factual": True, "categories": [], "seconds": 4 + n + index} if factual
                                else {"factual": False, "categories": ["EntE" if n else "OutE"], "seconds": 6 + index})
                answers.append({"answers": rows})
            outcome = submit_assignment(assignment.pk, worker, {"summaries": answers}, submission_key=f"f{round_}{n}", campaign=campaign)
            assert not outcome.duplicate
    return campaign


def _bump_campaign(clock: Clock) -> Campaign:
    campaign = create_campaign(slug="golden-bump", name="Golden BUMP", kind="bump_taxonomy", fields={
        "pay_per_item": Decimal("0.50"), "bonus_per_item": Decimal("0.05"), "crowd_platform": "invited"})
    for k, (article, reference) in enumerate(BUMP_ARTICLES):
        document = Document.objects.create(campaign=campaign, external_id=str(7000 + k), text=article, sentences=[article])
        summary = Summary.objects.create(document=document, system="reference", text=reference, sentences=[reference], is_reference=True)
        for t, code in enumerate(BUMP_TYPES):
            Item.objects.create(campaign=campaign, document=document, summary=summary, requested_error_type=code, position=2 * k + t)
    Campaign.objects.filter(pk=campaign.pk).update(status="running")
    campaign.refresh_from_db()
    workers = [_worker(f"golden-bump-{n}") for n in range(2)]
    for worker in workers:
        _qualified(worker, campaign)
    for round_ in range(2):
        for n, worker in enumerate(workers):
            clock.advance(90)
            assignment = request_assignment(worker, campaign)
            assert assignment is not None, (round_, n)
            clock.advance(45 + 10 * n)
            document = int(assignment.item.document.external_id) - 7000
            old, new = BUMP_EDITS[(document, assignment.item.requested_error_type)]
            not_applicable = n == 1 and round_ == 1
            payload = {"checkpoint": assignment.checkpoint.code, "not_applicable": not_applicable,
                       "edited": "" if not_applicable else assignment.item.summary.text.replace(old, new)}
            submit_assignment(assignment.pk, worker, payload, submission_key=f"b{round_}{n}", campaign=campaign)
    expert = get_user_model().objects.create_user(username="golden-expert", password="pw-factlab-1", is_staff=True)
    from annotate.bump.review import review_edit

    for k, edit in enumerate(Edit.objects.filter(source_summary__document__campaign=campaign, is_not_applicable=False).order_by("pk")):
        clock.advance(30)
        review_edit(edit.pk, expert, "reject" if k == 1 else "accept", campaign_id=campaign.pk, comment=f"review {k}")
    return campaign


def _digest(name: str, data: bytes) -> str:
    """The SHA-256 of an output's bytes (written to ``FACTLAB_PROTOCOL_OUTPUTS_DIR`` too, when set)."""
    folder = os.environ.get("FACTLAB_PROTOCOL_OUTPUTS_DIR")
    if folder:
        Path(folder, name.replace("/", "_").replace(" ", "_")).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _canonical_json(value: object) -> bytes:
    """A report's JSON with every float to 6 significant digits: the label models' EM iterations end up to
    ~1e-8 apart on processors whose BLAS kernels differ (the same code on an AVX-512 machine and on
    an AVX2 one), which is not a change of what the report says."""

    def rounded(item: object) -> object:
        if isinstance(item, float):
            return float(f"{item:.6g}")
        if isinstance(item, dict):
            return {key: rounded(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [rounded(inner) for inner in item]
        return item

    return json.dumps(rounded(value), sort_keys=True, indent=1).encode()


def _body(response) -> bytes:
    assert response.status_code == 200, response.content[:500]
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


def _zip_members(prefix: str, data: bytes) -> dict[str, str]:
    """A zip's members by name, each as the digest of its uncompressed bytes (the archive's own times aside)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: _digest(f"{prefix} {name}", archive.read(name)) for name in sorted(archive.namelist())}


def _outputs(campaign: Campaign, api: APIClient, extra_formats: dict[str, dict], commands: tuple[str, ...] = ()) -> dict[str, object]:
    """Every output of ``campaign``: name -> the digest of its bytes (of each member, for a zip)."""
    found: dict[str, object] = {}
    export = f"/api/campaigns/{campaign.slug}/export/"
    requests = {"jsonl": {"format": "jsonl"}, "csv": {"format": "csv"}, "parquet": {"format": "parquet"}, **extra_formats}
    for rows in ("judgements", "edits", "scores", "summaries"):
        requests[f"jsonl-{rows}"] = {"format": "jsonl", "rows": rows}
        requests[f"csv-{rows}"] = {"format": "csv", "rows": rows}
    for name, query in requests.items():
        data = _body(api.get(export, query))
        key = f"{campaign.kind} export {name}"
        found[f"export {name}"] = _zip_members(key, data) if data[:2] == b"PK" else _digest(key, data)
    report = api.get(f"/api/campaigns/{campaign.slug}/report/")
    found["report api"] = _digest(f"{campaign.kind} report api", _canonical_json(report.json()))
    found["report api status"] = report.status_code
    for args in ((), ("--json",)):
        text = io.StringIO()
        call_command("report", "--campaign", campaign.slug, *args, stdout=text)
        output = _canonical_json(json.loads(text.getvalue())) if args else text.getvalue().encode()
        found[f"report command{' '.join(args)}"] = _digest(f"{campaign.kind} report command{' '.join(args)}", output)
    for command in commands:  # a protocol's own export command, writing to standard output
        text = io.StringIO()
        call_command(command, "--campaign", campaign.slug, "-", stdout=text)
        found[f"command {command}"] = _digest(f"{campaign.kind} command {command}", text.getvalue().encode())
    ledger = BonusEntry.objects.filter(campaign=campaign).order_by("pk").values_list(
        "key", "worker__user__username", "assignment_id", "amount", "reason", "created_at", "paid_at")
    found["ledger rows"] = _digest(f"{campaign.kind} ledger", "\n".join(" | ".join(map(str, row)) for row in ledger).encode())
    decisions = PayDecision.objects.filter(campaign=campaign).order_by("pk").values_list(
        "kind", "worker__user__username", "assignment_id", "amount", "reason", "decided_by__username", "created_at")
    found["pay decisions"] = _digest(f"{campaign.kind} pay decisions", "\n".join(" | ".join(map(str, row)) for row in decisions).encode())
    for fmt in PAYMENT_FORMATS:
        found[f"payments {fmt}"] = _digest(f"{campaign.kind} payments {fmt}", ledger_csv(campaign, fmt=fmt).encode())
    for fmt in APPROVAL_FORMATS:
        found[f"approvals {fmt}"] = _digest(f"{campaign.kind} approvals {fmt}", approval_csv(campaign, fmt).encode())
    return found


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_frank_and_bump_outputs_are_byte_for_byte_the_same(clock):
    require_postgresql()
    # Reset sequences give this test's campaigns the ids earlier tests' campaigns had: what those left in the
    # cache under a campaign's id (stored reports, bonus evidence) must not be read as this scenario's.
    from django.core.cache import cache

    cache.clear()
    frank = _frank_campaign(clock)
    bump = _bump_campaign(clock)
    clock.advance(600)
    admin = get_user_model().objects.create_superuser("golden-admin", "golden@example.org", "pw-factlab-1")
    api = APIClient()
    api.force_authenticate(admin)
    frank_parts = {f"frank-{part}": {"format": "frank", "file": part} for part in ("summaries", "sentences", "articles")}
    got = {
        "frank": _outputs(frank, api, {"frank": {"format": "frank"}, **frank_parts}),
        "bump": _outputs(bump, api, {"bump": {"format": "bump"}}, commands=("export_bump",)),
    }
    if os.environ.get("FACTLAB_RECORD_PROTOCOL_OUTPUTS"):
        RECORDED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    recorded = json.loads(RECORDED.read_text())
    differ = [f"{protocol}: {name}" for protocol in recorded for name in recorded[protocol]
              if got[protocol].get(name) != recorded[protocol][name]]
    assert not differ, "outputs differ from the recorded ones: " + "; ".join(differ)
    assert got.keys() == recorded.keys() and all(got[p].keys() == recorded[p].keys() for p in got)
