"""The span task page (submit is the shared ``annotate.views.tasks.submit``)."""
from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotate.presentation import article_blocks, present_article
from annotate.views.common import claim_assignment
from annotate.views.tasks import family_campaign
from taxonomies.frank import CATEGORIES

from . import taxonomy
from .words import spaced_words, words


@login_required
def task(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = family_campaign(slug, "spans")
    assignment, response = claim_assignment(request, campaign, nothing_left="There is no summary left for you in this campaign.")
    if response is not None:
        return response
    summary = assignment.item.summary
    document = summary.document
    article = present_article(document.sentences or [document.text])
    data = {
        "assignment": assignment.pk, "words": words(summary.text), "submission_key": uuid.uuid4().hex,
        "types": [{"code": t.code, "name": t.name} for t in taxonomy.TYPES],
        "urls": {"submit": reverse("annotate:spans-submit", args=[slug, assignment.pk]),
                 "done": reverse("annotate:campaign-done", args=[slug]) + "?submitted=1"},
    }
    return render(request, "spans/task.html", {
        "campaign": campaign, "data": data, "blocks": article_blocks(article), "words": spaced_words(summary.text), "types": taxonomy.TYPES,
        "frank_categories": CATEGORIES, "assignment": assignment,
    })
