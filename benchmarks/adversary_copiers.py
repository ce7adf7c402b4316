"""One reader and three copiers through the real FRANK views: what the copiers are owed beside the reader.

The reader answers as a careful annotator would: control sentences (gold, traps) as their server-side labels
say, the other sentences as FRANK's annotators rated the summary (a sentence is "No", with the summary's
worst-rated category, with a probability of one minus the summary's imported Factuality, drawn per sentence).
Three copiers, each their own identity through the same views, answer every sentence the reader has answered
with the reader's answer and time (matched by the sentence's text, as a shared sheet would), and "Yes" to the
rest. They work in rounds beside the reader (reader, then each copier, one item each), at a human pace, or
(``--reader-first``) after the reader has done all its items, so that every item they get may be copied.

    DJANGO_DEBUG=1 DATABASE_URL=... .venv/bin/python -m benchmarks.adversary_copiers [--frank ../shared/data/frank]
        [--documents 60] [--items 30] [--reader-first] [--pay 0.50] [--public-gold] [--copy-noise 0.1]

``--copy-noise``: each copier turns that share of the copied answers the other way, to look like a reader who
disagrees now and then (what the pair check's thresholds let through is in docs/workflows.md).

Prints per identity: items, balanced score, owed, status and reason (the evidence of a hold), the items each
copier shared with the reader, and the copiers' total beside the reader's.
"""
from __future__ import annotations

import argparse
import hashlib
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.adversary_bot import (
    REPO_ROOT,
    GoldFollower,
    run_worker,
    setup_campaign,
    throwaway_database,
    worker_figures,
)

CATEGORY_SCORES = ("RelE", "EntE", "CircE", "OutE", "GramE", "CorefE", "LinkE")


def _draw(key: str) -> float:
    """A number in [0, 1) fixed by ``key``: the same draw for the same sentence in every run."""
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 1000 / 1000


class Reader(GoldFollower):
    """Reads: known labels on control sentences, FRANK's summary ratings elsewhere; remembers every answer."""

    name = "reader"

    def __init__(self) -> None:
        super().__init__()
        self.by_text: dict[str, dict[str, Any]] = {}
        self._summaries: list[int] = []

    def load(self, data: dict[str, Any]) -> None:
        from annotate.models import Assignment

        super().load(data)
        self._summaries = [row["summary"] for row in Assignment.objects.get(pk=data["assignment"]).layout["summaries"]]

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        from annotate.models import Summary

        if (position, index) in self._known:
            answer = super().answer(data, position, index, text)
        else:
            scores = Summary.objects.get(pk=self._summaries[position]).human_scores or {}
            if _draw(text) < 1 - float(scores.get("Factuality", 1.0)):
                worst = min(CATEGORY_SCORES, key=lambda c: float(scores.get(c, 1.0)))
                answer = {"factual": False, "categories": [worst]}
            else:
                answer = {"factual": True, "categories": []}
        self.by_text[text] = answer
        return answer


class Copier:
    """Copies the reader's answer to a sentence of the same text; "Yes" where the reader has none. With ``noise``,
    a share of the copied answers is turned the other way (drawn per copier and sentence), as a ring that knows the
    checks compare its members' answers would do to look like readers who disagree now and then."""

    def __init__(self, reader: Reader, noise: float = 0.0, number: int = 0) -> None:
        self.reader, self.noise, self.number = reader, noise, number
        self.copied = 0

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        copied = self.reader.by_text.get(text)
        if copied is None:
            return {"factual": True, "categories": []}
        self.copied += 1
        if self.noise and _draw(f"{self.number}:{text}") < self.noise:
            return {"factual": True, "categories": []} if not copied["factual"] else {"factual": False, "categories": ["EntE"]}
        return dict(copied)

    def entity_choice(self, data: dict[str, Any]) -> int:
        from annotate.models import Assignment

        return Assignment.objects.get(pk=data["assignment"]).layout["entity"]["answer"]  # asked the reader


def simulate(
    frank_dir: Path, documents: int, items: int, make_worker, seconds_per_sentence: float = 6.0, reader_first: bool = False,
    pay_per_item: Decimal = Decimal("0.50"), private_gold: bool = True, copy_noise: float = 0.0,
) -> dict[str, dict[str, Any]]:
    """The reader and three copiers on one campaign, in rounds or the reader first; figures per identity."""
    from django.test import Client

    from annotate.models import Assignment, PayDecision

    # Private gold (labels an admin wrote) by default: bonuses can be earned, as where the attack was found.
    campaign = setup_campaign(frank_dir, documents, slug="adversary-copiers", private_gold=private_gold, pay_per_item=pay_per_item)
    reader = Reader()
    agents = {"reader": reader, **{f"copier {k}": Copier(reader, noise=copy_noise, number=k) for k in (1, 2, 3)}}
    identities = {}
    for label in agents:
        worker = make_worker(label)
        client = Client()
        client.force_login(worker.user)
        identities[label] = (worker, client)
    stopped: dict[str, str] = {}
    turns = [[label] * items for label in agents] if reader_first else [list(agents)] * items
    for turn in turns:
        for label in turn:
            if label in stopped:
                continue
            run = run_worker(identities[label][1], campaign.slug, agents[label], items=1, seconds_per_sentence=seconds_per_sentence)
            if run.stopped:
                stopped[label] = run.stopped
    reader_items = set(Assignment.objects.filter(worker=identities["reader"][0], status="submitted").values_list("item_id", flat=True))
    figures = {}
    for label, (worker, _) in identities.items():
        mine = set(Assignment.objects.filter(worker=worker, status="submitted").values_list("item_id", flat=True))
        figures[label] = {**worker_figures(worker, campaign), "stopped": stopped.get(label, ""),
                          "shared_with_reader": len(mine & reader_items) if label != "reader" else None,
                          "copied_sentences": getattr(agents[label], "copied", None),
                          "withheld": PayDecision.objects.filter(worker=worker, campaign=campaign).values_list("reason", flat=True).first(),
                          # Held for review as not independent: what a review would release or not.
                          "held_as_copy": sum(PayDecision.objects.filter(worker=worker, campaign=campaign, kind="held",
                                                                         reason__contains="not independent").values_list("amount", flat=True))}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "frank")
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--reader-first", action="store_true", help="the copiers start once the reader is done")
    parser.add_argument("--pay", type=Decimal, default=Decimal("0.50"), help="the campaign's pay per item")
    parser.add_argument("--public-gold", action="store_true", help="keep FRANK's released labels public (no bonus from them)")
    parser.add_argument("--copy-noise", type=float, default=0.0, help="share of copied answers each copier turns the other way")
    args = parser.parse_args()
    with throwaway_database("adversary_copiers") as make_worker:
        figures = simulate(args.frank, args.documents, args.items, make_worker, reader_first=args.reader_first,
                           pay_per_item=args.pay, private_gold=not args.public_gold, copy_noise=args.copy_noise)
    order = "the reader first" if args.reader_first else "in rounds"
    noise = f", {args.copy_noise:.0%} of copied answers turned" if args.copy_noise else ""
    print(f"FRANK subset: {args.documents} articles; one reader and three copiers, up to {args.items} items each, {order}{noise}")
    print(f"{'identity':<10} {'items':>5} {'shared':>6} {'balanced':>8} {'owed':>7} {'held':>6}  status (reason)")
    for label, row in figures.items():
        score = "-" if row["balanced_score"] is None else f"{row['balanced_score']:.3f}"
        shared = "-" if row["shared_with_reader"] is None else str(row["shared_with_reader"])
        print(f"{label:<10} {row['items']:>5} {shared:>6} {score:>8} {row['owed']:>7} {row['held_as_copy']:>6}  "
              f"{row['status']} ({row['reason'] or row['stopped'] or '-'})")
    for label, row in figures.items():
        print(f"{label}: first amount withheld: {row['withheld'] or '-'}")
    copiers = sum(row["owed"] for label, row in figures.items() if label != "reader")
    held = sum(row["held_as_copy"] for label, row in figures.items() if label != "reader")
    print(f"copiers together: owed {copiers}, held for review as not independent {held}; reader: owed {figures['reader']['owed']}")


if __name__ == "__main__":
    main()
