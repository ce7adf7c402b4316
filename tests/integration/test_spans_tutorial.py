"""The span tutorial: answers checked on the server, each shown beside the expected one; finishing it needs a
check first, and then the campaign entry moves the worker on."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Participation
from annotate.spans import tutorial
from tests.factories import make_campaign, make_worker

pytestmark = pytest.mark.django_db


def test_the_tutorial_shows_the_expected_span_beside_the_workers_and_then_lets_the_worker_on(client):
    campaign = make_campaign(kind="spans", tutorial_required=True)
    worker = make_worker()
    client.force_login(worker.user)
    entry = reverse("annotate:campaign", args=[campaign.slug])
    url = reverse("annotate:spans-tutorial", args=[campaign.slug])
    assert client.get(entry).url == url
    done = reverse("annotate:spans-tutorial-done", args=[campaign.slug])
    assert client.post(done).url == url  # not before a check
    first, second, third = tutorial.EXERCISES
    answers = {
        f"{first.id}_type": "extrinsic_np", f"{first.id}_words": [str(first.start)],  # the right word, the wrong type
        f"{second.id}_type": second.label, f"{second.id}_words": [str(second.start)],
        f"{third.id}_type": "no_error",
    }
    missing = client.post(url, {k: v for k, v in answers.items() if not k.startswith(third.id)})
    assert missing.status_code == 400 and "Summary 3" in missing.content.decode()
    checked = client.post(url, answers)
    html = checked.content.decode()
    shown = checked.context["exercises"]
    assert [q["right"] for q in shown] == [False, True, True]
    assert shown[0]["yours"] == "“2020” — Extrinsic noun phrase" and shown[0]["expected"] == "“2020” — Intrinsic noun phrase"
    assert "Expected: “injured” — Extrinsic predicate" in html.replace("&#x27;", "'")
    assert client.post(done).url == entry
    assert Participation.objects.get(worker=worker).tutorial_done
    assert client.get(entry).url.endswith("/spans/task/")
