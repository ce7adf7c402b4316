"""Error traps from accepted human BUMP edits of the same article, weighted by their source.

A FRANK campaign and a BUMP campaign hold the same article (imported with other spacing and tokenisation).
The BUMP campaign's edits go through the real review service; preparing the FRANK pages then turns each
accepted edit's changed sentence into an error trap of weight 1.0, next to mechanical traps of weight 0.5.
"""
from __future__ import annotations

import random

import pytest

from annotate.bump.models import Edit
from annotate.bump.review import review_edit
from annotate.frank.page import choose_traps
from annotate.frank.prepared import prepare_documents, prepared_page
from annotate.frank.traps import article_fingerprint, changed_sentence
from annotate.models import (
    Document,
    DocumentPage,
    Summary,
    Trap,
    TrapSource,
    trap_weight,
)
from tests.factories import ARTICLE, make_campaign, make_document, make_worker

pytestmark = pytest.mark.django_db

REFERENCE = ["Greenvale 's council approved a new budget on Monday .", "Mayor Helen Carter said it funds three new schools ."]


def _bump_article(campaign, *, text: str) -> Summary:
    document = Document.objects.create(campaign=campaign, external_id=f"bump-{campaign.pk}", text=text, sentences=[text])
    return Summary.objects.create(
        document=document, system="reference", text=" ".join(REFERENCE), sentences=REFERENCE, is_reference=True,
    )


def _edit(reference: Summary, second: str, error_type: str, *, platform: bool, worker=None) -> Summary:
    """An edit of the reference's second sentence: imported (no edit record) or made on the platform (pending)."""
    sentences = [REFERENCE[0], second]
    edited = Summary.objects.create(
        document=reference.document, system="human-edit", text=" ".join(sentences), sentences=sentences,
        edited_from=reference, requested_error_type=error_type,
        corrected_error_type="" if platform else error_type, external_id=f"edit-{second[:10]}",
    )
    if platform:
        Edit.objects.create(
            worker=worker, source_summary=reference, edited_summary=edited, requested_error_type=error_type,
            text=edited.text, word_distance=1,
        )
    return edited


def test_same_article_matches_whatever_the_tokenisation():
    assert article_fingerprint("Greenvale's council, on Monday.") == article_fingerprint("greenvale 's council , on monday .")
    assert article_fingerprint("Greenvale's council") != article_fingerprint("Greenvale's councils")
    assert changed_sentence(REFERENCE, [REFERENCE[0], "Mayor Smith said it funds three new schools ."]) == "Mayor Smith said it funds three new schools ."
    assert changed_sentence(REFERENCE, REFERENCE) is None


def test_accepted_bump_edits_of_the_same_article_become_weighted_error_traps():
    frank = make_campaign(trap_rate=1.0)
    document = make_document(frank, traps={"F0": ARTICLE[0], "F5": "Budget the approved council Monday new."})
    bump = make_campaign(kind="bump_taxonomy")
    # The same article as BUMP ships it: other spacing, tokenised possessives, a different id.
    reference = _bump_article(bump, text="  ".join(s.replace("Greenvale", "Greenvale ") for s in ARTICLE))
    other = _bump_article(make_campaign(kind="bump_free"), text="An unrelated article about harbours.")
    editor = make_worker()
    reviewer = make_worker(staff=True).user
    imported = _edit(reference, "Councillor Smith said it funds three new schools .", "intrinsic_entity", platform=False)
    accepted = _edit(reference, "Mayor Helen Carter said it funds three new schools in 2030 .", "extrinsic_circumstance", platform=True, worker=editor)
    corrected = _edit(reference, "Mayor Helen Carter said it closes three new schools .", "extrinsic_predicate", platform=True, worker=editor)
    _edit(reference, "Mayor Helen Carter said it funds three old schools .", "extrinsic_entity", platform=True, worker=editor)  # pending
    rejected = _edit(reference, "Mayor Helen Carter said it funds three new schools .", "coreference", platform=True, worker=editor)
    _edit(other, "Councillor Jones said it funds three new schools .", "intrinsic_entity", platform=False)  # another article
    review_edit(accepted.edit_record.pk, reviewer, "accept", campaign_id=bump.pk)
    review_edit(corrected.edit_record.pk, reviewer, "correct", campaign_id=bump.pk, corrected_type="intrinsic_predicate")
    review_edit(rejected.edit_record.pk, reviewer, "reject", campaign_id=bump.pk)

    prepare_documents([document])
    traps = {t.text: t for t in Trap.objects.filter(document=document)}
    from_edits = {t.text: t for t in traps.values() if t.source == TrapSource.BUMP_EDIT}
    assert set(from_edits) == {
        "Councillor Smith said it funds three new schools .",
        "Mayor Helen Carter said it funds three new schools in 2030 .",
        "Mayor Helen Carter said it closes three new schools .",
    }
    smith = from_edits["Councillor Smith said it funds three new schools ."]
    assert (smith.code, smith.expected_factual, smith.expected_category, smith.edited_summary_id) == ("B", False, "EntE", imported.pk)
    assert from_edits["Mayor Helen Carter said it closes three new schools ."].expected_category == "RelE"  # the reviewed type counts
    assert from_edits["Mayor Helen Carter said it funds three new schools in 2030 ."].expected_category == ""  # extrinsic: Yes/No only
    assert all(trap_weight(t) == 1.0 for t in from_edits.values())
    mechanical = [t for t in traps.values() if t.source == TrapSource.MECHANICAL]
    assert mechanical and all(trap_weight(t) == 0.5 for t in mechanical)
    # The stored page offers them as edited traps, and they can be placed on a page like any other.
    rows = {row["text"]: row for row in prepared_page(document)["traps"]}
    assert all(rows[text]["edited"] for text in from_edits)
    page_summaries = [s.sentences for s in Summary.objects.filter(document=document, edited_from__isnull=True)]
    placed = choose_traps(page_summaries, [(smith.pk, smith.text, True)], [0], random.Random(1))
    assert placed == {0: smith.pk}

    # Preparing again adds nothing twice; a review undone retires its trap (off the page; deleted when unanswered).
    prepare_documents([document])
    assert Trap.objects.filter(document=document, source=TrapSource.BUMP_EDIT).count() == 3
    review_edit(accepted.edit_record.pk, reviewer, "reject", campaign_id=bump.pk)
    prepare_documents([document])
    assert not Trap.objects.filter(document=document, text="Mayor Helen Carter said it funds three new schools in 2030 .").exists()
    shown = {row["text"] for row in DocumentPage.objects.get(document=document).data["traps"]}
    assert "Mayor Helen Carter said it funds three new schools in 2030 ." not in shown and smith.text in shown


def test_a_bump_edit_trap_is_shown_and_scored_through_the_real_task_views(client):
    """A worker who says "Yes" to the human-edited trap gets it marked wrong, on a trap worth 1.0."""
    from django.urls import reverse

    from annotate.models import Assignment, TrapAnswer
    from tests.factories import qualify
    from tests.integration.test_frank_protocol import answers_for

    frank = make_campaign(trap_rate=1.0, min_seconds_per_sentence=0)
    document = make_document(frank)
    bump = make_campaign(kind="bump_taxonomy")
    reference = _bump_article(bump, text=" ".join(ARTICLE))
    _edit(reference, "Councillor Smith said it funds three new schools .", "intrinsic_entity", platform=False)
    _edit(reference, "Mayor Helen Carter said it funds three new schools in 2030 .", "extrinsic_circumstance", platform=False)
    prepare_documents([document])
    # Only the human-edited traps are left, so every trap on the page is one of them.
    Trap.objects.filter(document=document, source=TrapSource.MECHANICAL).delete()
    prepare_documents([document])
    assert set(Trap.objects.filter(document=document).values_list("source", flat=True)) == {TrapSource.BUMP_EDIT}
    worker = make_worker()
    qualify(worker, frank)
    client.force_login(worker.user)
    page = client.get(reverse("annotate:frank-task", args=[frank.slug])).content.decode()
    assignment = Assignment.objects.get(worker=worker)
    shown = [spec["trap"] for spec in assignment.layout["summaries"] if spec["trap"]]
    assert shown and all(Trap.objects.get(pk=t).source == TrapSource.BUMP_EDIT for t in shown)
    assert "Councillor Smith" in page or "in 2030" in page  # shown like any summary sentence
    assert "bump_edit" not in page and "edited_summary" not in page  # its origin never reaches the page
    entity = assignment.layout["entity"]
    client.post(reverse("annotate:frank-entity", args=[frank.slug, assignment.pk]), {"choice": entity["answer"]},
                content_type="application/json")
    assignment.refresh_from_db()
    response = client.post(reverse("annotate:frank-submit", args=[frank.slug, assignment.pk]),
                           answers_for(assignment, trap_right=False), content_type="application/json")
    assert response.status_code == 200, response.content
    answers = list(TrapAnswer.objects.filter(assignment=assignment).select_related("trap"))
    assert len(answers) == len(shown) and not any(a.correct for a in answers)
    assert all(a.factual for a in answers) and all(trap_weight(a.trap) == 1.0 for a in answers)
