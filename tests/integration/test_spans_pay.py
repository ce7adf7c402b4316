"""Pay and bonuses on span campaigns through the shared rules: with reviewer-set gold on every summary, an honest
worker who marks the gold spans earns item bonuses; a page-reading bot that marks every noun phrase, or one
that answers "no error" everywhere, earns none."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from annotate.models import BonusEntry, PayDecision, Summary
from annotate.nlp import get_nlp
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.errors import NotEligible
from annotate.services.imports import import_dataset
from annotate.spans.models import GoldSpans, SpanAnswer
from annotate.spans.services import set_gold
from metrics_service.stats.spans import snap, word_tokens
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"


@pytest.fixture
def campaign():
    campaign = make_campaign(kind="spans", redundancy=5, pay_per_item=Decimal("0.20"), bonus_per_item=Decimal("0.10"), bonus_confidence=0.0)
    import_dataset("span_records", [SAMPLES / "goyal_style.json", SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    # Released annotations are public (anyone may hold them): a reviewer confirms each summary's gold, which makes
    # it the campaign's own.
    reviewer = make_worker(staff=True)
    for summary in Summary.objects.filter(document__campaign=campaign):
        gold = GoldSpans.objects.get(summary=summary).spans
        set_gold(summary, {"no_error": not gold, "spans": [{"start": s, "end": e, "type": t} for s, e, t in gold]}, reviewer.user)
    return campaign


def _gold_answer(summary) -> dict:
    gold = summary.gold_spans.spans
    return {"no_error": not gold, "spans": [{"start": s, "end": e, "type": t} for s, e, t in gold]}


def _noun_phrases(summary) -> dict:
    """What a bot reading the page marks: every noun phrase spaCy finds, as an extrinsic noun-phrase error."""
    tokens = word_tokens(summary.text)
    spans = []
    for chunk in get_nlp()(summary.text).noun_chunks:
        start, end = snap(tokens, chunk.start_char, chunk.end_char)
        spans.append({"start": start, "end": end, "type": "extrinsic_np"})
    return {"no_error": not spans, "spans": spans}


def _work(worker, campaign, answer) -> None:
    try:
        while (assignment := request_assignment(worker, campaign)) is not None:
            submit_assignment(assignment.pk, worker, answer(assignment.item.summary), submission_key=f"k{assignment.pk}")
    except NotEligible:
        pass  # a worker the quality rules block stops here


def _bonuses(worker) -> int:
    return BonusEntry.objects.filter(worker=worker, key__startswith="item-bonus:").count()


def test_an_honest_worker_earns_bonuses_and_page_reading_bots_earn_none(campaign):
    honest, np_bot, silent_bot = make_worker(), make_worker(), make_worker()
    _work(honest, campaign, _gold_answer)
    _work(np_bot, campaign, _noun_phrases)
    _work(silent_bot, campaign, lambda summary: {"no_error": True, "spans": []})
    # The honest worker's bonuses start once the score exists (both classes of words checked twice; when that is
    # depends on the claim order), and every item from then on earns one.
    assert _bonuses(honest) >= 3
    assert not PayDecision.objects.filter(worker=honest, kind="refused").exclude(reason__contains="score not known yet").exists()
    assert BonusEntry.objects.filter(worker=honest, key__startswith="pay:").count() >= 3  # paid per item
    # The bots did submit work (they were not turned away at the door; the control items may block them after their
    # first summaries, depending on which come first), and earned no bonus.
    assert SpanAnswer.objects.filter(worker=np_bot).exists() and SpanAnswer.objects.filter(worker=silent_bot).exists()
    assert _bonuses(np_bot) == 0
    assert _bonuses(silent_bot) == 0
