"""BUMP export: record format, review gating, latest scores, the command, and the round trip through the importer."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotate.bump.exporter import iter_bump_records
from annotate.bump.models import Edit
from annotate.bump.review import make_reviewer, review_edit
from annotate.bump.services import create_bump_campaign
from annotate.models import Campaign, MetricScore, Summary
from annotate.services.assignments import request_assignment, submit_assignment
from annotate.services.imports import import_dataset
from tests.factories import BUMP_REFERENCE, make_bump_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def _latest(summary: Summary) -> tuple:
    """One value per metric: the most recently updated configuration."""
    rows = MetricScore.objects.filter(summary=summary).order_by("updated_at").values_list("metric", "value")
    return tuple(sorted(dict(rows).items()))


def _pairs(slug: str) -> set:
    out = set()
    for edited in Summary.objects.filter(document__campaign__slug=slug, edited_from__isnull=False).select_related("edited_from", "document"):
        out.add((
            edited.document.external_id, edited.document.text, edited.edited_from.text, edited.text,
            edited.requested_error_type, edited.corrected_error_type,
            _latest(edited), _latest(edited.edited_from),
        ))
    return out


def _collect_edit(campaign, worker, text):
    assignment = request_assignment(worker, campaign)
    submit_assignment(assignment.pk, worker, {"checkpoint": assignment.checkpoint.code, "edited": text}, submission_key="k")
    return Edit.objects.get(assignment=assignment)


def test_export_writes_bump_records_of_reviewed_edits_with_latest_scores(django_user_model, tmp_path, samples_dir):
    campaign = create_bump_campaign("exp", "Export", "bump_taxonomy", status="running")
    reference = make_bump_document(campaign, types=["extrinsic_entity", "intrinsic_entity"])
    worker = make_worker()
    qualify(worker, campaign)
    first = _collect_edit(campaign, worker, BUMP_REFERENCE.replace("Merck", "Pfizer"))
    second = _collect_edit(campaign, worker, BUMP_REFERENCE.replace("Merck", "Peter Marks"))
    reviewer = django_user_model.objects.create_user("rev")
    make_reviewer(reviewer)
    assert list(iter_bump_records(campaign)) == []  # nothing reviewed yet
    extrinsic = first if first.requested_error_type == "extrinsic_entity" else second
    intrinsic = second if extrinsic is first else first
    review_edit(extrinsic.pk, reviewer, campaign_id=campaign.pk, action="accept")
    review_edit(intrinsic.pk, reviewer, campaign_id=campaign.pk, action="correct", corrected_type="other")
    # Two configurations of one metric: the most recent one is exported.
    old = MetricScore.objects.create(summary=extrinsic.edited_summary, metric="BLEU", config_key="a", value=0.1)
    MetricScore.objects.create(summary=extrinsic.edited_summary, metric="BLEU", config_key="b", value=0.7)
    MetricScore.objects.filter(pk=old.pk).update(value=0.1)  # keeps its older updated_at
    MetricScore.objects.create(summary=reference, metric="BLEU", config_key="a", value=1.0)

    records = {r["edited_summary"]: r for r in iter_bump_records(campaign)}
    assert len(records) == 2
    accepted = records[extrinsic.text]
    assert accepted["article_id"] == int(reference.document.external_id)
    assert (accepted["article"], accepted["reference_summary"]) == (reference.document.text, reference.text)
    assert (accepted["error_type"], accepted["corrected_error_type"]) == ("Extrinsic Entity Error", "Extrinsic Entity Error")
    assert accepted["scores"] == {"BLEU_reference": 1.0, "BLEU_edited": 0.7}
    corrected = records[intrinsic.text]
    assert (corrected["error_type"], corrected["corrected_error_type"], corrected["scores"]) == ("Intrinsic Entity Error", "Other", {"BLEU_reference": 1.0})

    # The management command writes the same records; re-importing gives the same pairs, types and scores.
    path = tmp_path / "out.json"
    call_command("export_bump", "--campaign", "exp", str(path))
    assert json.loads(path.read_text()) == list(iter_bump_records(campaign))
    import_dataset("bump", [path], campaign_slug="exp-copy")
    assert _pairs("exp-copy") == {p for p in _pairs("exp") if p[3] in records}
    assert Campaign.objects.get(slug="exp-copy").kind == "bump_taxonomy"


def test_imported_samples_round_trip_with_free_style_types(samples_dir, tmp_path):
    import_dataset("bump", [samples_dir / "bump_task2_sample.json"], campaign_slug="t2", campaign_kind="bump_free")
    records = list(iter_bump_records(Campaign.objects.get(slug="t2")))
    # The source's ids and Task 2 labels come back verbatim, and no corrected_error_type is invented.
    source = json.loads((samples_dir / "bump_task2_sample.json").read_text())
    assert sorted(records, key=lambda r: r["id"]) == sorted(source, key=lambda r: r["id"])
    assert [list(r) for r in records] == [list(source[0])] * 8  # same keys in the same order
    assert all(len(r["scores"]) == 24 for r in records)
    path = tmp_path / "t2.json"
    path.write_text(json.dumps(records))
    import_dataset("bump", [path], campaign_slug="t2-copy", campaign_kind="bump_free")
    assert _pairs("t2-copy") == _pairs("t2")


def test_task1_sample_keeps_ids_and_corrected_labels(samples_dir):
    import_dataset("bump", [samples_dir / "bump_task1_sample.json"], campaign_slug="t1")
    records = sorted(iter_bump_records(Campaign.objects.get(slug="t1")), key=lambda r: r["id"])
    assert records == json.loads((samples_dir / "bump_task1_sample.json").read_text())


def test_collected_edits_get_stable_factlab_ids_that_survive_a_round_trip(tmp_path):
    campaign = create_bump_campaign("ids", "Ids", "bump_taxonomy", status="running")
    source = make_bump_document(campaign, types=["extrinsic_entity"])
    edited = Summary.objects.create(
        document=source.document, system="human-edit", text=BUMP_REFERENCE.replace("Merck", "Pfizer"), edited_from=source,
        requested_error_type="extrinsic_entity",
    )
    [record] = iter_bump_records(campaign)
    assert record["id"] == f"factlab-{edited.pk}" and record["error_type"] == "Extrinsic Entity Error"
    path = tmp_path / "ids.json"
    path.write_text(json.dumps([record]))
    import_dataset("bump", [path], campaign_slug="ids-copy")
    assert list(iter_bump_records(Campaign.objects.get(slug="ids-copy"))) == [record]


def test_export_command_names_a_missing_campaign(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command("export_bump", "--campaign", "nope", str(tmp_path / "x.json"))
