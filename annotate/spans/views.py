"""The span tutorial and the reviewers' gold pages (the task page, submit and qualification are the shared views
of ``annotate.views.tasks``, shown through ``SpansProtocol``)."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.models import Summary
from annotate.presentation import article_blocks, present_article
from annotate.roles import can_review
from annotate.services.errors import WorkflowError
from annotate.services.participation import get_participation, mark_tutorial_done
from annotate.views.arrival import worker_for_user
from annotate.views.tasks import error_response, family_campaign, json_body
from taxonomies.frank import CATEGORIES

from . import taxonomy
from . import tutorial as span_tutorial
from .qualification import public_view
from .services import set_gold
from .words import spaced_words, words


def _reviewer_page(request: HttpRequest, slug: str):
    campaign = family_campaign(slug, "spans")
    if not can_review(request.user, campaign.pk):
        return campaign, render(request, "annotate/message.html", {
            "title": "Reviewers only", "message": "This page is for the campaign's reviewers (staff, the 'reviewers' group, or invited for it).",
        }, status=403)
    return campaign, None


@login_required
def gold_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's summaries with their gold state, for a reviewer."""
    campaign, refused = _reviewer_page(request, slug)
    if refused is not None:
        return refused
    summaries = (Summary.objects.filter(document__campaign=campaign, items__isnull=False).distinct()
                 .select_related("document", "gold_spans").order_by("pk"))
    page = Paginator(summaries, 50).get_page(request.GET.get("page"))
    return render(request, "spans/gold_list.html", {"campaign": campaign, "page": page})


@login_required
def gold_edit(request: HttpRequest, slug: str, summary_id: int) -> HttpResponse:
    """A reviewer marks a summary's gold spans on the task's own word picker; the save posts JSON."""
    campaign, refused = _reviewer_page(request, slug)
    if refused is not None:
        return refused
    summary = get_object_or_404(Summary.objects.select_related("document"), pk=summary_id, document__campaign=campaign)
    if request.method == "POST":
        try:
            gold = set_gold(summary, json_body(request), request.user)
        except WorkflowError as exc:
            return error_response(exc)
        return JsonResponse({"ok": True, "spans": gold.spans, "next": reverse("annotate:spans-gold", args=[slug])})
    current = getattr(summary, "gold_spans", None)
    document = summary.document
    data = {
        "words": words(summary.text), "submission_key": "",
        "types": [{"code": t.code, "name": t.name} for t in taxonomy.TYPES],
        "initial": [{"start": s, "end": e, "type": t, "frank": ""} for s, e, t in (current.spans if current else [])],
        "initial_no_error": bool(current) and not current.spans,
        "urls": {"submit": reverse("annotate:spans-gold-edit", args=[slug, summary.pk]), "done": reverse("annotate:spans-gold", args=[slug])},
    }
    return render(request, "spans/gold_edit.html", {
        "campaign": campaign, "summary": summary, "data": data, "words": spaced_words(summary.text), "types": taxonomy.TYPES,
        "frank_categories": CATEGORIES, "blocks": article_blocks(present_article(document.sentences or [document.text])),
        "current": current,
    })


TUTORIAL_SESSION_KEY = "spans_tutorial_checked"


@login_required
def tutorial(request: HttpRequest, slug: str) -> HttpResponse:
    """The tutorial: answers are checked on the server and shown beside the expected ones."""
    campaign = family_campaign(slug, "spans")
    context = {"campaign": campaign, "types": taxonomy.TYPES, "exercises": public_view(list(span_tutorial.EXERCISES)), "checked": False}
    status = 200
    if request.method == "POST":
        try:
            context["exercises"] = span_tutorial.feedback(request.POST)
            context["checked"] = True
            request.session[TUTORIAL_SESSION_KEY] = [*request.session.get(TUTORIAL_SESSION_KEY, []), slug]
        except WorkflowError as exc:
            context.update(exercises=public_view(list(span_tutorial.EXERCISES), request.POST), error=exc.message)
            status = exc.status_code
    return render(request, "spans/tutorial.html", context, status=status)


@login_required
@require_POST
def tutorial_done(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = family_campaign(slug, "spans")
    if slug not in request.session.get(TUTORIAL_SESSION_KEY, []):
        return redirect("annotate:spans-tutorial", slug)
    mark_tutorial_done(get_participation(worker_for_user(request.user), campaign))
    return redirect("annotate:campaign", slug)
