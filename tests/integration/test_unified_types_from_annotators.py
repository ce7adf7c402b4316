"""AggreFact's unified types from the platform's own judgements of FRANK data: a summary has a type when more
than one annotator marked it, and FRANK's sentence annotations give no "entire sentence" type."""
from __future__ import annotations

import pytest

from annotate.models import JudgementSource, SentenceJudgement, Summary
from annotate.services.imports import import_dataset
from metrics_service.report import load_analysis_data
from metrics_service.report_aggrefact import unified_taxonomy_section
from metrics_service.stats import unified_taxonomy as unified
from taxonomies import unified as unified_types
from tests.conftest import REPO_ROOT
from tests.factories import make_worker

pytestmark = pytest.mark.django_db

# What three annotators answer on every sentence of a summary, by the summary's position: None = factual.
PATTERNS = [
    (["EntE"], ["EntE"], None),          # extrinsic NP by two annotators: typed
    (["EntE"], ["RelE"], ["CircE"]),     # three types, one annotator each: untyped
    (["RelE"], ["GramE"], ["EntE"]),     # extrinsic predicate by two (RelE and GramE map to it): typed
    (["EntE", "RelE"], ["OutE", "RelE"], ["EntE", "LinkE"]),  # every sentence wrong, NP and predicate: no "entire"
    (None, None, None),                  # factual
]


def test_types_need_more_than_one_annotator_and_frank_gives_no_entire_sentence():
    import_dataset("frank", [REPO_ROOT / "data" / "frank-subset"], campaign_slug="frank-types", campaign_kind="frank")
    summaries = list(Summary.objects.filter(document__campaign__slug="frank-types", document__dataset="cnndm", is_reference=False).order_by("id")[:40])
    workers = [make_worker() for _ in range(3)]
    expected = {}
    for position, summary in enumerate(summaries):
        pattern = PATTERNS[position % len(PATTERNS)]
        for worker, categories in zip(workers, pattern, strict=True):
            for index in range(len(summary.sentences)):
                SentenceJudgement.objects.create(summary=summary, sentence_index=index, worker=worker,
                                                 factual=categories is None, categories=categories or [],
                                                 source=JudgementSource.COLLECTED)
        marked = {}
        for worker, categories in zip(workers, pattern, strict=True):
            for code in categories or []:
                marked.setdefault(unified_types.frank_to_unified(code), set()).add(worker.pk)
        expected[summary.pk] = {t for t, who in marked.items() if len(who) > 1}

    data = load_analysis_data("frank-types")
    judged = data.human.loc[[s.pk for s in summaries]]
    section = unified_taxonomy_section(judged, data.judgements)
    assert section["source"] == "annotators" and "more than one annotator" in section["rule"]
    assert section["corpora"] == "all"  # the platform's own judgements: every corpus

    typed = unified.unified_frame_from_judgements(judged, data.judgements)
    for summary_id, types in expected.items():
        got = {t for t in unified_types.UNIFIED_TYPES if typed.loc[summary_id, t]}
        assert got == types, (summary_id, got, types)
    assert not typed["entire_sentence"].any()
    assert section["by_dataset"]["cnndm"]["counts"]["entire_sentence"] == 0
    # the fourth pattern is wrong everywhere with NP and predicate errors: typed by its constituents instead
    every_sentence_wrong = summaries[3].pk
    assert {t for t in unified_types.CONSTITUENT_TYPES if typed.loc[every_sentence_wrong, t]} == {"extrinsic_np", "extrinsic_predicate"}
    counts = section["by_dataset"]["cnndm"]["counts"]
    assert counts["extrinsic_np"] == sum("extrinsic_np" in t for t in expected.values())
    assert counts["intrinsic_np"] == sum("intrinsic_np" in t for t in expected.values())
