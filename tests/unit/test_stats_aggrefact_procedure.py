"""AggreFact's balanced-accuracy procedure, checked against an implementation written here from the paper's
description alone (plain loops, scikit-learn's balanced_accuracy_score), on a generated AggreFact-format file
with three detectors, several source benchmarks, both corpora and all three system categories."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

from metrics_service.stats.detection import (
    _SubsampleBatch,
    aggrefact_threshold,
    balanced_accuracy_report,
    subsample_interval,
)

SYSTEMS = {"bart": "SOTA", "pegasus": "SOTA", "bertsum": "XFORMER", "trans2s": "XFORMER", "pgn": "OLD", "tconvs2s": "OLD"}
DETECTORS = ("dae", "qags", "summac")


def generated_aggrefact_csv(seed: int = 7) -> str:
    """An AggreFact-format CSV: dataset (source benchmark), origin (corpus), id, doc, summary, model_name, label,
    cut, and one score column per detector; scores are informative but noisy, with ties."""
    rng = np.random.default_rng(seed)
    rows = []
    for benchmark in ("XSumFaith", "FRANK", "SummEval", "Polytope"):
        for origin in ("cnndm", "xsum"):
            for cut in ("val", "test"):
                for k in range(int(rng.integers(40, 90))):
                    system = str(rng.choice(list(SYSTEMS)))
                    label = int(rng.random() < 0.55)
                    row = {"dataset": benchmark, "origin": origin, "id": f"{benchmark}-{origin}-{cut}-{k}",
                           "doc": "An article.", "summary": "A summary.", "model_name": system, "label": label, "cut": cut}
                    for d, detector in enumerate(DETECTORS):
                        score = rng.normal(0.3 + 0.25 * label * (d + 1) / 2, 0.3)
                        row[f"{detector}_score"] = round(float(score), 2)  # rounding makes ties, as real scores have
                    rows.append(row)
    return pd.DataFrame(rows).to_csv(index=False)


def frame_from_csv(text: str) -> pd.DataFrame:
    raw = pd.read_csv(io.StringIO(text))
    return pd.DataFrame({
        "benchmark": raw["dataset"], "dataset": raw["origin"], "system": raw["model_name"],
        "split": raw["cut"].map({"val": "valid", "test": "test"}), "label": raw["label"].astype(bool),
        **{d: raw[f"{d}_score"] for d in DETECTORS},
    })


# --- the procedure as the paper describes it, written independently -------------------------------------------

def balanced_accuracy(labels, predictions):
    """scikit-learn's balanced accuracy (mean recall of the classes present), in plain Python: the searches below
    call it tens of thousands of times; a test checks it against scikit-learn's."""
    recalls = []
    for cls in (0, 1):
        members = [p for y, p in zip(labels, predictions, strict=True) if y == cls]
        if members:
            recalls.append(sum(1 for p in members if p == cls) / len(members))
    return sum(recalls) / len(recalls)


def paper_threshold(scores, labels):
    best_score, best_threshold = 0.0, 0.0
    for percentile in np.arange(0, 100, 0.2):
        threshold = np.percentile(scores, percentile)
        predictions = [1 if s > threshold else 0 for s in scores]
        value = balanced_accuracy(labels, predictions)
        if value >= best_score:
            best_score, best_threshold = value, threshold
    return best_threshold


def paper_balanced_accuracy(valid, test, detector):
    threshold = paper_threshold(list(valid[detector]), list(valid["label"].astype(int)))
    return balanced_accuracy(list(test["label"].astype(int)), [1 if s > threshold else 0 for s in test[detector]])


def paper_table4(frame, detector):
    table = {}
    for origin in sorted(frame["dataset"].unique()):
        for category in ("SOTA", "XFORMER", "OLD"):
            total, weighted = 0, 0.0
            for benchmark in sorted(frame["benchmark"].unique()):
                cell = frame[(frame["dataset"] == origin) & (frame["benchmark"] == benchmark)
                             & (frame["system"].map(SYSTEMS) == category)]
                valid, test = cell[cell["split"] == "valid"], cell[cell["split"] == "test"]
                if len(valid) == 0 or len(test) == 0:
                    continue
                weighted += paper_balanced_accuracy(valid, test, detector) * len(test)
                total += len(test)
            if total:
                table[(origin, category)] = weighted / total
    return table


def paper_table5(frame, detector, seed=0, resamples=1000):
    out = {}
    for origin in sorted(frame["dataset"].unique()):
        sota = frame[(frame["dataset"] == origin) & (frame["system"].map(SYSTEMS) == "SOTA")]
        valid, test = sota[sota["split"] == "valid"], sota[sota["split"] == "test"]
        threshold = paper_threshold(list(valid[detector]), list(valid["label"].astype(int)))
        labels = test["label"].astype(int).to_numpy()
        predictions = (test[detector].to_numpy() > threshold).astype(int)
        rng = np.random.default_rng(seed)
        values = []
        for _ in range(resamples):
            rows = rng.choice(len(labels), int(len(labels) * 0.8), replace=False)
            values.append(balanced_accuracy(list(labels[rows]), list(predictions[rows])))
        out[origin] = (balanced_accuracy(list(labels), list(predictions)), np.percentile(values, 2.5), np.percentile(values, 97.5))
    return out


@pytest.fixture(scope="module")
def generated():
    frame = frame_from_csv(generated_aggrefact_csv())
    return frame, balanced_accuracy_report(frame, list(DETECTORS))


@pytest.mark.parametrize("detector", DETECTORS)
def test_per_category_thresholds_and_table4_weighted_averages_match_the_paper(generated, detector):
    frame, report = generated
    expected = paper_table4(frame, detector)
    table4 = report[detector]["table4"]
    assert {(o, c) for o, cells in table4.items() for c in cells} == set(expected)
    for (origin, category), value in expected.items():
        assert table4[origin][category]["balanced_accuracy"] == pytest.approx(value, abs=1e-12)
        # Table 4's cell is also what the per-corpus entry shows per system category
        assert report[detector]["per_dataset"][origin]["by_system_category"][category]["balanced_accuracy"] == pytest.approx(value, abs=1e-12)
    # each benchmark cell has its own threshold, so they are not all the corpus's one
    cells = [b["threshold"] for o in table4.values() for c in o.values() for b in c["benchmarks"].values()]
    assert len(set(cells)) > len(table4)


@pytest.mark.parametrize("detector", DETECTORS)
def test_table5_single_sota_threshold_with_80_percent_subsample_intervals_match_the_paper(generated, detector):
    frame, report = generated
    for origin, (value, low, high) in paper_table5(frame, detector).items():
        cell = report[detector]["table5"][origin]
        assert cell["balanced_accuracy"] == pytest.approx(value, abs=1e-12)
        assert cell["ci_low"] == pytest.approx(low, abs=1e-12)
        assert cell["ci_high"] == pytest.approx(high, abs=1e-12)
        assert cell["ci_low"] <= value <= cell["ci_high"]


@pytest.mark.parametrize(("rows", "share"), [(2246, 0.45), (40, 0.05), (9, 0.5), (300, 1.0)])
def test_subsample_intervals_are_those_of_a_loop_over_the_same_draws(rows, share):
    """The interval's subsamples, drawn one by one from one seeded generator and scored by scikit-learn's balanced
    accuracy (a subsample with one class present scores that class's recall), whatever the blocks the platform
    scores them in; rare classes make single-class subsamples."""
    import warnings

    rng = np.random.default_rng(rows)
    labels, predictions = rng.random(rows) < share, rng.random(rows) < 0.5
    draws = np.random.default_rng(11)
    size = int(rows * 0.8)
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns about a class missing from a subsample's labels
        for _ in range(300):
            picked = draws.choice(rows, size, replace=False)
            values.append(balanced_accuracy_score(labels[picked], predictions[picked]))
    low, high = np.percentile(values, [2.5, 97.5])
    assert subsample_interval(labels, predictions, n_resamples=300, seed=11) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_intervals_that_share_their_draws_are_each_the_interval_alone():
    """A report draws the subsamples once per test-set size and scores every metric's predictions on them: each
    interval is the one its labels and predictions give alone, whatever else the batch holds (sizes mixed)."""
    rng = np.random.default_rng(5)
    jobs = [(rng.random(n) < 0.4, rng.random(n) < 0.5) for n in (120, 120, 37, 120, 37, 1)]
    batch, entries = _SubsampleBatch(200, 3), [{} for _ in jobs]
    for (labels, predictions), entry in zip(jobs, entries):
        batch.add(labels, predictions, entry)
    batch.flush()
    for (labels, predictions), entry in zip(jobs, entries):
        assert (entry["ci_low"], entry["ci_high"]) == subsample_interval(labels, predictions, n_resamples=200, seed=3)
    assert entries[-1] == {"ci_low": None, "ci_high": None}  # one row: no 80% subsample to draw


def test_the_plain_balanced_accuracy_here_is_scikit_learns():
    rng = np.random.default_rng(3)
    for _ in range(50):
        labels, predictions = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
        assert balanced_accuracy(list(labels), list(predictions)) == balanced_accuracy_score(labels, predictions)


def test_the_threshold_search_is_strict_over_the_percentile_grid_and_last_best_wins():
    scores = [0.1, 0.2, 0.2, 0.8, 0.9, 0.9]
    labels = [False, False, True, True, True, False]
    assert aggrefact_threshold(scores, labels) == pytest.approx(paper_threshold(scores, [int(v) for v in labels]), abs=1e-15)
    # a score equal to the threshold is predicted inconsistent under "strictly above"
    threshold = aggrefact_threshold([0.5, 0.5, 0.9], [False, False, True])
    assert threshold == pytest.approx(paper_threshold([0.5, 0.5, 0.9], [0, 0, 1]))
    assert not (threshold < 0.5) or threshold < 0.5


def test_the_platform_procedure_stays_available_by_name(generated):
    frame, _ = generated
    platform = balanced_accuracy_report(frame, ["dae"], n_resamples=50, procedure="platform")["dae"]
    assert platform["procedure"] == "platform" and "table4" not in platform
    with pytest.raises(ValueError, match="procedure: 'roc' is not one of aggrefact, platform"):
        balanced_accuracy_report(frame, ["dae"], procedure="roc")
