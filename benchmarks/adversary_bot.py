"""A page-reading bot and a gold-following worker through the real FRANK views: balanced scores, pay, status.

The bot sees only what the task page ships (the HTML and its ``task-data`` JSON) and computes from it:

* the reading check: the option that is not a substring of the article;
* per sentence: "No" when it is one to ``EDIT_WORDS`` word edits away from an article sentence, the same bag
  of words as one (a scramble), or shares under half its words with the article (another article's
  sentence); "Yes" to everything else. These are the rules that found the mechanical traps.

The honest worker answers as the gold says: a sentence with a server-side gold label or a trap gets its
known label, any other sentence "Yes". Time passes on the server's clock by moving the assignment's start
back by ``seconds_per_sentence`` per shown sentence before the submit (as waiting would); 0 is a bot at full
speed.

    DJANGO_DEBUG=1 DATABASE_URL=... .venv/bin/python -m benchmarks.adversary_bot [--frank ../shared/data/frank]
        [--documents 60] [--items 15] [--datasets cnndm bbc] [--only gold second]

Beside them, each through the same views: a reader with 10% of its answers slipped, the public-label bot, the
overlap bot, a bank-then-coast worker and the second-sentence bot (the sentence-count giveaway); ``--only``
runs the workers whose label starts with one of its words.

It imports FRANK (a subset of ``--documents`` articles, both data sets) into a throwaway test database, runs
the bot fast and slow and the honest worker through the Django test client, and prints each one's balanced
control score, what the ledger owes them and their status.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TASK_DATA = re.compile(r'<script id="task-data" type="application/json">(.*?)</script>', re.DOTALL)
WORD = re.compile(r"[a-z0-9]+")
EDIT_WORDS = 3  # word edits that make a trap from an article sentence ("scored" -> "did not score", he -> she)
MIN_OVERLAP = 0.5  # share of a sentence's words found in the article, below which it is "from another article"


# ---------------------------------------------------------------- what the page ships

def page_data(html: str) -> dict[str, Any] | None:
    """The task page's ``task-data`` JSON (None when the response is no task page)."""
    match = TASK_DATA.search(html)
    return json.loads(match.group(1)) if match else None


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _word_edits(a: list[str], b: list[str]) -> int:
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def looks_like_trap(sentence: str, article: list[str]) -> str | None:
    """The bot's rule: the FRANK category it guesses for a mechanically made trap, or None ("Yes")."""
    words = _words(sentence)
    if not words:
        return None
    article_words = [_words(line) for line in article]
    vocabulary = {w for line in article_words for w in line}
    for line in article_words:
        if line == words:
            return None  # an exact copy is factual
        if sorted(line) == sorted(words):
            return "GramE"  # scrambled
        if len(line) > 3 and 0 < _word_edits(words, line) <= EDIT_WORDS:
            return "CorefE" if {"he", "she", "his", "her", "him"} & (set(words) ^ set(line)) else "RelE"
    if sum(w in vocabulary for w in words) / len(words) < MIN_OVERLAP:
        return "OutE"
    return None


class PageReadingBot:
    """Answers from the page text alone (see the module docstring)."""

    name = "page-reading bot"

    def entity_choice(self, data: dict[str, Any]) -> int:
        article = " ".join(data["article"]).lower()
        missing = [i for i, option in enumerate(data["entity_options"]) if option.lower() not in article]
        return missing[0] if missing else 0

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        category = looks_like_trap(text, data["article"])
        return {"factual": category is None, "categories": [category] if category else []}


class GoldFollower:
    """Answers as the known labels say (read on the server, as a careful annotator would judge them)."""

    name = "gold-following worker"

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], tuple[bool, str]] = {}

    def entity_choice(self, data: dict[str, Any]) -> int:
        from annotate.models import Assignment

        return Assignment.objects.get(pk=data["assignment"]).layout["entity"]["answer"]

    def load(self, data: dict[str, Any]) -> None:
        from annotate.models import Assignment, GoldLabel, Trap

        layout = Assignment.objects.get(pk=data["assignment"]).layout
        self._known = {}
        for position, row in enumerate(layout["summaries"]):
            # A trap stands in place of sentence ``trap_at`` (after the last one in layouts without it).
            at = row.get("trap_at", row["sentences"]) if row["trap"] else None
            shown = row["sentences"] + (1 if at is not None and "trap_at" in row else 0)
            for gold in GoldLabel.objects.filter(summary_id=row["summary"], sentence_index__lt=shown).exclude(sentence_index=at):
                self._known[(position, gold.sentence_index)] = (gold.factual, gold.category)
            if row["trap"]:
                trap = Trap.objects.get(pk=row["trap"])
                self._known[(position, at)] = (trap.expected_factual, trap.expected_category)

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        factual, category = self._known.get((position, index), (True, ""))
        return {"factual": factual, "categories": [] if factual else [category or "OtherE"]}


class SlipReader(GoldFollower):
    """A careful but human reader: the known labels where there are any, FRANK's rating of the summary elsewhere
    ("No" with probability one minus its Factuality), and a share ``slips`` of all answers the other way."""

    name = "reader with slips"

    def __init__(self, slips: float = 0.1, seed: int = 0) -> None:
        super().__init__()
        self.slips, self.rng = slips, random.Random(seed)
        self._ratings: list[float] = []

    def load(self, data: dict[str, Any]) -> None:
        from annotate.models import Assignment, Summary

        super().load(data)
        rows = Assignment.objects.get(pk=data["assignment"]).layout["summaries"]
        scores = dict(Summary.objects.filter(pk__in=[r["summary"] for r in rows]).values_list("pk", "human_scores"))
        self._ratings = [float((scores.get(r["summary"]) or {}).get("Factuality", 1.0)) for r in rows]

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        known = self._known.get((position, index))
        factual = known[0] if known is not None else self.rng.random() >= 1 - self._ratings[position]
        if self.rng.random() < self.slips:
            factual = not factual
        return {"factual": factual, "categories": [] if factual else [(known[1] if known else "") or "OtherE"]}


class PublicLabelBot(GoldFollower):
    """Holds a benchmark's released labels (FRANK's annotations): answers as the public gold says and "Yes" to
    every other sentence, traps included, and takes the reading check from the page (it reads nothing)."""

    name = "public-label bot"

    def entity_choice(self, data: dict[str, Any]) -> int:
        return PageReadingBot().entity_choice(data)

    def load(self, data: dict[str, Any]) -> None:
        from annotate.models import Assignment, GoldLabel

        layout = Assignment.objects.get(pk=data["assignment"]).layout
        self._known = {
            (position, gold.sentence_index): (gold.factual, gold.category)
            for position, row in enumerate(layout["summaries"])
            for gold in GoldLabel.objects.filter(summary_id=row["summary"], sentence_index__lt=row["sentences"], public=True)
        }


class OverlapBot(PageReadingBot):
    """"Extractive means factual": "No" to a sentence sharing under ``threshold`` of its words with its closest
    article sentence, "Yes" otherwise (on FRANK's gold this rule alone scores 0.87 pooled balanced accuracy)."""

    name = "overlap bot"

    def __init__(self, threshold: float = 0.7) -> None:
        self.threshold = threshold

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        from annotate.services.control_items import sentence_overlap

        factual = sentence_overlap(text, data["article"]) >= self.threshold
        return {"factual": factual, "categories": [] if factual else ["OutE"]}


class ShortSummaryTrapBot(PageReadingBot):
    """The sentence-count giveaway: XSum's summaries have one sentence, so a second sentence in a summary of two
    was a trap: "No" to every sentence after the first in a summary of two sentences, "Yes" elsewhere."""

    name = "second-sentence bot"

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        factual = not (index >= 1 and len(data["summaries"][position]["sentences"]) == 2)
        return {"factual": factual, "categories": [] if factual else ["OutE"]}


class BankThenCoast(GoldFollower):
    """Works as the gold says for ``bank`` items, then stops reading: "Yes" to everything, the reading check
    taken from the page."""

    name = "bank-then-coast worker"

    def __init__(self, bank: int = 10) -> None:
        super().__init__()
        self.bank, self.items = bank, 0

    @property
    def coasting(self) -> bool:
        return self.items > self.bank

    def load(self, data: dict[str, Any]) -> None:
        self.items += 1
        super().load(data)

    def entity_choice(self, data: dict[str, Any]) -> int:
        return PageReadingBot().entity_choice(data) if self.coasting else super().entity_choice(data)

    def answer(self, data: dict[str, Any], position: int, index: int, text: str) -> dict[str, Any]:
        return {"factual": True, "categories": []} if self.coasting else super().answer(data, position, index, text)


# ---------------------------------------------------------------- driving the real views

@dataclass
class Run:
    """What happened to one worker: per item the server's answers, and why it stopped."""

    submitted: int = 0
    stopped: str = ""
    responses: list[dict[str, Any]] = field(default_factory=list)


def run_worker(client, slug: str, agent, *, items: int, seconds_per_sentence: float) -> Run:
    """Work through up to ``items`` items of campaign ``slug`` as ``agent``, with the logged-in ``client``."""
    from django.urls import reverse

    from annotate.models import Assignment

    run = Run()
    entry = reverse("annotate:frank-task", args=[slug])
    for _ in range(items):
        response = client.get(entry)
        data = page_data(response.content.decode()) if response.status_code == 200 else None
        if data is None:
            run.stopped = f"no task page (HTTP {response.status_code}): " + _visible_text(response)
            break
        if hasattr(agent, "load"):
            agent.load(data)
        if not data["entity_done"]:
            verdict = client.post(data["urls"]["entity"], {"choice": agent.entity_choice(data)}, content_type="application/json").json()
            if verdict.get("blocked"):
                run.stopped = verdict["detail"]
                break
        rows, shown = [], 0
        for position, summary in enumerate(data["summaries"]):
            answers = []
            for index, sentence in enumerate(summary["sentences"]):
                answers.append({**agent.answer(data, position, index, sentence["text"]), "seconds": 5.0})
                shown += 1
            rows.append({"answers": answers})
        if seconds_per_sentence > 0:  # the time a reader spends, on the server's clock
            Assignment.objects.filter(pk=data["assignment"]).update(
                created_at=Assignment.objects.get(pk=data["assignment"]).created_at - timedelta(seconds=seconds_per_sentence * shown)
            )
        result = client.post(data["urls"]["submit"], {"summaries": rows, "submission_key": f"k{data['assignment']}"}, content_type="application/json")
        body = result.json()
        run.responses.append(body)
        if result.status_code != 200:
            run.stopped = body.get("detail") or body.get("error") or str(body)
            break
        run.submitted += 1
        if body.get("blocked"):
            run.stopped = body["detail"]
            break
    return run


def _visible_text(response) -> str:
    if response.status_code in (301, 302):
        return f"redirected to {response['Location']}"
    text = re.sub(r"<[^>]+>", " ", response.content.decode(errors="replace"))
    match = re.search(r"(blocked[^.]*\.|waiting for review[^.]*\.|no article left[^.]*\.)", text, flags=re.IGNORECASE)
    return match.group(1).strip() if match else ""


def worker_figures(worker, campaign) -> dict[str, Any]:
    """Balanced score, what the ledger owes, status: what the benchmark prints (and the tests check)."""
    from annotate.models import BonusEntry, Participation, PayDecision
    from annotate.services.bonuses import worker_total
    from annotate.services.control_items import worker_quality

    participation = Participation.objects.select_related("campaign").get(worker=worker, campaign=campaign)
    quality = worker_quality(participation)
    status = "blocked" if participation.is_blocked else "held for review" if participation.pay_held else "working"
    return {
        "items": participation.items_submitted,
        "balanced_score": None if quality.score is None else round(quality.score, 3),
        "gold_checks": quality.gold_checks,
        "trap_checks": quality.trap_checks,
        "owed": worker_total(worker, campaign),
        "bonuses": BonusEntry.objects.filter(worker=worker, campaign=campaign, key__startswith="item-bonus:").count(),
        "withheld_decisions": PayDecision.objects.filter(worker=worker, campaign=campaign).count(),
        "status": status,
        "reason": participation.blocked_reason or participation.pay_held_reason,
    }


def frank_subset(frank_dir: Path, target: Path, documents: int, datasets: tuple[str, ...] = ("cnndm", "bbc")) -> Path:
    """A FRANK folder with ``documents`` articles shared out over ``datasets`` (FRANK's names: cnndm, bbc)."""
    records = json.loads((frank_dir / "human_annotations.json").read_text(encoding="utf-8"))
    chosen: dict[str, list[str]] = {name: [] for name in datasets}
    wanted = {name: documents // len(datasets) + (i < documents % len(datasets)) for i, name in enumerate(datasets)}
    for record in records:
        group = chosen.get(record["dataset"])
        if group is not None and record["hash"] not in group and len(group) < wanted[record["dataset"]]:
            group.append(record["hash"])
    keep = {article_hash for group in chosen.values() for article_hash in group}
    (target / "articles").mkdir(parents=True, exist_ok=True)
    (target / "human_annotations.json").write_text(json.dumps([r for r in records if r["hash"] in keep]), encoding="utf-8")
    for article_hash in keep:
        (target / "articles" / f"{article_hash}.json").write_bytes((frank_dir / "articles" / f"{article_hash}.json").read_bytes())
    return target


def setup_campaign(
    frank_dir: Path, documents: int, slug: str = "adversary-frank", datasets: tuple[str, ...] = ("cnndm", "bbc"), *,
    private_gold: bool = False, **settings,
):
    """Import a FRANK subset into a running campaign without tutorial/qualification (the checks under test
    are those of the main task); returns the campaign. Its gold is public (FRANK's release) unless
    ``private_gold``: then it stands for labels an admin wrote, as an admin marking them private says."""
    from annotate.models import Campaign, CampaignStatus
    from annotate.services.control_items import mark_gold_public
    from annotate.services.imports import import_dataset

    with tempfile.TemporaryDirectory(prefix="factlab-adversary-") as tmp:
        import_dataset("frank", [frank_subset(frank_dir, Path(tmp), documents, datasets)], campaign_slug=slug)
    Campaign.objects.filter(slug=slug).update(
        status=CampaignStatus.RUNNING, tutorial_required=False, qualification_required=False, **settings,
    )
    campaign = Campaign.objects.get(slug=slug)
    if private_gold:
        mark_gold_public(campaign, False)
    return campaign


def simulate(
    frank_dir: Path, documents: int, items: int, make_worker: Callable[[str], Any], datasets: tuple[str, ...] = ("cnndm", "bbc"),
    bank: int = 10, only: Sequence[str] = (), **settings,
) -> dict[str, dict[str, Any]]:
    """Run the fast bot, the slow bot and the honest worker on a campaign whose gold is private, and the
    public-label bot on one whose gold is FRANK's release as imported; figures per worker (``only``: the
    workers whose label starts with one of these, in the same campaigns)."""
    from django.test import Client

    private = setup_campaign(frank_dir, documents, datasets=datasets, private_gold=True, **settings)
    public = setup_campaign(frank_dir, documents, slug="adversary-frank-public", datasets=datasets, **settings)
    figures = {}
    for label, agent, seconds, campaign in (
        ("bot, full speed", PageReadingBot(), 0.0, private),
        ("bot, 6 s per sentence", PageReadingBot(), 6.0, private),
        ("gold-following worker", GoldFollower(), 6.0, private),
        ("reader, 10% slips", SlipReader(0.1), 6.0, private),
        ("public-label bot", PublicLabelBot(), 6.0, public),
        ("overlap bot (< 0.7: No)", OverlapBot(), 6.0, private),
        (f"bank {bank} then coast", BankThenCoast(bank), 6.0, private),
        ("second-sentence bot", ShortSummaryTrapBot(), 6.0, private),
    ):
        if only and not label.startswith(tuple(only)):
            continue
        worker = make_worker(label)
        client = Client()
        client.force_login(worker.user)
        run = run_worker(client, campaign.slug, agent, items=items, seconds_per_sentence=seconds)
        figures[label] = {**worker_figures(worker, campaign), "stopped": run.stopped}
    return figures


@contextmanager
def throwaway_database(suffix: str) -> Iterator[Callable[[str], Any]]:
    """Django set up on a database of its own (not the test suite's), created here and dropped on leaving, and on
    cache keys of its own, deleted on leaving; yields ``make_worker(label)``, a worker with a user named after the
    label. Pages are prepared on first claim, in this process.

    The database numbers its rows from 1 again on every run, and the site keeps what it computed in its cache under
    those numbers (a participation's window of answers, a campaign's settings, sessions, rate-limit counts): on the
    developer's Redis cache, a run started within minutes of another read that run's entries as its own (a
    worker's submits counted against the earlier run's worker of the same id). Each run's keys carry a prefix of
    their own.

    Time is simulated on the server's clock (assignments moved back), so the per-minute submit limit, a defence of
    its own that no strategy here can pass faster than a minute, would stop the simulated workers part-way,
    earlier or later as the machine's speed goes: it is lifted here to measure the pay rules."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import override_settings, setup_test_environment

    from annotate.models import Worker

    settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT = False
    setup_test_environment()
    own_keys = {**settings.CACHES["default"], "KEY_PREFIX": f"{suffix}-{secrets.token_hex(6)}"}
    run_settings = override_settings(CACHES={**settings.CACHES, "default": own_keys}, FACTLAB_RATELIMIT_SUBMIT="100000/m")
    run_settings.enable()
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_{suffix}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)

    def make_worker(label: str) -> Worker:
        user = get_user_model().objects.create_user(username=re.sub(r"\W+", "-", label).strip("-"), password=None)
        return Worker.objects.create(user=user)

    try:
        yield make_worker
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        if hasattr(cache, "delete_pattern"):  # Redis (django-redis): this run's keys only; a local cache ends with the process
            cache.delete_pattern("*")
        run_settings.disable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frank", type=Path, default=REPO_ROOT.parent / "shared" / "data" / "frank")
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--items", type=int, default=15)
    parser.add_argument("--datasets", nargs="+", default=["cnndm", "bbc"], choices=["cnndm", "bbc"],
                        help="FRANK data sets of the articles (cnndm alone: errors are rarer, the bot's best case)")
    parser.add_argument("--pay", type=Decimal, default=Decimal("0.50"), help="the campaigns' pay per item")
    parser.add_argument("--bank", type=int, default=10, help="honest items the bank-then-coast worker does first")
    parser.add_argument("--only", nargs="*", default=[], help="run only the workers whose label starts with one of these")
    args = parser.parse_args()
    with throwaway_database("adversary_bot") as make_worker:
        figures = simulate(args.frank, args.documents, args.items, make_worker, tuple(args.datasets), args.bank, args.only,
                           pay_per_item=args.pay)
    print(f"FRANK subset: {args.documents} articles of {'+'.join(args.datasets)}; each worker offered up to {args.items} items")
    print(f"{'worker':<24} {'items':>5} {'balanced':>8} {'gold':>5} {'traps':>5} {'bonuses':>7} {'owed':>7}  status (reason)")
    for label, row in figures.items():
        score = "-" if row["balanced_score"] is None else f"{row['balanced_score']:.3f}"
        print(f"{label:<24} {row['items']:>5} {score:>8} {row['gold_checks']:>5} {row['trap_checks']:>5} {row['bonuses']:>7} {row['owed']:>7}  "
              f"{row['status']} ({row['reason'] or row['stopped'] or '-'})")


if __name__ == "__main__":
    main()
