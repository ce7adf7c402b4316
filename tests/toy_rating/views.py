"""The rating task page; submitting goes through the shared ``annotate.views.tasks.submit``."""
from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotate.presentation import article_blocks, present_article
from annotate.views.common import claim_assignment
from annotate.views.tasks import family_campaign

from .models import HIGHEST, LOWEST


@login_required
def task(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = family_campaign(slug, "rating")
    assignment, response = claim_assignment(request, campaign, nothing_left="There is no summary left for you to rate.")
    if response is not None:
        return response
    summary = assignment.item.summary
    document = summary.document
    # What the page needs and nothing more: never the summary's gold rating or imported scores.
    data = {
        "submission_key": uuid.uuid4().hex,
        "urls": {"submit": reverse("annotate:rating-submit", args=[slug, assignment.pk]),
                 "done": reverse("annotate:campaign-done", args=[slug]) + "?submitted=1"},
    }
    return render(request, "toy_rating/task.html", {
        "campaign": campaign, "assignment": assignment, "summary_text": summary.text, "data": data,
        "blocks": article_blocks(present_article(document.sentences or [document.text])), "scores": range(LOWEST, HIGHEST + 1),
    })
