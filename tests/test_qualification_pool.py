"""A qualification that cannot be brute-forced (issue 13): a pool with a random per-worker subset covering
every category, pass/fail only, attempts counted per worker and per network address, one scoring rule."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotate.frank import content as frank_content
from annotate.frank.protocol import (
    answer_correct,
    qualification_exercise,
    tutorial_feedback,
)
from annotate.frank.typology import CODES
from annotate.models import Participation, QualificationAttempt
from tests.factories import make_campaign, make_document, make_worker
from tests.test_frank_units import key_answers
from tests.test_frank_views import qualification_form

pytestmark = pytest.mark.django_db


def test_each_worker_and_attempt_gets_a_stable_random_subset_covering_every_category():
    tests = [frank_content.qualification_for("secret", 1, worker, 0) for worker in range(40)]
    for exercise in tests:
        categories = [k.category for summary in exercise.summaries for k in summary]
        assert set(CODES) <= set(categories) and categories.count(None) == frank_content.QUALIFICATION_FACTUAL_PER_TEST
    distinct = {tuple(k.text for s in e.summaries for k in s) for e in tests}
    assert len(distinct) >= 35  # practically every worker sees another test
    assert frank_content.qualification_for("secret", 1, 7, 0) == tests[7]  # the same on every page load
    assert frank_content.qualification_for("secret", 1, 7, 1) != tests[7]  # a new draw per attempt
    assert frank_content.qualification_for("other secret", 1, 7, 0) != tests[7]  # unpredictable without the secret
    assert frank_content.pool_problems(frank_content.QUALIFICATION_POOL[:3], 5)  # a pool must cover every category


def test_tutorial_qualification_and_traps_share_one_scoring_rule():
    key = frank_content.TUTORIAL.sentence(0, 1)  # EntE
    for categories, right in ((["EntE"], True), (["RelE", "EntE"], True), (["RelE"], False), (["RelE", "EntE", "OutE"], False)):
        assert answer_correct(False, "EntE", False, categories) is right
        assert tutorial_feedback(0, 1, False, categories)["correct"] is right, categories
        assert answer_correct(key.factual, key.category, False, categories) is right


def _take(client: Client, campaign, worker, address: str, flip: int):
    client.force_login(worker.user)
    url = reverse("annotate:frank-qualification", args=[campaign.slug])
    client.get(url, REMOTE_ADDR=address)
    exercise = qualification_exercise(Participation.objects.get(worker=worker, campaign=campaign))
    return client.post(url, qualification_form(key_answers(exercise, flip=flip)), REMOTE_ADDR=address)


def test_attempts_are_limited_per_network_address_and_only_pass_or_fail_is_shown(settings):
    settings.FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS = 3
    campaign = make_campaign(qualification_required=True, qualification_attempts=1)
    make_document(campaign)
    shown = []
    for _ in range(3):  # three throwaway identities from one address fail once each...
        response = _take(Client(), campaign, make_worker(), "203.0.113.9", flip=13)
        assert response.status_code == 200 and b"You did not pass" in response.content
        shown.append(response.content)
    # ...and learn nothing: no score, no marks; the pages differ only by their CSRF token.
    assert all(b"%" not in page.split(b"<h1>Qualification result</h1>")[1] for page in shown)
    fourth = _take(Client(), campaign, make_worker(), "203.0.113.9", flip=0)
    assert fourth.status_code == 403 and b"No qualification attempt is left from your network" in fourth.content
    assert QualificationAttempt.objects.filter(participation__campaign=campaign).count() == 3
    # Another address is not affected, and the address is stored only as a keyed hash.
    other = _take(Client(), campaign, make_worker(), "198.51.100.4", flip=0)
    assert b"You passed" in other.content
    assert not QualificationAttempt.objects.filter(address__contains="203.0").exists()
    # Another campaign counts its own attempts.
    second = make_campaign(qualification_required=True, qualification_attempts=1)
    assert b"You passed" in _take(Client(), second, make_worker(), "203.0.113.9", flip=0).content


def test_admins_import_their_own_material_validated_and_kept_server_side(tmp_path, client):
    import json

    from django.core.management import CommandError, call_command

    campaign = make_campaign(qualification_required=True, tutorial_required=True)
    pool = [{"text": f"Wrong sentence {code} about the harbour.", "category": code, "explanation": "x"} for code in CODES]
    pool += [{"text": f"Right sentence {i} about the harbour.", "category": None} for i in range(3)]
    material = {
        "tutorial": {"title": "Harbour", "article": ["The harbour opened in 1900."],
                     "summaries": [[{"text": "The harbour opened in 1901.", "category": "CircE", "explanation": "It was 1900."}]]},
        "qualification": {"title": "Harbour test", "article": ["The harbour opened in 1900."], "pool": pool, "factual_per_test": 3},
    }
    bad = dict(material, qualification={**material["qualification"], "pool": pool[:3]})
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(CommandError, match="qualification.pool: no sentence of category"):
        call_command("import_training_material", "--campaign", campaign.slug, str(tmp_path / "bad.json"))
    campaign.refresh_from_db()
    assert campaign.training_material == {}  # nothing stored half-way
    (tmp_path / "good.json").write_text(json.dumps(material))
    call_command("import_training_material", "--campaign", campaign.slug, str(tmp_path / "good.json"))
    worker = make_worker()
    client.force_login(worker.user)
    tutorial = client.get(reverse("annotate:frank-tutorial", args=[campaign.slug])).content.decode()
    assert "The harbour opened in 1901." in tutorial and "It was 1900." not in tutorial and "data-category" not in tutorial
    check = client.post(reverse("annotate:frank-tutorial-check", args=[campaign.slug]),
                        {"summary": 0, "index": 0, "factual": False, "categories": ["CircE"]}, content_type="application/json").json()
    assert check["correct"] is True and check["total"] == 1
    Participation.objects.filter(worker=worker, campaign=campaign).update(tutorial_done=True)
    test_page = client.get(reverse("annotate:frank-qualification", args=[campaign.slug])).content.decode()
    assert "Harbour test" in test_page and "about the harbour" in test_page and "explanation" not in test_page
    exercise = qualification_exercise(Participation.objects.get(worker=worker, campaign=campaign))
    assert exercise.size == len(CODES) + 3
