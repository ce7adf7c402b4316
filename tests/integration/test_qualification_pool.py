"""A qualification that cannot be brute-forced: a pool with a random per-worker subset covering
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
from annotate.models import Participation, QualificationAttempt
from taxonomies.frank import CODES
from tests.factories import make_campaign, make_document, make_worker
from tests.integration.test_frank_units import key_answers
from tests.integration.test_frank_views import qualification_form

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


def _call_import(campaign, path):
    from django.core.management import call_command

    call_command("import_training_material", "--campaign", campaign.slug, str(path))


def test_bump_campaigns_import_their_own_pools_validated_as_a_whole(tmp_path, client):
    import json

    from django.core.management import CommandError

    from annotate.bump import content as bump_content
    from annotate.bump.protocol import qualification_test
    from annotate.bump.services import create_bump_campaign
    from annotate.models import CampaignStatus
    from annotate.services.participation import get_participation
    from taxonomies.bump import REQUESTABLE

    task1 = create_bump_campaign("pool-t1", "Task 1", "bump_taxonomy", status=CampaignStatus.RUNNING)
    task2 = create_bump_campaign("pool-t2", "Task 2", "bump_free", status=CampaignStatus.RUNNING)
    reference = "The harbour of Brill opened in 1900 ."
    # Types written as BUMP's files write them ("Extrinsic Entity Error") or as codes.
    edits = [{"edited": f"The harbour of Brill opened in 190{k} with {t.name} .", "error_type": t.name if k else t.code}
             for t in REQUESTABLE for k in range(2)]
    material = {"qualification": {"article": "The harbour of Brill opened in 1900.", "reference": reference,
                                  "edits_per_type": 2, "pool": edits}}
    failures = {
        "no_coref.json": ({"qualification": {**material["qualification"], "pool": [e for e in edits if "Coreference" not in e["edited"]]}},
                          "qualification.pool: no edit of type coreference"),
        "short.json": ({"qualification": {**material["qualification"], "edits_per_type": 3}}, "× edit of type intrinsic_predicate; a test needs 3"),
        "bad_type.json": ({"qualification": {**material["qualification"], "pool": edits + [{"edited": "x", "error_type": "Typo"}]}},
                          "qualification.pool[14].error_type: unknown error type 'Typo'"),
        "same.json": ({"qualification": {**material["qualification"], "pool": edits + [{"edited": reference, "error_type": "coreference"}]}},
                      "the edit is the reference itself"),
        "tutorial.json": ({"tutorial": {}, **material}, "BUMP campaigns have no tutorial page"),
    }
    for name, (data, message) in failures.items():
        (tmp_path / name).write_text(json.dumps(data))
        with pytest.raises(CommandError, match=message.replace("(", r"\(").replace("[", r"\[")):
            _call_import(task1, tmp_path / name)
    task1.refresh_from_db()
    assert task1.training_material == {}  # nothing stored half-way
    (tmp_path / "t1.json").write_text(json.dumps(material))
    _call_import(task1, tmp_path / "t1.json")
    task1.refresh_from_db()
    assert {e["error_type"] for e in task1.training_material["qualification"]["pool"]} == {t.code for t in REQUESTABLE}
    worker = make_worker()
    client.force_login(worker.user)
    page = client.get(f"/c/{task1.slug}/bump/qualification/").content.decode()
    assert "The harbour of Brill opened in 1900." in page and page.count("<select name=") == 14 and "error_type" not in page
    test = qualification_test(get_participation(worker, task1))
    answers = {f"e{n}": e.error_type for n, e in enumerate(test.edits, start=1)}
    assert "You passed" in client.post(f"/c/{task1.slug}/bump/qualification/", answers).content.decode()

    # Task 2: summaries, accurate (null) or with a type; each test needs accurate_per_test accurate ones.
    pool = [{"summary": f"The harbour opened in 1900 ({k}).", "error_type": None} for k in range(2)]
    pool += [{"summary": f"The harbour closed in 19{k}0 ({t.code}).", "error_type": t.code} for t in REQUESTABLE for k in range(1)]
    material2 = {"qualification": {"article": "The harbour of Brill opened in 1900.", "accurate_per_test": 3, "pool": pool}}
    (tmp_path / "t2bad.json").write_text(json.dumps(material2))
    with pytest.raises(CommandError, match="2 × accurate summary; a test needs 3"):
        _call_import(task2, tmp_path / "t2bad.json")
    (tmp_path / "t2.json").write_text(json.dumps({"qualification": {**material2["qualification"], "accurate_per_test": 2}}))
    _call_import(task2, tmp_path / "t2.json")
    newcomer = make_worker()
    client.force_login(newcomer.user)
    page = client.get(f"/c/{task2.slug}/bump/qualification/").content.decode()
    assert page.count("Is the summary accurate?") == 9 and "The harbour closed" in page
    task2.refresh_from_db()
    test = qualification_test(get_participation(newcomer, task2))
    assert isinstance(test, bump_content.AccuracyTest) and [s.error_type for s in test.summaries].count(None) == 2


def test_bump_pools_hold_at_least_as_many_key_bits_as_frank_and_pass_blind_no_more_often():
    """Farming with pass/fail answers (one bit each) needs at least the pool key's bits in attempts; the
    shipped BUMP pools must not be cheaper to learn, nor to pass blind, than FRANK's
    (benchmarks/qualification_farming.py prints the figures)."""
    from collections import Counter

    from annotate.bump import content as bump_content
    from annotate.qualification_pool import pool_key_bits
    from benchmarks.qualification_farming import bump_accuracy, bump_taxonomy, frank, needed_right, pass_probability

    assert pool_key_bits([2, 1]) == pytest.approx(1.5849625)  # 3 ways to label a pool of two a's and one b
    bits = {name: pool_key_bits(list(Counter(label(q) for q in pool).values())) for name, pool, label in (
        ("frank", frank_content.QUALIFICATION_POOL, lambda k: k.category),
        ("task1", bump_content.TAXONOMY_POOL, lambda e: e.error_type),
        ("task2", bump_content.ACCURACY_POOL, lambda s: s.error_type),
    )}
    assert bits["frank"] == pytest.approx(81.7, abs=0.1) and bits["task1"] >= bits["frank"] and bits["task2"] >= bits["frank"]
    # The exact blind pass probability: one arrangement of a test's labels out of 14!/2^7 (Task 1, no mistake).
    task1 = bump_taxonomy()
    answer = task1.strategies[next(iter(task1.strategies))]
    assert pass_probability(task1.test_counts, answer, 14) == pytest.approx(2**7 / 87178291200)
    assert pass_probability({"a": 1, "b": 1}, [frozenset({"a"}), frozenset({"a"})], 1) == 1.0
    frank_p = max(pass_probability(frank().test_counts, a, needed_right(13, 0.85)) for a in frank().strategies.values())
    task2 = bump_accuracy()
    task2_p = max(pass_probability(task2.test_counts, a, needed_right(11, task2.pass_score)) for a in task2.strategies.values())
    assert task2_p <= frank_p and frank_p >= 1 / (87178291200 / 2**7)
