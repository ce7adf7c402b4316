"""Label aggregation beyond the majority vote: Dawid–Skene and MACE against crowd-kit, their
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


def _qags_like(seed: int = 0, tasks: int = 953, workers: int = 60) -> pd.DataFrame:
    """Yes/no labels like QAGS's: three workers per sentence, three in four sentences factual, and workers
    who, when they guess, mostly guess "factual"."""
    rng = np.random.default_rng(seed)
    accuracy, guess_yes = rng.beta(8, 2, workers), rng.uniform(0.6, 0.95, workers)
    rows = []
    for task in range(tasks):
        truth = bool(rng.random() < 0.75)
        for worker in rng.choice(workers, 3, replace=False):
            label = truth if rng.random() < accuracy[worker] else bool(rng.random() < guess_yes[worker])
            rows.append((f"t{task:04d}", f"w{worker:03d}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def _crowd_kit_order(frame: pd.DataFrame) -> pd.DataFrame:
    """crowd-kit's MACE indexes its strategy counts (grouped, hence sorted, by worker and label) with codes in
    order of first appearance, so its result depends on row order unless both orders agree: sort."""
    return frame.sort_values(["worker", "label"], kind="mergesort").reset_index(drop=True)


def test_mace_agrees_with_crowd_kit():
    from crowdkit.aggregation import MACE

    frame, accuracy = _simulated(seed=0, tasks=600)
    labels, competence = _fit(frame, "mace")
    reference = MACE(n_restarts=10, n_iter=50, random_state=0).fit(_crowd_kit_order(frame))
    assert (labels.sort_index() == reference.labels_.sort_index()).mean() >= 0.99
    workers = pd.unique(_crowd_kit_order(frame)["worker"])
    theirs = pd.Series(reference.spamming_[:, 1] / reference.spamming_.sum(axis=1), index=workers).sort_index()
    assert np.corrcoef(competence.sort_index().to_numpy(), theirs.to_numpy())[0, 1] > 0.99
    assert np.corrcoef(competence.sort_index().to_numpy(), accuracy)[0, 1] > 0.85


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_agrees_with_crowd_kit_on_qags_like_labels(method):
    """The old MACE (plain EM from starts anywhere in [0, 1]) overturned three times as many QAGS majority
    labels as crowd-kit's. With crowd-kit's variational priors (Beta(1/2, 1/2) on spamming, Dirichlet(10)
    on a spammer's strategy) and near-balanced starts, both variants agree with crowd-kit's."""
    from crowdkit.aggregation import MACE

    from metrics_service.stats.label_aggregation import _encode, mace

    frame = _qags_like()
    t, w, a, tasks, workers, names = _encode(frame)
    posterior, _ = mace(t, w, a, len(tasks), len(workers), len(names), method=method)
    ours = pd.Series(np.asarray(names)[posterior.argmax(axis=1)], index=tasks)
    reference = MACE(random_state=0, method=method).fit(_crowd_kit_order(frame)).labels_.sort_index()
    assert (ours == reference).mean() >= 0.99
    majority = frame.groupby("task")["label"].mean() >= 0.5
    flips = int((ours != majority).sum())
    assert abs(flips - int((reference != majority).sum())) <= 5
    if method == "vb":  # the priors keep MACE close to the majority where the crowd favours one class
        assert flips < 0.02 * len(tasks)


def test_glad_agrees_with_crowd_kit():
    from crowdkit.aggregation import GLAD

    from metrics_service.stats.label_aggregation import fit_labels

    frame, accuracy = _simulated(seed=1, tasks=400)
    ours = fit_labels(frame, "glad")
    reference = GLAD().fit(frame)
    assert (ours.labels.sort_index() == reference.labels_.sort_index()).mean() >= 0.99
    assert np.corrcoef(ours.ability.sort_index(), reference.alphas_.sort_index())[0, 1] > 0.95
    # crowd-kit's beta is the log inverse difficulty: our difficulty is exp(-beta).
    theirs = np.exp(-reference.betas_.sort_index())
    assert np.corrcoef(ours.difficulty.sort_index(), theirs)[0, 1] > 0.9
    assert np.corrcoef(ours.reliability.sort_index(), accuracy)[0, 1] > 0.5  # 400 tasks, 3 answers each: a rough estimate
    frame = _qags_like(seed=2, tasks=500)
    theirs = GLAD().fit(frame.assign(label=frame["label"].map({True: "yes", False: "no"}))).labels_ == "yes"
    assert (fit_labels(frame, "glad").labels.sort_index() == theirs.sort_index()).mean() >= 0.99


def test_posteriors_are_calibrated_and_intervals_narrow_with_evidence():
    from metrics_service.stats.label_aggregation import fit_labels, posterior_interval

    rng = np.random.default_rng(4)
    accuracy = rng.uniform(0.55, 0.95, 30)
    rows, truth = [], {}
    for task in range(1500):
        truth[f"t{task:04d}"] = label = bool(rng.random() < 0.7)
        for worker in rng.choice(30, 3, replace=False):
            rows.append((f"t{task:04d}", f"w{worker:02d}", label if rng.random() < accuracy[worker] else not label))
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    truth = pd.Series(truth)
    for method in ("dawid_skene", "mace", "glad"):
        fitted = fit_labels(frame, method)
        assert fitted.posterior.between(0.5, 1.0).all() and np.allclose(fitted.probabilities.sum(axis=1), 1.0)
        right = (fitted.labels == truth[fitted.labels.index]).to_numpy()
        posterior = fitted.posterior.to_numpy()
        # Confident labels are right more often than doubtful ones, and the mean posterior is near accuracy.
        assert right[posterior > 0.95].mean() > right[posterior < 0.8].mean() + 0.15, method
        assert abs(posterior.mean() - right.mean()) < 0.06, method
    low, high = posterior_interval(np.array([0.9, 0.9, 0.99]), np.array([1, 5, 5]))
    assert low[0] < low[1] < low[2] and np.all(high <= 1.0) and np.all(low < [0.9, 0.9, 0.99])
    assert high[1] - low[1] < high[0] - low[0]


def test_models_see_through_spammers_that_fool_the_majority():
    judgements, truth = _spammed()
    accuracy = {}
    for method in METHODS:
        result = aggregate(judgements, method)
        units = result.units
        accuracy[method] = np.mean([f == truth[(s, i)] for s, i, f in zip(units["summary_id"], units["sentence_index"], units["factual"], strict=True)])
        if method == "glad":
            # GLAD is a one-coin model: two workers who always agree (both always say "factual") look
            # like the ablest, and with uniform class priors it follows them. That is its design, so its
            # ability is reported beside the others, not instead of them.
            ability = result.reliability["ability"]
            assert min(ability[2], ability[3]) > max(ability[0], ability[1], ability[4])
            continue
        if method != "majority":
            reliability = result.reliability["factual"]
            assert min(reliability[0], reliability[1]) > max(reliability[2], reliability[3], reliability[4])
    assert accuracy["majority"] < 0.8 and accuracy["dawid_skene"] == 1.0 and accuracy["mace"] == 1.0 and accuracy["glad"] < 0.8
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
    glad = researcher_client.get(f"{C}/report/?aggregation=glad")
    assert glad.status_code == 200 and glad.json()["options"]["aggregation"] == "glad"
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
    assert "Ability (GLAD)" in page and page.count('class="ability"') == 2
    abilities = [by_worker[w]["glad_ability"] for w in by_worker]
    assert all(f"{a:.2f}" in page for a in abilities)


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
    # Posteriors in the report: the majority is unsure of the sentences the spammers split (3 votes of 5).
    assert section["methods"]["mace"]["mean_posterior"] > section["methods"]["majority"]["mean_posterior"]
    assert section["methods"]["majority"]["sentences_below_0.9"] > section["methods"]["mace"]["sentences_below_0.9"]
    # Label confidence: with the majority, summaries whose spammers split a sentence 3 to 2 are left out,
    # every correlation uses the rest, and the report says how many it kept.
    assert mace["label_confidence"] is None and mace["definitions"]["label_confidence"] == "every judged summary"
    confident = researcher_client.get("/api/campaigns/spam/report/?min_label_posterior=0.9").json()
    kept = confident["label_confidence"]
    assert kept["judged_summaries_kept"] + kept["judged_summaries_left_out"] == 80 and 0 < kept["judged_summaries_kept"] < 80
    assert confident["n_human_rated"] == kept["judged_summaries_kept"] and "posterior >= 0.9" in confident["definitions"]["label_confidence"]
    assert confident["options"]["min_label_posterior"] == 0.9
    bad = researcher_client.get("/api/campaigns/spam/report/?min_label_posterior=1.5")
    assert bad.status_code == 400 and "min_label_posterior" in bad.json()
    reliable = sorted(section["workers"], key=lambda w: -w["mace"])[:2]
    assert all(w["mace"] > 0.9 for w in reliable) and sum(w["mace"] > 0.9 for w in section["workers"]) == 2
