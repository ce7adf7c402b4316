"""BUMP's adversaries through the real pages: what an N/A bot, a bot of look-alike edits and a bot of junk edits
are owed beside an honest editor, on a full-size Task 1 campaign (693 items: 99 FRANK articles, 7 types each).

* **N/A bot**: answers N/A to every item, at full speed and at a human pace (60 s an item on the server's clock);
* **look-alike bot**: tries, on every item, the edits a word comparison used to take (a homoglyph, a zero-width
  space, a soft hyphen, a case change, a two-letter typo, punctuation inside a number, two unrelated changes)
  and submits the first that is accepted, else N/A;
* **junk-edit bot**: replaces one word with an unrelated real word at a human pace; the reviewer rejects each
  edit as it arrives;
* **honest editor**: replaces one word with another real word at a human pace, says N/A to one item in seven;
  the reviewer accepts each edit as it arrives;
* the junk-edit bot again while review lags (no edit reviewed yet), and the full-speed N/A bot with the rules
  off (no speed rule, any share of N/A, no cap): the baseline.

Each offered up to ``--items`` items, pay ``--pay`` per item, BUMP's default rules. Prints items done, what
the ledger owes, amounts waiting for review, the status and its reason.

    DJANGO_DEBUG=1 DATABASE_URL=... .venv/bin/python -m benchmarks.bump_adversary [--frank ../shared/data/frank] [--items 60]
"""
from __future__ import annotations

import argparse
import re
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.adversary_bot import page_data, throwaway_database

REPO_ROOT = Path(__file__).resolve().parent.parent
CAPITALISED = re.compile(r"(?<=\s)[A-Z][a-z]{3,}\b")
NUMBER = re.compile(r"\b\d{1,3},\d{3}\b")


def cheap_edits(reference: str) -> list[str]:
    """The edits a word comparison took before: each changes nothing a reader sees, or no real word."""
    words = reference.split()
    long_word = max(words, key=len)
    candidates = [
        reference.replace("e", "\u0435", 1),  # Cyrillic е
        reference.replace(long_word, long_word[:2] + "\u200b" + long_word[2:], 1),
        reference.replace(long_word, long_word[:3] + "\u00ad" + long_word[3:], 1),
        reference.replace(long_word, long_word.upper(), 1),
        reference.replace(long_word, long_word[:-3] + long_word[-2] + long_word[-3] + long_word[-1], 1),  # two letters swapped
        " ".join(words[:1] + ["Pfizer"] + words[2:-2] + ["Friday"] + words[-1:]),  # two places far apart
    ]
    number = NUMBER.search(reference)
    if number:
        candidates.append(reference.replace(number.group(), number.group().replace(",", "."), 1))
    return candidates


def one_word_edit(reference: str, replacement: str) -> str:
    """Replace the first capitalised word inside the summary (a name, most often) with ``replacement``."""
    match = CAPITALISED.search(reference)
    if match is None:
        words = reference.split()
        return " ".join(words[:-2] + [replacement, words[-1]])
    return reference[: match.start()] + replacement + reference[match.end():]


def run(client, slug: str, strategy: str, *, items: int, seconds: float, reviewer=None) -> dict[str, Any]:
    """One identity working through the task page with ``strategy``; returns what happened."""
    from django.urls import reverse

    from annotate.bump.models import Edit
    from annotate.bump.review import review_edit
    from annotate.models import Assignment

    done, edits, refused, stopped = 0, 0, 0, ""
    replacements = ["Pfizer", "Norway", "Thursday", "teacher", "Glasgow", "October", "engineer"]
    started = time.perf_counter()
    for n in range(items):
        response = client.get(reverse("annotate:bump-task", args=[slug]))
        data = page_data(response.content.decode()) if response.status_code == 200 else None
        if data is None:
            stopped = f"no task page (HTTP {response.status_code})"
            break
        if seconds:
            Assignment.objects.filter(pk=data["assignment"]).update(
                created_at=Assignment.objects.get(pk=data["assignment"]).created_at - timedelta(seconds=seconds))
        body: dict[str, Any] = {"checkpoint": data["checkpoint_code"], "submission_key": f"k{data['assignment']}"}
        attempts = []
        if strategy == "na":
            attempts = [{"not_applicable": True}]
        elif strategy == "lookalike":
            attempts = [{"edited": text, "not_applicable": False} for text in cheap_edits(data["reference"])] + [{"not_applicable": True}]
        elif strategy == "honest" and n % 7 == 3:
            attempts = [{"not_applicable": True}]
        else:  # a real word of its own in place of a name (the next one when the summary has it already)
            attempts = [{"edited": one_word_edit(data["reference"], replacements[(n + k) % len(replacements)]), "not_applicable": False}
                        for k in range(len(replacements))]
        result = None
        for attempt in attempts:
            result = client.post(data["urls"]["submit"], {**body, **attempt}, content_type="application/json")
            if result.status_code != 400:
                break
            refused += 1
        if result is None or result.status_code != 200:
            stopped = (result.json().get("detail") if result is not None else "") or "refused"
            break
        done += 1
        edit = Edit.objects.filter(assignment_id=data["assignment"], is_not_applicable=False).first()
        edits += edit is not None
        if reviewer is not None and edit is not None:
            action = "reject" if strategy == "junk" else "accept"
            review_edit(edit.pk, reviewer, action, campaign_id=edit.assignment.item.campaign_id)
    return {"submitted": done, "edits": edits, "refused_edits": refused, "stopped": stopped, "seconds": time.perf_counter() - started}


def figures(worker, campaign) -> dict[str, Any]:
    from django.db.models import Sum

    from annotate.models import Participation, PayDecision
    from annotate.services.bonuses import worker_total

    participation = Participation.objects.get(worker=worker, campaign=campaign)
    waiting = PayDecision.objects.filter(worker=worker, campaign=campaign, key__startswith="deferred-pay:").aggregate(t=Sum("amount"))["t"]
    return {
        "owed": worker_total(worker, campaign), "waiting_for_review": waiting or Decimal("0.00"),
        "status": "held for review" if participation.pay_held else "blocked" if participation.is_blocked else "working",
        "reason": participation.pay_held_reason or participation.blocked_reason,
    }


def simulate(frank_dir: Path, items: int, pay: Decimal, make_worker) -> dict[str, dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotate.bump.review import make_reviewer
    from annotate.models import Campaign, CampaignStatus, QualificationStatus
    from annotate.services.imports import import_dataset
    from annotate.services.participation import get_participation
    from benchmarks.import_speed import bump_file

    with tempfile.TemporaryDirectory(prefix="factlab-bump-adversary-") as tmp:
        path = Path(tmp) / "task1.json"
        bump_file(frank_dir, path)
        import_dataset("bump", [path], campaign_slug="bump-adversary")
    Campaign.objects.filter(slug="bump-adversary").update(status=CampaignStatus.RUNNING, pay_per_item=pay)
    campaign = Campaign.objects.get(slug="bump-adversary")
    reviewer = get_user_model().objects.create_user("bench-reviewer", password=None)
    make_reviewer(reviewer)
    results = {}
    rules_off = {"min_seconds_per_sentence": 0.0, "max_not_applicable_share": 1.0, "unreviewed_paid_edits": 1000}
    rules_on = {name: getattr(campaign, name) for name in rules_off}
    for label, strategy, seconds, reviewed, rules in (
        ("N/A bot, full speed", "na", 0.0, False, rules_on),
        ("N/A bot, 60 s an item", "na", 60.0, False, rules_on),
        ("look-alike edit bot", "lookalike", 60.0, False, rules_on),
        ("junk-edit bot (rejected)", "junk", 120.0, True, rules_on),
        ("junk-edit bot, no review yet", "junk", 120.0, False, rules_on),
        ("honest editor (accepted)", "honest", 120.0, True, rules_on),
        ("N/A bot, rules off", "na", 0.0, False, rules_off),  # the baseline: no speed rule, N/A limit or cap
    ):
        Campaign.objects.filter(pk=campaign.pk).update(**rules)
        worker = make_worker(label)
        participation = get_participation(worker, campaign)
        participation.qualification_status = QualificationStatus.PASSED  # the qualification is not under test here
        participation.save(update_fields=["qualification_status"])
        client = Client()
        client.force_login(worker.user)
        outcome = run(client, campaign.slug, strategy, items=items, seconds=seconds, reviewer=reviewer if reviewed else None)
        results[label] = {**outcome, **figures(worker, campaign)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "frank")
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--pay", type=Decimal, default=Decimal("0.50"))
    args = parser.parse_args()
    with throwaway_database("bump_adversary") as make_worker:
        results = simulate(args.frank, args.items, args.pay, make_worker)
    print(f"BUMP Task 1, 693 items (99 FRANK articles x 7 types); each identity offered up to {args.items} items, {args.pay} per item")
    print(f"{'identity':<26} {'items':>5} {'edits':>5} {'refused':>7} {'owed':>7} {'waiting':>7}  status (reason)")
    for label, row in results.items():
        print(f"{label:<26} {row['submitted']:>5} {row['edits']:>5} {row['refused_edits']:>7} {row['owed']:>7} {row['waiting_for_review']:>7}  "
              f"{row['status']} ({row['reason'] or row['stopped'] or '-'})")


if __name__ == "__main__":
    main()
