"""Export round trips: FRANK (zip) and BUMP exports re-import into a new campaign with the same content."""
from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections import Counter, defaultdict

import pytest

from annotate.models import (
    Campaign,
    Document,
    MetricScore,
    SentenceJudgement,
    Summary,
    Trap,
)
from annotate.services.imports import import_dataset
from tests.conftest import FRANK_DIR, SAMPLES_DIR
from tests.test_api_fixtures import *
from tests.test_api_fixtures import _worker

pytestmark = pytest.mark.django_db
N_ARTICLES = 12


def _download(client, slug: str, **params) -> bytes:
    response = client.get(f"/api/campaigns/{slug}/export/", params)
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content)


@pytest.fixture
def frank_subset(tmp_path):
    """FRANK's folder restricted to a few articles of both datasets (the full import takes ~6 s)."""
    records = json.loads((FRANK_DIR / "human_annotations.json").read_text())
    hashes = sorted({r["hash"] for r in records if r["dataset"] == "cnndm"})[: N_ARTICLES // 2]
    hashes += sorted({r["hash"] for r in records if r["dataset"] == "bbc"})[: N_ARTICLES // 2]
    (tmp_path / "articles").mkdir()
    (tmp_path / "human_annotations.json").write_text(json.dumps([r for r in records if r["hash"] in hashes]))
    for h in hashes:
        shutil.copy(FRANK_DIR / "articles" / f"{h}.json", tmp_path / "articles" / f"{h}.json")
    return tmp_path



def _content(slug: str) -> dict:
    docs = {d.external_id: d for d in Document.objects.filter(campaign__slug=slug)}
    return {
        "documents": {k: (d.dataset, d.split, d.text, tuple(d.sentences), tuple(d.entities), d.negative_entity, d.url) for k, d in docs.items()},
        "traps": sorted(Trap.objects.filter(document__campaign__slug=slug).values_list("document__external_id", "code", "text", "expected_factual", "expected_category")),
        "summaries": {
            (s.document.external_id, s.system): (s.text, tuple(s.sentences), s.is_reference)
            for s in Summary.objects.filter(document__campaign__slug=slug, edited_from=None).select_related("document")
        },
        "judgements": _judgement_labels(slug),
    }


def _judgement_labels(slug: str) -> dict:
    labels = defaultdict(Counter)
    for doc, system, index, factual, categories in SentenceJudgement.objects.filter(summary__document__campaign__slug=slug).values_list(
        "summary__document__external_id", "summary__system", "sentence_index", "factual", "categories"
    ):
        labels[(doc, system, index)][(factual, tuple(sorted(categories)))] += 1
    return dict(labels)


def _add_collected_judgements(slug: str) -> int:
    """Three workers judge every sentence of the first four system summaries (disagreeing on some)."""
    workers = [_worker(f"rt{i}") for i in range(3)]
    summaries = Summary.objects.filter(document__campaign__slug=slug, is_reference=False).order_by("id")[:4]
    count = 0
    for n, summary in enumerate(summaries):
        for index in range(len(summary.sentences)):
            for w, worker in enumerate(workers):
                wrong = (n + index + w) % 3 == 0
                categories = (["OtherE"] if w == 2 else ["EntE", "CircE"]) if wrong else []
                SentenceJudgement.objects.create(summary=summary, sentence_index=index, worker=worker, factual=not wrong, categories=categories)
                count += 1
    return count


def test_frank_export_reimports_with_the_same_content(frank_subset, admin_client, tmp_path):
    import_dataset("frank", [frank_subset], campaign_slug="frank-a")
    assert _add_collected_judgements("frank-a") > 0
    archive_bytes = _download(admin_client, "frank-a", format="frank")
    archive = zipfile.ZipFile(io.BytesIO(archive_bytes))
    names = set(archive.namelist())
    assert {"human_annotations.json", "human_annotations_sentence.json"} <= names
    assert len([n for n in names if n.startswith("articles/")]) == N_ARTICLES
    summaries_a = json.loads(archive.read("human_annotations.json"))
    assert len(summaries_a) == Summary.objects.filter(document__campaign__slug="frank-a", is_reference=False).count()
    datasets = {r["dataset"] for r in summaries_a}
    assert datasets == {"cnndm", "bbc"}  # FRANK's spelling for XSum

    # Collected judgements override imported scores: Factuality is the mean of sentence majorities.
    judged = Summary.objects.filter(document__campaign__slug="frank-a", judgements__isnull=False).distinct()
    for summary in judged:
        record = next(r for r in summaries_a if (r["hash"], r["model_name"]) == (summary.document.external_id, summary.system))
        majorities = []
        for index in range(len(summary.sentences)):
            votes = list(summary.judgements.filter(sentence_index=index).values_list("factual", flat=True))
            majorities.append(sum(votes) / len(votes) >= 0.5)
        assert record["Factuality"] == pytest.approx(sum(majorities) / len(majorities))
        assert "Other" in record and "Flip_EntE" in record
    untouched = Summary.objects.filter(document__campaign__slug="frank-a", is_reference=False, judgements__isnull=True).first()
    record = next(r for r in summaries_a if (r["hash"], r["model_name"]) == (untouched.document.external_id, untouched.system))
    assert {k: v for k, v in record.items() if k not in ("hash", "model_name", "dataset", "split")} == untouched.human_scores

    path = tmp_path / "export.zip"
    path.write_bytes(archive_bytes)
    report = import_dataset("frank", [path], campaign_slug="frank-b")
    assert report.created["judgements"] == SentenceJudgement.objects.filter(summary__document__campaign__slug="frank-a").count()
    assert _content("frank-b") == _content("frank-a")
    for summary in Summary.objects.filter(document__campaign__slug="frank-b", is_reference=False).select_related("document"):
        record = next(r for r in summaries_a if (r["hash"], r["model_name"]) == (summary.document.external_id, summary.system))
        assert summary.human_scores == pytest.approx({k: v for k, v in record.items() if k not in ("hash", "model_name", "dataset", "split")})

    # Exporting the copy gives the same files, annotator pseudonyms aside.
    archive_b = zipfile.ZipFile(io.BytesIO(_download(admin_client, "frank-b", format="frank")))
    assert json.loads(archive_b.read("human_annotations.json")) == summaries_a

    def anonymous(sentences: list[dict]) -> list:
        return [(r["hash"], r["model_name"], [sorted(map(tuple, a.values())) for a in r["summary_sentences_annotations"]]) for r in sentences]

    assert anonymous(json.loads(archive_b.read("human_annotations_sentence.json"))) == anonymous(json.loads(archive.read("human_annotations_sentence.json")))


def test_frank_sentence_file_format(frank_subset, researcher, researcher_client):
    import_dataset("frank", [frank_subset], campaign_slug="frank-a")
    Campaign.objects.get(slug="frank-a").researchers.add(researcher)
    _add_collected_judgements("frank-a")
    records = json.loads(_download(researcher_client, "frank-a", format="frank", file="sentences"))
    assert len(records) == 4
    first = records[0]
    assert set(first) >= {"hash", "model_name", "article", "reference", "summary", "summary_sentences", "summary_sentences_annotations"}
    assert len(first["summary_sentences_annotations"]) == len(first["summary_sentences"])
    labels = first["summary_sentences_annotations"][0]
    assert len(labels) == 3 and all(name.startswith("w") for name in labels)
    assert all(codes == ["NoE"] or set(codes) <= {"EntE", "CircE", "Other"} for codes in labels.values())


def test_frank_importer_rejects_unsafe_or_broken_zips(tmp_path):
    from annotate.importers.base import ImportFailed

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../human_annotations.json", "[]")
    with pytest.raises(ImportFailed, match="unsafe member name"):
        import_dataset("frank", [evil], campaign_slug="evil")
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("human_annotations.json", json.dumps([{"hash": "h1", "model_name": "m", "dataset": "cnndm", "Factuality": 1.0}]))
        archive.writestr("articles/h1.json", json.dumps({"article": "A.", "article_lines": ["A."], "m_lines": ["S."]}))
        archive.writestr("human_annotations_sentence.json", json.dumps([{"hash": "h1", "model_name": "m", "summary_sentences_annotations": [{"w1": ["Bogus"]}]}]))
    with pytest.raises(ImportFailed, match=r"unknown FRANK error category 'Bogus'") as failure:
        import_dataset("frank", [bad], campaign_slug="bad")
    assert failure.value.field == "summary_sentences_annotations[0].w1" and failure.value.record == 0
    assert not Campaign.objects.filter(slug__in=["evil", "bad"]).exists()


def _bump_pairs(slug: str) -> set:
    pairs = set()
    for edited in Summary.objects.filter(document__campaign__slug=slug, edited_from__isnull=False).select_related("edited_from", "document"):
        scores = dict(MetricScore.objects.filter(summary=edited).values_list("metric", "value"))
        reference_scores = dict(MetricScore.objects.filter(summary=edited.edited_from).values_list("metric", "value"))
        pairs.add((
            edited.document.external_id, edited.document.text, edited.edited_from.text, edited.text,
            edited.requested_error_type, edited.corrected_error_type,
            tuple(sorted(scores.items())), tuple(sorted(reference_scores.items())),
        ))
    return pairs


def test_bump_export_reimports_with_the_same_pairs_types_and_scores(admin_client, tmp_path):
    import_dataset("bump", [SAMPLES_DIR / "bump_task1_sample.json"], campaign_slug="bump-a")
    exported = _download(admin_client, "bump-a", format="bump")
    records = json.loads(exported)
    assert len(records) == 7 and all("scores" in r for r in records)
    path = tmp_path / "bump.json"
    path.write_bytes(exported)
    import_dataset("bump", [path], campaign_slug="bump-b")
    assert _bump_pairs("bump-a") and _bump_pairs("bump-b") == _bump_pairs("bump-a")


def test_streamed_frank_scores_match_the_statistics_module():
    """The exporter's plain-Python scores equal metrics_service.stats.factuality.summary_human_scores."""
    import random

    import pandas as pd

    from annotate.aggregation import frank_scores
    from metrics_service.stats.factuality import summary_human_scores
    from taxonomies.frank import CODES, data_file_key

    rng = random.Random(7)
    rows = []
    for summary_id in range(40):
        for index in range(rng.randint(1, 4)):
            for worker in range(rng.choice([1, 2, 3, 4])):
                factual = rng.random() < 0.6
                categories = [] if factual else rng.sample(list(CODES), rng.randint(0, 2))
                rows.append((summary_id, index, worker, factual, categories))
    frame = pd.DataFrame(rows, columns=["summary_id", "sentence_index", "worker_id", "factual", "categories"])
    expected = summary_human_scores(frame)
    for summary_id, row in expected.iterrows():
        got = frank_scores((i, f, c) for s, i, _, f, c in rows if s == summary_id)
        want = {(f"Flip_{data_file_key(k[5:])}" if k.startswith("Flip_") else data_file_key(k)): v for k, v in row.items()}
        assert got == pytest.approx(want), summary_id
