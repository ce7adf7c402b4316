"""The span report on the imported samples: CoCo's token mode and MiniCheck per sentence (tiny random models)
measured word by word per unified type, each AUC and balanced accuracy checked against scikit-learn on labels
computed here from the stored answers; agreement and type distribution present."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from annotate.models import Campaign, Summary
from annotate.services.imports import import_dataset
from annotate.spans.detectors import score_words
from annotate.spans.models import SpanAnswer, WordScores
from annotate.spans.report import span_report
from metrics_service.scorers import get_scorer
from taxonomies.unified import UNIFIED_TYPES
from tests.tiny_models import tiny_minicheck_roberta_dir, tiny_seq2seq_dir  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"


def _labels_by_hand(campaign) -> dict[tuple[int, int], set[str]]:
    """(summary, word) -> types that at least two annotators (all of them when fewer) gave the word."""
    labels = {}
    for summary in Summary.objects.filter(document__campaign=campaign):
        answers = list(SpanAnswer.objects.filter(summary=summary))
        need = min(2, len(answers))
        n = answers[0].n_words
        for i in range(n):
            types = set()
            for t in UNIFIED_TYPES:
                votes = sum(any(s <= i < e and ty == t for s, e, ty in a.spans) for a in answers)
                if votes >= need:
                    types.add(t)
            labels[(summary.pk, i)] = types
    return labels


def test_word_level_detection_per_type_matches_scikit_learn(tiny_seq2seq_dir, tiny_minicheck_roberta_dir, capsys):  # noqa: F811
    paths = [SAMPLES / n for n in ("goyal_style.json", "cliff_style.jsonl", "xsumfaith_style.json", "offsets.jsonl")]
    import_dataset("span_records", paths[:3], campaign_slug="report-spans", campaign_kind="spans")
    import_dataset("span_offsets", paths[3:], campaign_slug="report-spans")
    campaign = Campaign.objects.get(slug="report-spans")
    coco = get_scorer("coco", model=str(tiny_seq2seq_dir), masks=["token"], device="cpu")
    minicheck = get_scorer("minicheck", model=str(tiny_minicheck_roberta_dir), chunk_size=12, device="cpu")
    assert score_words(campaign, "coco_token", coco) == 7
    assert score_words(campaign, "minicheck_sentence", minicheck) == 7

    section = span_report(campaign, n_resamples=200)
    labels = _labels_by_hand(campaign)
    stored = {(w.detector, w.summary_id): w.scores for w in WordScores.objects.all()}
    checked = 0
    for detector in ("coco_token", "minicheck_sentence"):
        for target in (*UNIFIED_TYPES, "any_error"):
            y, x = [], []
            for (summary_id, i), types in labels.items():
                value = stored[(detector, summary_id)][i]
                positive = bool(types) if target == "any_error" else target in types
                if value is None or (types and not positive):
                    continue
                y.append(positive)
                x.append(value)
            cell = section["detectors"][detector][target]
            assert (cell["n_error_words"], cell["n_correct_words"]) == (sum(y), len(y) - sum(y))
            if 0 < sum(y) < len(y):
                assert cell["auc"] == pytest.approx(roc_auc_score(y, x))
                assert cell["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, np.array(x) >= cell["threshold"]))
                checked += 1
    assert checked >= 8  # CoCo and MiniCheck, on at least four targets each

    # CoCo leaves function words and punctuation unscored; MiniCheck gives every word its sentence's score.
    assert any(v is None for (d, _), scores in stored.items() if d == "coco_token" for v in scores)
    assert all(v is not None and math.isfinite(v) for (d, _), scores in stored.items() if d == "minicheck_sentence" for v in scores)
    human = section["agreement"]["human"]
    assert human["span_f1"]["pairs"] > 0 and 0 <= human["span_f1"]["overlap"] <= 1 and human["token_alpha"] is not None
    assert set(section["word_labels"]) == {"dawid_skene", "glad"}
    assert sum(section["word_labels"]["glad"]["labels"].values()) == len(labels)
    by_category = section["unified_types"]["by_system_category"]
    assert by_category["SOTA"]["counts"]["extrinsic_np"] >= 2 and by_category["OLD"]["n"] == 1

    # The campaign's report (API, manage.py report --json) carries the same analyses in its protocol section.
    from metrics_service.report import build_report

    reported = build_report(campaign)["sections"][0]["details"]
    for detector in ("coco_token", "minicheck_sentence"):
        for target in (*UNIFIED_TYPES, "any_error"):
            assert reported["detectors"][detector][target]["auc"] == section["detectors"][detector][target]["auc"]
    assert reported["unified_types"] == section["unified_types"]

    call_command("span_report", "report-spans", "--resamples", "50")
    assert '"coco_token"' in capsys.readouterr().out
