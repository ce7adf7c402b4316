"""Small helpers to create campaigns, documents and workers in tests (shared by the FRANK and BUMP tests)."""
from __future__ import annotations

from itertools import count, cycle

from django.contrib.auth import get_user_model

from annotate.models import (
    Campaign,
    CampaignStatus,
    Document,
    Item,
    JudgementSource,
    Participation,
    QualificationStatus,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)
from taxonomies.frank import TRAP_LABELS

_seq = count(1)

ARTICLE = [
    "The city council of Greenvale approved a new budget on Monday.",
    "Mayor Helen Carter said the budget includes money for three new schools.",
    "The vote was seven to two, with councillors Smith and Jones voting against.",
    "Construction of the first school will begin in April near the river.",
    "Carter said she expects the schools to open in 2026.",
]


def make_campaign(*, kind: str = "frank", status: str = CampaignStatus.RUNNING, **settings) -> Campaign:
    n = next(_seq)
    # Speed rules off unless a test is about them (its submissions are instant: every worker would be held).
    defaults = {"tutorial_required": False, "qualification_required": False, "trap_rate": 0.0, "redundancy": 3, "min_seconds_per_sentence": 0.0}
    # Tests of the qualification mechanics use the shipped pools, which a real campaign must accept knowingly.
    defaults["shipped_qualification_accepted"] = True
    defaults.update(settings)
    return Campaign.objects.create(slug=f"test-campaign-{n}", name=f"Test campaign {n}", kind=kind, status=status, **defaults)


def make_document(
    campaign: Campaign,
    *,
    summaries: list[list[str]] | None = None,
    traps: dict[str, str] | None = None,
    entities: list[str] | None = None,
    negative_entity: str = "Barcelona",
    article: list[str] | None = None,
    item: bool = True,
) -> Document:
    """A document with system summaries (lists of sentences), optional traps {code: text}, and its item."""
    n = next(_seq)
    article = article or ARTICLE
    document = Document.objects.create(
        campaign=campaign, external_id=f"doc-{n}", text=" ".join(article), sentences=article,
        entities=entities if entities is not None else ["Greenvale", "Helen Carter", "Smith", "Jones"],
        negative_entity=negative_entity,
    )
    summaries = summaries if summaries is not None else [
        ["Greenvale's council approved a budget.", "It funds three new schools."],
        ["Helen Carter opposed the budget."],
    ]
    for k, sentences in enumerate(summaries):
        Summary.objects.create(document=document, system=f"system-{k}", text=" ".join(sentences), sentences=sentences)
    for code, text in (traps or {}).items():
        factual, category = TRAP_LABELS[code]
        Trap.objects.create(document=document, code=code, text=text, expected_factual=factual, expected_category=category or "")
    if item:
        Item.objects.create(campaign=campaign, document=document, position=n)
    return document


def make_worker(username: str | None = None, *, provider: str = "", external_id: str = "", password: str = "pw-factlab-1", staff: bool = False) -> Worker:
    user = get_user_model().objects.create_user(username=username or f"worker-{next(_seq)}", password=password, is_staff=staff)
    return Worker.objects.create(user=user, provider=provider, external_id=external_id)


def qualify(worker: Worker, campaign: Campaign) -> Participation:
    """Mark the worker as having done the tutorial and passed the qualification."""
    participation, _ = Participation.objects.get_or_create(worker=worker, campaign=campaign)
    participation.tutorial_done = True
    participation.qualification_status = QualificationStatus.PASSED
    participation.save()
    return participation


BUMP_ARTICLE = (
    "The Food and Drug Administration approved the first Ebola vaccine on Thursday. The vaccine, made by Merck, "
    "was tested during the 2014 outbreak in Guinea. Dr. Peter Marks said the approval was an important step."
)
BUMP_REFERENCE = "The FDA approved the first Ebola vaccine , made by Merck , on Thursday ."


def make_bump_document(campaign: Campaign, *, reference: str = BUMP_REFERENCE, article: str = BUMP_ARTICLE, types: list[str] | None = None) -> Summary:
    """A BUMP article with its reference summary and the campaign's items: one per type in ``types``
    (Task 1; default all seven requestable types) or one free-style item (Task 2). Returns the reference."""
    from taxonomies.bump import REQUESTABLE

    n = next(_seq)
    document = Document.objects.create(campaign=campaign, external_id=str(1000 + n), text=article, sentences=[article])
    summary = Summary.objects.create(document=document, system="reference", text=reference, sentences=[reference], is_reference=True)
    if campaign.kind == "bump_taxonomy":
        for k, code in enumerate(types if types is not None else [t.code for t in REQUESTABLE]):
            Item.objects.create(campaign=campaign, document=document, summary=summary, requested_error_type=code, position=k)
    else:
        Item.objects.create(campaign=campaign, document=document, summary=summary, position=n)
    return summary


def make_judged_campaign(documents: int = 3) -> tuple[Campaign, list[Worker], list[tuple[int, int]]]:
    """A campaign of ``documents`` distinct articles whose summary sentences three human workers judged with
    a fixed pattern of agreement and 2-to-1 splits (imported judgements). Returns the campaign, the workers
    and the judged (summary id, sentence index) units."""
    campaign = make_campaign()
    for k in range(documents):  # distinct articles: distinct prompts for a model annotator
        make_document(campaign, article=[f"Report number {k} from the council.", *ARTICLE])
    humans = [make_worker() for _ in range(3)]
    units = [(s.pk, i) for s in Summary.objects.filter(document__campaign=campaign).order_by("id") for i in range(len(s.sentences))]
    pattern = cycle([(1, 1, 0), (0, 0, 0), (1, 1, 1), (1, 0, 1), (0, 1, 0), (1, 1, 1), (0, 0, 1)])
    for (summary_id, index), labels in zip(units, pattern):
        for worker, factual in zip(humans, labels):
            SentenceJudgement.objects.create(summary_id=summary_id, sentence_index=index, worker=worker, factual=bool(factual),
                                             categories=[] if factual else ["EntE"], source=JudgementSource.IMPORTED)
    return campaign, humans, units


def judge_like_a_crowd(campaign: Campaign, *, workers: int, summaries: int | None = None, seed: int = 0) -> int:
    """``workers`` people (each with a participation) who judged every sentence of the first ``summaries``
    summaries (all by default) three times: factual with the summary's imported factuality as probability, an
    entity error otherwise, each worker right with an accuracy of their own. Returns the judgements stored."""
    import numpy as np

    rng = np.random.default_rng(seed)
    crowd = [make_worker(f"{campaign.slug}-crowd-{k}") for k in range(workers)]
    Participation.objects.bulk_create([Participation(worker=worker, campaign=campaign) for worker in crowd])
    accuracy = rng.uniform(0.6, 0.95, size=workers)
    rows = []
    judged = Summary.objects.filter(document__campaign=campaign, is_reference=False, edited_from__isnull=True).order_by("id")
    for summary in judged[:summaries] if summaries else judged:
        truth = rng.random(len(summary.sentences)) < float((summary.human_scores or {}).get("Factuality", 0.5))
        for k in rng.choice(workers, size=3, replace=False):
            right = rng.random(len(truth)) < accuracy[k]
            for index, factual in enumerate(np.where(right, truth, ~truth)):
                rows.append(SentenceJudgement(summary=summary, sentence_index=index, worker=crowd[k], factual=bool(factual),
                                              categories=[] if factual else ["EntE"], source=JudgementSource.IMPORTED))
    SentenceJudgement.objects.bulk_create(rows, batch_size=5000)
    return len(rows)
