"""One task view: every protocol that describes its task page (``Protocol.task_page``) is served by the shared
``annotate.views.tasks.task``, which claims the item and adds the submission key and the submit and done URLs."""
from __future__ import annotations

from django.urls import resolve, reverse

from annotate.protocols import Protocol, all_protocols
from annotate.views import tasks


def test_the_task_urls_of_frank_and_bump_resolve_to_the_one_task_view():
    described = [p for p in all_protocols() if type(p).task_page is not Protocol.task_page]
    assert {"frank", "bump_taxonomy", "bump_free"} <= {p.kind for p in described}
    for protocol in described:
        match = resolve(reverse(f"annotate:{protocol.task_url_name}", args=["some-campaign"]))
        assert match.func is tasks.task and match.kwargs == {"slug": "some-campaign", "family": protocol.family}
        # The view names the submit URL after the family: each described protocol has one.
        assert resolve(reverse(f"annotate:{protocol.family}-submit", args=["some-campaign", 1])).func is tasks.submit
