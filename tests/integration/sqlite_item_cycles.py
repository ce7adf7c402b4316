"""Run as a script on a migrated database (the demo's SQLite): import the FRANK subset, let three qualified
workers take every item's page, reading check and submit, and exit 1 naming the first answer that was not a
success. Each item is submitted by several workers, so the submit's comparisons between workers run too."""
from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from annotate.models import Assignment, BonusEntry, Campaign, CampaignStatus, PayDecision  # noqa: E402
from annotate.services.imports import import_dataset  # noqa: E402
from tests.factories import make_worker, qualify  # noqa: E402

TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)
CYCLES_PER_WORKER = 4


def answer(rng: random.Random) -> dict:
    """Independent answers: workers answering alike (or by a rule a page feature predicts) have their pay held
    and see no next item until a review, which is the product working but not what this script exercises."""
    if rng.random() < 0.5:
        return {"factual": True, "categories": []}
    return {"factual": False, "categories": [rng.choice(["RelE", "EntE", "CircE", "OutE"])]}


def main() -> int:
    import_dataset("frank", [REPO / "data" / "frank-subset"], campaign_slug="on-sqlite", campaign_kind="frank")
    campaign = Campaign.objects.get(slug="on-sqlite")
    campaign.status, campaign.trap_rate, campaign.pay_per_item = CampaignStatus.RUNNING, 0.5, "0.10"
    # Scripted workers score low and answer within milliseconds: no blocking, no minimum time here.
    campaign.trap_block_threshold = campaign.control_block_threshold = campaign.min_seconds_per_sentence = 0.0
    campaign.save()
    submitted = 0
    for number in range(3):
        worker = make_worker(f"sqlite-worker-{number}")
        qualify(worker, campaign)
        client, rng = Client(), random.Random(number)
        client.force_login(worker.user)
        for _ in range(CYCLES_PER_WORKER):
            page = client.get(reverse("annotate:frank-task", args=[campaign.slug]))
            found = TASK_DATA.search(page.content.decode())
            if page.status_code != 200 or not found:
                print(f"task page for {worker}: status {page.status_code} {page.get('Location', '')}, no task data", file=sys.stderr)
                return 1
            data = json.loads(found.group(1))
            text = Assignment.objects.get(pk=data["assignment"]).item.document.text.lower()
            choice = next(k for k, option in enumerate(data["entity_options"]) if option.lower() not in text)
            check = client.post(data["urls"]["entity"], {"choice": choice}, content_type="application/json")
            answers = [{"answers": [answer(rng) for _ in s["sentences"]]} for s in data["summaries"]]
            submit = client.post(data["urls"]["submit"], {"submission_key": data["submission_key"], "summaries": answers},
                                 content_type="application/json")
            for name, response in (("reading check", check), ("submit", submit)):
                if response.status_code != 200:
                    print(f"{name} of assignment {data['assignment']}: status {response.status_code}", file=sys.stderr)
                    return 1
            submitted += 1
    shared = Assignment.objects.filter(status="submitted").values("item_id").distinct().count()
    print(f"{submitted} items submitted by 3 workers on {shared} distinct items")
    # Every submission's pay is written as a decision or a ledger entry, each appended once by its key (an insert
    # that skips an existing key, in SQLite's dialect too).
    recorded = PayDecision.objects.count() + BonusEntry.objects.count()
    print(f"{recorded} pay decisions and ledger entries")
    if recorded < submitted:
        print(f"only {recorded} pay records for {submitted} submissions", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
