"""The span qualification through the shared view: a test drawn per worker and attempt, no key in the page,
scored by word overlap per type; unanswered questions are named; a worker who answers "no error" everywhere
fails, one who ticks the key's words passes and then reaches the task."""
from __future__ import annotations

import doctest

import pytest
from django.conf import settings
from django.urls import reverse

from annotate.models import Participation
from annotate.spans import qualification as q
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db


def _post_for(test, answer) -> dict:
    data = {}
    for exercise in test:
        label, chosen = answer(exercise)
        data[f"{exercise.id}_type"] = label
        data[f"{exercise.id}_words"] = [str(i) for i in chosen]
    return data


def _key(exercise):
    return exercise.label, range(exercise.start, exercise.end)


def test_a_worker_passes_by_the_key_and_a_bot_saying_no_error_fails(client):
    campaign = make_campaign(kind="spans", qualification_required=True, qualification_pass_score=0.8)
    url = reverse("annotate:spans-qualification", args=[campaign.slug])
    honest = make_worker()
    client.force_login(honest.user)
    page = client.get(url)
    assert page.status_code == 200
    test = q.draw_test(settings.SECRET_KEY, campaign.pk, honest.pk, 0)
    assert [e["id"] for e in page.context["exercises"]] == [e.id for e in test] and len(test) == len(q.LABELS)
    html = page.content.decode()
    assert all(f'value="{e.label}" selected' not in html for e in test)  # nothing chosen for the worker
    # An unanswered question is named, nothing is counted.
    missing = client.post(url, {k: v for k, v in _post_for(test, _key).items() if not k.startswith(test[2].id)})
    assert missing.status_code == 400 and "Summary 3: choose an error type" in missing.content.decode()
    assert Participation.objects.get(worker=honest).qualification_attempts == 0
    passed = client.post(url, _post_for(test, _key))
    assert passed.status_code == 200 and passed.context["passed"] is True
    assert client.get(reverse("annotate:campaign", args=[campaign.slug])).url.endswith("/spans/task/")

    bot = make_worker()
    client.force_login(bot.user)
    client.get(url)
    bot_test = q.draw_test(settings.SECRET_KEY, campaign.pk, bot.pk, 0)
    failed = client.post(url, _post_for(bot_test, lambda e: (q.NO_ERROR, [])))
    assert failed.context["passed"] is False
    assert Participation.objects.get(worker=bot).qualification_score == pytest.approx(1 / len(q.LABELS))


def test_tests_differ_between_workers_and_attempts_and_overlap_is_scored_per_type():
    assert doctest.testmod(q).failed == 0
    tests = {tuple(e.id for e in q.draw_test("secret", 1, worker, attempt)) for worker in range(5) for attempt in range(3)}
    assert len(tests) > 5
    exercise = next(e for e in q.POOL if e.label == "extrinsic_np" and e.end - e.start == 3)
    inside = list(range(exercise.start, exercise.end))
    assert q.right(exercise, {"type": "extrinsic_np", "words": inside[1:]})  # two of three words: overlap 2/3
    assert not q.right(exercise, {"type": "intrinsic_np", "words": inside})  # the right words, the wrong type
    assert not q.right(exercise, {"type": "extrinsic_np", "words": list(range(exercise.end))})  # every word up to it
