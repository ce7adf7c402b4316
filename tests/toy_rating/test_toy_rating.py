"""The toy rating protocol runs through the shared machinery unchanged, and nothing outside its package names it
but its registry line."""
from __future__ import annotations

import io
import json
import re
import zipfile

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db.models import Count
from django.urls import reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from annotate.models import Assignment, AssignmentStatus, BonusEntry, Campaign, Item, Participation, PayDecision, Worker
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.campaigns import create_campaign
from annotate.services.errors import InvalidSubmission
from annotate.services.imports import import_dataset
from annotate.services.quality import worker_checks
from tests.protocol_ownership import lines_naming, package_files

from .models import GoldRating, Rating

PACKAGE = "tests/toy_rating"


def _records() -> list[dict]:
    """Two articles, two summaries each; the summaries' imported ratings (5 and 1) are their gold."""
    return [
        {"id": f"rate-{n}", "text": f"The museum of Harlow reopened on day {n} after a flood.",
         "sentences": [f"The museum of Harlow reopened on day {n} after a flood."],
         "summaries": [
             {"system": "faithful", "text": f"Harlow's museum reopened on day {n}.", "sentences": [f"Harlow's museum reopened on day {n}."],
              "human_scores": {"rating": 5}},
             {"system": "invented", "text": f"The museum burned down on day {n}.", "sentences": [f"The museum burned down on day {n}."],
              "human_scores": {"rating": 1}},
         ]}
        for n in range(2)
    ]


def _worker(name: str) -> Worker:
    user = get_user_model().objects.create_user(username=name, password="pw-factlab-1")
    return Worker.objects.create(user=user)


def _body(response) -> bytes:
    assert response.status_code == 200, response.content[:500]
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


@pytest.mark.django_db
def test_a_rating_campaign_runs_import_claim_page_submit_gold_pay_export_and_report(tmp_path, client, settings):
    path = tmp_path / "ratings.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _records()) + "\n")
    # Import: the shared jsonl importer, the toy's items (one per summary) and the gold its data implies.
    import_dataset("jsonl", [path], campaign_slug="toy-rate", campaign_kind="rating")
    campaign = Campaign.objects.get(slug="toy-rate")
    assert (campaign.kind, campaign.get_kind_display(), campaign.redundancy) == ("rating", "Toy: rate a summary from 1 to 5", 2)
    assert campaign.items.count() == 4
    assert sorted(GoldRating.objects.values_list("summary__system", "score")) == [("faithful", 5)] * 2 + [("invented", 1)] * 2
    gold = GoldRating.objects.get(summary__system="faithful", summary__document__external_id="rate-0")
    Campaign.objects.filter(pk=campaign.pk).update(status="running", pay_per_item="0.50", bonus_per_item="0.10", min_seconds_per_sentence=0)
    # Ratings are not sentence labels: no label model, so no adaptive redundancy either.
    with pytest.raises(ValidationError, match="do not label sentences"):
        create_campaign(slug="toy-adaptive", name="Adaptive", kind="rating", fields={"adaptive_redundancy": True})
    campaign.refresh_from_db()

    # Page: the shared entry claims an item; the page shows the summary, never its gold or imported scores.
    alice = _worker("toy-alice")
    client.force_login(alice.user)
    page = client.get(f"/c/{campaign.slug}/rating/task/")
    assert page.status_code == 200, page.content[:500]
    html = page.content.decode()
    assignment = Assignment.objects.get(worker=alice)
    # The page escapes the text as HTML ("Harlow's" is written Harlow&#x27;s).
    assert escape(assignment.item.summary.text) in html and 'name="rating" value="5"' in html
    assert "human_scores" not in html and "gold" not in html.lower()
    data = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', html).group(1))

    # Submit through the shared view: a bad rating is refused naming the field and stores nothing.
    refused = client.post(data["urls"]["submit"], {"rating": 9, "submission_key": "bad"}, content_type="application/json")
    assert refused.status_code == 400 and "rating" in refused.content.decode()
    assert not Rating.objects.exists() and Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.ACTIVE
    first = 4 if assignment.item.summary.system == "faithful" else 2  # right, on the gold's side
    done = client.post(data["urls"]["submit"], {"rating": first, "submission_key": data["submission_key"]}, content_type="application/json")
    assert done.status_code == 200 and done.json()["ok"], done.content
    assert Rating.objects.get(worker=alice).score == first

    # Claims and submits by the service, for every remaining item (two workers per item).
    bob = _worker("toy-bob")
    for worker in (alice, bob):
        while (claimed := request_assignment(worker, campaign)) is not None:
            faithful = claimed.item.summary.system == "faithful"
            # Bob rates the faithful summaries as made up: wrong control answers of one class.
            score = (1 if worker == bob else 5) if faithful else 1
            outcome = submit_assignment(claimed.pk, worker, {"rating": score}, submission_key=f"{worker.pk}-{claimed.pk}", campaign=campaign)
            if outcome.blocked_reason:
                break
    assert Rating.objects.count() == 8 and not Item.objects.filter(campaign=campaign).exclude(assignments__worker=bob).exists()

    # Gold check: the shared quality rules score each worker's control answers through the toy's tallies.
    checks = {w.user.username: [(c.expected_factual, c.correct) for c in worker_checks(w, campaign)] for w in (alice, bob)}
    assert {w: sorted(c) for w, c in checks.items()} == {
        "toy-alice": [(False, True), (False, True), (True, True), (True, True)],
        "toy-bob": [(False, True), (False, True), (True, False), (True, False)],
    }, checks

    # Pay decisions by the shared rules on the toy's gold: Alice's pay, held until her score existed, is paid;
    # Bob's wrong control answers block him and his pay is refused.
    paid = dict(BonusEntry.objects.filter(campaign=campaign, reason="pay per item").values_list("worker__user__username").annotate(n=Count("pk")))
    assert paid == {"toy-alice": 4}, paid
    assert PayDecision.objects.filter(worker=alice, kind="released").count() == 3
    blocked = Participation.objects.get(worker=bob, campaign=campaign)
    assert blocked.is_blocked and "factual summaries 0 of 2, erroneous 2 of 2" in blocked.blocked_reason, blocked.blocked_reason
    refused = PayDecision.objects.filter(worker=bob, kind="refused", reason__contains="blocked").values_list("assignment_id", flat=True)
    assert sorted(refused) == sorted(Assignment.objects.filter(worker=bob).values_list("pk", flat=True))
    Campaign.objects.filter(pk=campaign.pk).update(min_seconds_per_sentence=600)
    carol = _worker("toy-carol")
    Item.objects.create(campaign=campaign, document=gold.summary.document, summary=gold.summary, position=99)
    fast = request_assignment(carol, campaign)
    with pytest.raises(InvalidSubmission, match="rating must be a whole number from 1 to 5"):
        submit_assignment(fast.pk, carol, {"rating": "five"}, submission_key="carol-bad", campaign=campaign)
    submit_assignment(fast.pk, carol, {"rating": 5}, submission_key="carol", campaign=campaign)
    # The speed rule's words are the protocol's: the minimum time is per summary.
    too_fast = PayDecision.objects.get(worker=carol, reason__contains="too fast")
    assert too_fast.kind == "refused" and too_fast.reason.endswith("minimum 600 s per summary)"), too_fast.reason

    # Export in every shared format: the toy's rating rows beside the shared ones.
    admin = get_user_model().objects.create_superuser("toy-admin", "toy@example.org", "pw-factlab-1")
    api = APIClient()
    api.force_authenticate(admin)
    export = f"/api/campaigns/{campaign.slug}/export/"
    lines = [json.loads(line) for line in _body(api.get(export, {"format": "jsonl", "rows": "ratings"})).decode().splitlines()]
    assert len(lines) == 9 and {line["record_type"] for line in lines} == {"rating"}
    assert sorted((line["summary_id"], line["rating"]) for line in lines) == sorted(Rating.objects.values_list("summary_id", "score"))
    assert all(line["worker"] and line["worker"] != str(alice.pk) for line in lines)  # pseudonyms
    every = [json.loads(line) for line in _body(api.get(export, {"format": "jsonl"})).decode().splitlines()]
    assert sum(row["record_type"] == "rating" for row in every) == 9
    table = _body(api.get(export, {"format": "csv"})).decode().splitlines()
    header = table[0].split(",")
    assert header[-1] == "rating" and sum(line.startswith("rating,") for line in table) == 9
    parquet = zipfile.ZipFile(io.BytesIO(_body(api.get(export, {"format": "parquet"}))))
    ratings = pq.read_table(io.BytesIO(parquet.read("data/ratings.parquet")))
    assert ratings.num_rows == 9 and str(ratings.schema.field("rating").type) == "int64"
    assert "ratings" in parquet.read("README.md").decode()
    foreign = api.get(f"/api/campaigns/{campaign.slug}/export/", {"format": "jsonl", "rows": "judgements,ratings,nonsense"})
    assert foreign.status_code == 400 and "rows" in foreign.json()
    # Another protocol's own format is refused, naming the formats this campaign offers.
    other = api.get(export, {"format": "frank"})
    assert other.status_code == 400 and "jsonl, csv, parquet" in other.json()["format"][0], other.json()

    # A report section: the API, manage.py report and its JSON show the toy's counts and agreement statistic.
    report = api.get(f"/api/campaigns/{campaign.slug}/report/")
    assert report.status_code == 200, report.content[:300]
    section = report.json()["sections"][0]
    assert section["title"] == "Ratings" and section["counts"] == {"ratings": 9, "workers": 3, "summaries": 4}
    assert section["agreement"]["statistic"] == "Krippendorff's alpha (ordinal)" and -1 <= section["agreement"]["value"] <= 1
    text = io.StringIO()
    call_command("report", "--campaign", campaign.slug, stdout=text)
    assert "Ratings" in text.getvalue() and "Agreement (Krippendorff's alpha (ordinal))" in text.getvalue()
    client.force_login(admin)
    dashboard = client.get(reverse("metrics_service:dashboard", args=[campaign.slug])).content.decode()
    assert '<section class="protocol-section"><h2>Ratings</h2>' in dashboard and "9 ratings, 3 workers, 4 summaries" in dashboard


#: What the toy owns: an app config, its answer models and their migration, the protocol, the task page.
OWNED = {
    "__init__.py", "apps.py", "models.py", "migrations/__init__.py", "migrations/0001_ratings.py", "protocol.py", "urls.py",
    "templates/toy_rating/task.html", "static/toy_rating/task.js", "test_toy_rating.py",
}
# Names only the toy uses: its package, app label, template and static folders, its classes and URL names.
NAMES = re.compile(r"toy_rating|RatingProtocol|GoldRating|rating-task|rating-submit")


def test_the_toy_touches_nothing_outside_its_package_but_its_registry_line():
    assert package_files(PACKAGE) == OWNED
    assert lines_naming(NAMES, PACKAGE) == ['factlab/settings.py: PROTOCOL_APPS.append("tests.toy_rating")']
