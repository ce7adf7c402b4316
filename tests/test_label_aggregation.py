"""Label aggregation beyond the majority vote (issue 17.4): Dawid–Skene and MACE against crowd-kit, their
behaviour on spammers, row-order independence, FRANK scores from either, and the report, API and page."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.test import Client

from metrics_service.stats.factuality import summary_human_scores
from metrics_service.stats.label_aggregation import (
    METHODS,
    _fit,
    aggregate,
    summary_scores,
    worker_reliability,
)
from tests.test_api_fixtures import *

C = "/api/campaigns/frank-api"


def _simulated(seed: int = 0, tasks: int = 600, workers: int = 20) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.45, 0.95, workers)
    rows = []
    for task in range(tasks):
        truth = rng.choice(["a", "b", "c"], p=[0.5, 0.3, 0.2])
        for worker in rng.choice(workers, 3, replace=False):
            label = truth if rng.random() < accuracy[worker] else rng.choice(["a", "b", "c"])
            rows.append((f"t{task:04d}", f"w{worker:02d}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), accuracy


def _spammed(seed: int = 3) -> tuple[pd.DataFrame, dict]:
    """Two exact workers, two who always answer "factual", one who answers at random."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for summary in range(80):
        for sentence in range(2):
            t = bool(rng.random() < 0.5)
            truth[(summary, sentence)] = t
            for worker in range(5):
                factual = t if worker < 2 else (True if worker < 4 else bool(rng.random() < 0.5))
                rows.append((summary, sentence, worker, factual, [] if factual else ["EntE"]))
    return pd.DataFrame(rows, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"]), truth


def test_dawid_skene_matches_crowd_kit():
    from crowdkit.aggregation import DawidSkene

    frame, accuracy = _simulated()
    labels, reliability = _fit(frame, "dawid_skene")
    reference = DawidSkene(n_iter=100, tol=1e-5).fit(frame)
    assert (labels.sort_index() == reference.labels_.sort_index()).mean() >= 0.99  # the rest are near-ties
    assert np.corrcoef(reliability.sort_index().to_numpy(), accuracy)[0, 1] > 0.85


def test_mace_agrees_with_crowd_kit():
    from crowdkit.aggregation import MACE

    frame, accuracy = _simulated(seed=0, tasks=600)
    labels, competence = _fit(frame, "mace")
    reference = MACE(n_restarts=10, n_iter=50, random_state=0, method="em").fit(frame)
    assert (labels.sort_index() == reference.labels_.sort_index()).mean() > 0.94  # EM optima from other random starts
    theirs = pd.Series(reference.spamming_[:, 1], index=pd.unique(frame["worker"])).sort_index()
    assert np.corrcoef(competence.sort_index().to_numpy(), theirs.to_numpy())[0, 1] > 0.95
    assert np.corrcoef(competence.sort_index().to_numpy(), accuracy)[0, 1] > 0.85


def test_models_see_through_spammers_that_fool_the_majority():
    judgements, truth = _spammed()
    accuracy = {}
    for method in METHODS:
        result = aggregate(judgements, method)
        units = result.units
        accuracy[method] = np.mean([f == truth[(s, i)] for s, i, f in zip(units["summary_id"], units["sentence_index"], units["factual"], strict=True)])
        if method != "majority":
            reliability = result.reliability["factual"]
            assert min(reliability[0], reliability[1]) > max(reliability[2], reliability[3], reliability[4])
    assert accuracy["majority"] < 0.8 and accuracy["dawid_skene"] == 1.0 and accuracy["mace"] == 1.0
    # Categories follow: a non-factual sentence keeps a code, a factual one has none.
    units = aggregate(judgements, "mace").units
    assert all((cats == ("EntE",)) != f for f, cats in zip(units["factual"], units["categories"], strict=True))


def test_results_do_not_depend_on_row_order():
    judgements, _ = _spammed(seed=5)
    shuffled = judgements.sample(frac=1.0, random_state=7)
    for method in METHODS:
        pd.testing.assert_frame_equal(summary_scores(judgements, method), summary_scores(shuffled, method))
    pd.testing.assert_frame_equal(worker_reliability(judgements), worker_reliability(shuffled))


def test_majority_scores_are_frank_s_and_the_others_differ_on_spammed_data():
    judgements, truth = _spammed()
    pd.testing.assert_frame_equal(summary_scores(judgements, "majority"), summary_human_scores(judgements))
    mace = summary_scores(judgements, "mace")
    expected = pd.Series(truth).groupby(level=0).mean()
    assert np.allclose(mace["Factuality"].sort_index().to_numpy(), expected.sort_index().to_numpy())
    assert {"Flip_EntE", "Flip_Semantic_Frame_Errors"} <= set(mace.columns)
    assert (mace["Flip_EntE"] == 1.0).all()  # every error was EntE: flipping it leaves no error
    with pytest.raises(ValueError, match="unknown label aggregation 'vote'"):
        summary_scores(judgements, "vote")


@pytest.mark.django_db
def test_report_api_participations_and_campaign_page_show_reliability(campaign, researcher_client, admin_client, admin_user):
    majority = researcher_client.get(f"{C}/report/").json()
    section = majority["label_aggregation"]
    assert section["default"] == "majority" and set(section["methods"]) == set(METHODS)
    assert len(section["workers"]) == 3 and all(w["worker"].startswith("w") and len(w["worker"]) == 13 for w in section["workers"])
    assert {"n", "majority", "dawid_skene", "mace", "mace_categories"} <= set(section["workers"][0])
    assert majority["options"]["aggregation"] == "majority"
    mace = researcher_client.get(f"{C}/report/?aggregation=mace")
    assert mace.status_code == 200 and mace.json()["options"]["aggregation"] == "mace"
    bad = researcher_client.get(f"{C}/report/?aggregation=vote")
    assert bad.status_code == 400 and "aggregation" in bad.json()

    rows = admin_client.get(f"{C}/participations/").json()["results"]
    by_worker = {r["worker"]: r["reliability"] for r in rows}
    contrary = campaign.workers_for_tests[2].pk  # says "not factual" to everything
    assert by_worker[contrary]["majority"] < min(v["majority"] for w, v in by_worker.items() if w != contrary)

    browser = Client()
    browser.force_login(admin_user)
    page = browser.get("/manage/frank-api/").content.decode()
    assert "Reliability (majority / DS / MACE)" in page and page.count('class="reliability"') == 2  # the two workers with a participation


@pytest.mark.django_db
def test_report_factuality_follows_the_chosen_aggregation(researcher, researcher_client):
    """Stored judgements of two exact workers and three unreliable ones: MACE's Factuality is the truth's."""
    from django.contrib.auth import get_user_model

    from annotate.models import Campaign, Document, SentenceJudgement, Summary, Worker

    judgements, truth = _spammed()
    campaign = Campaign.objects.create(slug="spam", name="Spam")
    campaign.researchers.add(researcher)
    workers = [Worker.objects.create(user=get_user_model().objects.create_user(f"spam-{i}"), external_id=f"S{i}") for i in range(5)]
    summaries = {}
    for summary_index in sorted(judgements["summary_id"].unique()):
        document = Document.objects.create(campaign=campaign, external_id=f"d{summary_index}", text="An article.")
        summaries[summary_index] = Summary.objects.create(document=document, system="bart", text="One. Two.", sentences=["One.", "Two."])
    SentenceJudgement.objects.bulk_create([
        SentenceJudgement(summary=summaries[r.summary_id], sentence_index=r.sentence_index, worker=workers[r.worker_id],
                          factual=r.factual, categories=r.categories)
        for r in judgements.itertuples()
    ])
    expected = float(np.mean(list(truth.values())))
    majority = researcher_client.get("/api/campaigns/spam/report/").json()["human_factuality"]["bart"]
    mace = researcher_client.get("/api/campaigns/spam/report/?aggregation=mace").json()
    assert mace["human_factuality"]["bart"] == pytest.approx(expected) and majority > expected + 0.1
    section = mace["label_aggregation"]
    assert section["methods"]["mace"]["factual_differs_from_majority"] > 0
    reliable = sorted(section["workers"], key=lambda w: -w["mace"])[:2]
    assert all(w["mace"] > 0.9 for w in reliable) and sum(w["mace"] > 0.9 for w in section["workers"]) == 2
