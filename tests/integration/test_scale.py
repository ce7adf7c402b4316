"""Research-scale paths: bulk imports, spaCy once per distinct text, stored live counts behind
claims, cached page relevance. Speed itself is measured by the scripts in benchmarks/, not here."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.frank import page_cache
from annotate.importers import store as store_module
from annotate.importers.base import ImportFailed
from annotate.models import LIVE_ASSIGNMENT_STATUSES, Assignment, AssignmentStatus, Item, MetricScore, Summary
from annotate.services.assignments import expire_stale_assignments, release_assignment, request_assignment
from annotate.services.imports import import_dataset, import_scores
from annotate.services.participation import block_participation, get_participation
from tests.factories import make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def _bump_records(samples_dir) -> list[dict]:
    return json.loads((samples_dir / "bump_task1_sample.json").read_text())


def test_bump_import_parses_each_distinct_text_once_in_batches(samples_dir, tmp_path, monkeypatch):
    records = _bump_records(samples_dir)
    # Two copies of every pair under new ids: the article and reference recur, edits are distinct per id.
    doubled = records + [{**r, "id": f"{r['id']}-copy", "edited_summary": r["edited_summary"] + " Indeed."} for r in records]
    path = tmp_path / "task1.json"
    path.write_text(json.dumps(doubled))
    calls: list[list[str]] = []
    real = store_module.split_sentences_many

    def counting(texts, *args, **kwargs):
        texts = list(texts)
        calls.append(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(store_module, "split_sentences_many", counting)
    report = import_dataset("bump", [path], campaign_slug="bump-batched", campaign_kind="bump_taxonomy")
    parsed = [t for call in calls for t in call]
    distinct = {r["article"] for r in doubled} | {r["reference_summary"] for r in doubled} | {r["edited_summary"] for r in doubled}
    assert sorted(parsed) == sorted(distinct)  # each distinct text exactly once
    assert len(calls) == 1  # one nlp.pipe pass for the batch
    assert report.created["summaries"] == len({(r["article_id"]) for r in doubled}) + len(doubled)
    edit = Summary.objects.get(document__campaign__slug="bump-batched", external_id=f"bump:{records[0]['id']}")
    assert edit.sentences and " ".join(edit.sentences).split() == records[0]["edited_summary"].split()

    # Re-import: everything exists, so nothing is parsed and nothing is created.
    calls.clear()
    again = import_dataset("bump", [path], campaign_slug="bump-batched")
    assert calls == [] and sum(again.created.values()) == 0
    assert again.existing["metric scores"] == report.created["metric scores"]


def test_bump_scores_are_bulk_written_with_the_values_of_the_file(samples_dir):
    records = _bump_records(samples_dir)
    with CaptureQueriesContext(connection) as queries:
        report = import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="bump-bulk", campaign_kind="bump_taxonomy")
    n_scores = report.created["metric scores"]
    assert n_scores == MetricScore.objects.filter(summary__document__campaign__slug="bump-bulk").count() > 0
    # Scores are not written one by one: a few statements for all of them (a temporary table filled by COPY,
    # then one upsert), whatever their number. The import's other statements (campaign, documents, gold,
    # control items) do not depend on the number of scores.
    score_statements = [q["sql"] for q in queries.captured_queries if "annotate_metricscore" in q["sql"] or "factlab_import_scores" in q["sql"]]
    assert len(score_statements) <= 4 < n_scores
    edit = Summary.objects.get(document__campaign__slug="bump-bulk", external_id=f"bump:{records[3]['id']}")
    key = next(k for k in records[3]["scores"] if k.endswith("_edited"))
    assert MetricScore.objects.get(summary=edit, metric=key.removesuffix("_edited")).value == pytest.approx(records[3]["scores"][key])


@pytest.fixture
def scored_campaign():
    campaign = make_campaign()
    make_document(campaign)
    make_document(campaign)
    return campaign, list(Summary.objects.filter(document__campaign=campaign).order_by("id"))


def test_csv_scores_import_counts_updates_and_last_value_wins(tmp_path, scored_campaign):
    campaign, summaries = scored_campaign
    path = tmp_path / "scores.csv"
    doc = summaries[1].document.external_id
    path.write_text(
        "summary_id,document,system,metric,value\n"
        f"{summaries[0].pk},,,rouge2,0.25\n"
        f",{doc},{summaries[1].system},rouge2,0.5\n"
        f"{summaries[0].pk},,,rouge2,0.75\n"  # the same key again: the last value wins
    )
    report = import_scores("csv", [path], campaign_slug=campaign.slug)
    assert report.records == 3 and report.created["metric scores"] == 2
    assert MetricScore.objects.get(summary=summaries[0], metric="rouge2").value == 0.75
    assert MetricScore.objects.get(summary=summaries[1], metric="rouge2").value == 0.5
    path.write_text(f"summary_id,metric,value\n{summaries[0].pk},rouge2,0.125\n")
    again = import_scores("csv", [path], campaign_slug=campaign.slug)
    assert again.created["metric scores"] == 0 and again.existing["metric scores"] == 1
    assert MetricScore.objects.get(summary=summaries[0], metric="rouge2").value == 0.125


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("summary_id,metric,value\n{sid},rouge2,0.1\n{sid},rouge2,high\n", "line 3, field 'value': expected a number"),
        ("summary_id,metric,value\n{sid},rouge2,nan\n", "line 2, field 'value': is not a finite number"),
        ("summary_id,metric,value\n999999999,rouge2,0.1\n", "line 2, field 'summary_id': no summary 999999999"),
        ("summary_id,metric\n{sid},rouge2\n", "the header must name metric, value and summary_id"),
        ("document,system,metric,value\nnope,system-0,rouge2,0.1\n", "line 2, field 'document': no summary of system 'system-0'"),
    ],
)
def test_bad_csv_scores_store_nothing_and_name_the_line(tmp_path, scored_campaign, body, message):
    campaign, summaries = scored_campaign
    path = tmp_path / "scores.csv"
    path.write_text(body.format(sid=summaries[0].pk))
    with pytest.raises(ImportFailed) as failure:
        import_scores("csv", [path], campaign_slug=campaign.slug)
    assert message in str(failure.value) and "scores.csv" in str(failure.value)
    assert not MetricScore.objects.filter(summary__document__campaign=campaign).exists()


def test_large_score_files_flush_in_batches_atomically(tmp_path, scored_campaign, monkeypatch):
    campaign, summaries = scored_campaign
    monkeypatch.setattr(store_module, "FLUSH_ROWS", 7)
    lines = [json.dumps({"summary_id": s.pk, "metric": f"m{i}", "value": i / 10}) for i in range(20) for s in summaries]
    path = tmp_path / "scores.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = import_scores("jsonl", [path], campaign_slug=campaign.slug)
    assert report.created["metric scores"] == len(lines) == MetricScore.objects.filter(summary__document__campaign=campaign).count()
    # A bad last line after several flushes: nothing of this import stays.
    renamed = [line.replace('"metric": "m', '"metric": "n') for line in lines]
    path.write_text("\n".join(renamed) + '\n{"summary_id": "x", "metric": "n", "value": 1}\n')
    with pytest.raises(ImportFailed, match="field 'summary_id'"):
        import_scores("jsonl", [path], campaign_slug=campaign.slug)
    assert not MetricScore.objects.filter(metric__startswith="n").exists()


def _live(item: Item) -> int:
    return item.assignments.filter(status__in=LIVE_ASSIGNMENT_STATUSES).count()


def test_stored_live_count_follows_claims_expiry_release_and_blocking():
    campaign = make_campaign(redundancy=2, entity_check_enabled=False)
    make_document(campaign)
    item = Item.objects.get(campaign=campaign)
    workers = [make_worker() for _ in range(4)]
    for w in workers:
        qualify(w, campaign)

    first = request_assignment(workers[0], campaign)
    second = request_assignment(workers[1], campaign)
    item.refresh_from_db()
    assert item.live_count == _live(item) == 2
    assert request_assignment(workers[2], campaign) is None  # full: the stored count hides it

    Assignment.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert expire_stale_assignments(campaign) == 1
    item.refresh_from_db()
    assert item.live_count == _live(item) == 1

    third = request_assignment(workers[2], campaign)
    assert third is not None and third.item_id == item.pk
    release_assignment(third)
    item.refresh_from_db()
    assert item.live_count == _live(item) == 1

    block_participation(get_participation(workers[1], campaign), "test")
    item.refresh_from_db()
    assert Assignment.objects.get(pk=second.pk).status == AssignmentStatus.RELEASED
    assert item.live_count == _live(item) == 0


def test_a_stale_stored_count_never_overfills_an_item():
    campaign = make_campaign(redundancy=1, entity_check_enabled=False)
    make_document(campaign)
    make_document(campaign)
    a, b = [make_worker() for _ in range(2)]
    qualify(a, campaign)
    qualify(b, campaign)
    taken = request_assignment(a, campaign)
    # Pretend the stored count missed the claim: the real count under the lock still decides.
    Item.objects.filter(pk=taken.item_id).update(live_count=0)
    other = request_assignment(b, campaign)
    assert other is not None and other.item_id != taken.item_id
    # Claims come in each worker's own order: a third worker has only the stale item left to try.
    third = make_worker()
    qualify(third, campaign)
    assert request_assignment(third, campaign) is None
    assert Item.objects.get(pk=taken.item_id).live_count == 1  # repaired on the way


def test_claim_query_does_not_count_assignments_of_the_campaign():
    campaign = make_campaign(redundancy=3, entity_check_enabled=False)
    for _ in range(3):
        make_document(campaign)
    worker = make_worker()
    qualify(worker, campaign)
    with CaptureQueriesContext(connection) as queries:
        assert request_assignment(worker, campaign) is not None
    # The candidates' query (the claimed item's lock, which counts that one item's assignments, is not one).
    candidate_sql = [q["sql"] for q in queries.captured_queries
                     if "live_count" in q["sql"] and q["sql"].startswith("SELECT") and "FOR UPDATE" not in q["sql"]]
    assert candidate_sql and not any("COUNT(" in sql.upper() and "GROUP BY" in sql.upper() for sql in candidate_sql)


def test_relevance_is_computed_once_per_distinct_input(monkeypatch):
    cache.clear()
    calls = []
    real = page_cache.relevance.relevant_sentences

    def counting(article, queries, k):
        calls.append(list(queries))
        return real(article, queries, k)

    monkeypatch.setattr(page_cache.relevance, "relevant_sentences", counting)
    article = ["The council approved the budget on Monday.", "Rain fell all week."]
    first = page_cache.relevant_sentences(article, ["The budget was approved"], 1)
    assert page_cache.relevant_sentences(article, ["The budget was approved"], 1) == first == [[0]]
    assert len(calls) == 1
    # Another query, another k or another article is another key.
    page_cache.relevant_sentences(article, ["Rain fell"], 1)
    page_cache.relevant_sentences(article, ["The budget was approved"], 2)
    page_cache.relevant_sentences(article[:1], ["The budget was approved"], 1)
    assert len(calls) == 4


def test_named_entities_parse_each_text_once(monkeypatch):
    from annotate import nlp

    cache.clear()
    calls = []
    real = nlp._named_entities
    monkeypatch.setattr(nlp, "_named_entities", lambda text: calls.append(text) or real(text))
    text = "Helen Carter met the mayor of Greenvale in Paris on Monday."
    first = nlp.named_entities(text)
    assert nlp.named_entities(text) == first and "Helen Carter" in first
    assert calls == [text]
