"""The campaign's quality-control page (staff only): gold labels, workers' balanced scores, held pay."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.models import (
    Campaign,
    GoldLabel,
    GoldSource,
    Participation,
    PayDecision,
    Summary,
)
from annotate.protocols import protocol_for
from annotate.services.attention import worker_attention
from annotate.services.bonus_rule import bonus_rule
from annotate.services.errors import InvalidSubmission
from annotate.services.gold import (
    gold_from_crowd,
    gold_from_imported_labels,
    mark_gold_public,
    remove_gold_label,
    set_gold_label,
)
from annotate.services.gold_predictability import PREDICTABILITY_WARNING, cached_gold_predictability
from annotate.services.independence import copy_flags
from annotate.services.pay_rules import release_held_pay
from annotate.services.quality import worker_quality

from .access import staff_required


@staff_required
def control_page(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    participations = Participation.objects.filter(campaign=campaign).select_related("worker__user", "campaign").order_by("pk")
    gold = GoldLabel.objects.filter(summary__document__campaign=campaign)
    return render(request, "annotate/manage/control.html", {
        "campaign": campaign,
        "gold_counts": {label: gold.filter(source=value).count() for value, label in GoldSource.choices},
        "control_items": campaign.items.filter(is_control=True).count(),
        "items": campaign.items.count(),
        "workers": [
            {"participation": p, "quality": worker_quality(p), "bonus_quality": worker_quality(p, for_bonus=True),
             "attention": worker_attention(p)} for p in participations
        ],
        "public_gold": gold.filter(public=True).count(),
        "qualification_source": protocol_for(campaign.kind).qualification_source(campaign) if campaign.qualification_required else "",
        "public_benchmarks": sorted(set(
            campaign.documents.exclude(public_labels="").values_list("public_labels", flat=True).distinct()
        )),
        "decisions": PayDecision.objects.filter(campaign=campaign).select_related("worker").order_by("-created_at", "-id")[:100],
        "copy_flags": copy_flags(campaign),  # pairs whose answers are not independent (services/independence.py)
        "recent_gold": gold.select_related("summary", "set_by").order_by("-updated_at", "-id")[:50],
        # How well a script reading only the page separates the gold (gold_predictability.gold_predictability).
        "predictability": cached_gold_predictability(campaign),
        "predictability_warning": PREDICTABILITY_WARNING,
        # Bonuses need erroneous sentences whose label the page does not give away (services/pay_rules.py).
        "bonus": bonus_rule(campaign),
    })


@staff_required
@require_POST
def set_gold(request: HttpRequest, slug: str) -> HttpResponse:
    """The browser form: one sentence's label (``summary``, ``sentence`` from 1, ``label`` factual/erroneous)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    try:
        summary_id, sentence = int(request.POST.get("summary", "")), int(request.POST.get("sentence", ""))
    except ValueError:
        summary_id = sentence = 0
    if not (0 < summary_id < 2**31 and 0 < sentence < 2**31):
        messages.error(request, "Give the summary id and the sentence number (from 1) as positive whole numbers.")
        return redirect("annotate:manage-control", slug)
    label = request.POST.get("label", "")
    if label not in ("factual", "erroneous"):
        messages.error(request, "Choose whether the sentence is factual or erroneous.")
        return redirect("annotate:manage-control", slug)
    summary = Summary.objects.filter(pk=summary_id, document__campaign=campaign).select_related("document__campaign").first()
    if summary is None:
        messages.error(request, f"This campaign has no summary {summary_id}.")
        return redirect("annotate:manage-control", slug)
    try:
        set_gold_label(summary, sentence - 1, label == "factual", request.POST.get("category", ""), user=request.user,
                       note=request.POST.get("note", "").strip())
    except InvalidSubmission as exc:
        messages.error(request, f"The label was not saved: {exc}.")
    else:
        messages.success(request, f"Sentence {sentence} of summary {summary_id} is now gold ({label}).")
    return redirect("annotate:manage-control", slug)


@staff_required
@require_POST
def gold_visibility(request: HttpRequest, slug: str) -> HttpResponse:
    """Mark gold labels public or private (``public`` 1/0): one label (``label``) or all of the campaign's."""
    campaign = get_object_or_404(Campaign, slug=slug)
    public = request.POST.get("public", "")
    if public not in ("0", "1"):
        messages.error(request, "Choose whether the labels are public (1) or private (0).")
        return redirect("annotate:manage-control", slug)
    label = request.POST.get("label", "")
    if label and not (label.isdigit() and GoldLabel.objects.filter(pk=int(label), summary__document__campaign=campaign).exists()):
        messages.error(request, f"This campaign has no gold label {label}.")
        return redirect("annotate:manage-control", slug)
    changed = mark_gold_public(campaign, public == "1", label_ids=[int(label)] if label else None)
    messages.success(request, f"{changed} gold labels marked {'public' if public == '1' else 'private'}.")
    return redirect("annotate:manage-control", slug)


def _set_accepted_risk(request: HttpRequest, slug: str, field: str, *, accepted: str, withdrawn: str) -> HttpResponse:
    """Set a campaign's risk switch ``field`` from the form's ``accept`` (1: the admin accepts it knowingly)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    accept = request.POST.get("accept") == "1"
    Campaign.objects.filter(pk=campaign.pk).update(**{field: accept})
    if accept:
        messages.warning(request, accepted)
    else:
        messages.success(request, withdrawn)
    return redirect("annotate:manage-control", slug)


@staff_required
@require_POST
def public_label_bonus(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's ``bonus_on_public_labels``: an admin accepts or withdraws the risk of paying bonuses on
    published labels."""
    return _set_accepted_risk(
        request, slug, "bonus_on_public_labels",
        accepted="Bonuses now count public labels: a worker holding the published labels is paid without reading.",
        withdrawn="Bonuses need private checks again.",
    )


@staff_required
@require_POST
def shipped_qualification(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's ``shipped_qualification_accepted``: an admin accepts or withdraws the protocol's shipped
    qualification pool, whose keys are in the source, for want of material of its own."""
    return _set_accepted_risk(
        request, slug, "shipped_qualification_accepted",
        accepted="The shipped qualification pool is in use where the campaign has no material: its keys are in the source code.",
        withdrawn="The shipped qualification pool is no longer offered.",
    )


@staff_required
@require_POST
def remove_gold(request: HttpRequest, slug: str, label_id: int) -> HttpResponse:
    """Take one gold label away (a sentence that should not be a control sentence)."""
    label = get_object_or_404(GoldLabel.objects.select_related("summary__document__campaign"), pk=label_id, summary__document__campaign__slug=slug)
    remove_gold_label(label)
    messages.success(request, f"Sentence {label.sentence_index + 1} of summary {label.summary_id} is no longer gold.")
    return redirect("annotate:manage-control", slug)


@staff_required
@require_POST
def derive_gold(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    added = gold_from_imported_labels(campaign) + gold_from_crowd(campaign)
    messages.success(request, f"{added} gold labels added from imported and certain crowd labels.")
    return redirect("annotate:manage-control", slug)


@staff_required
@require_POST
def release_pay(request: HttpRequest, slug: str, participation_id: int) -> HttpResponse:
    participation = get_object_or_404(Participation.objects.select_related("campaign", "worker"), pk=participation_id, campaign__slug=slug)
    amount = release_held_pay(participation, user=request.user, note=request.POST.get("note", "").strip())
    messages.success(request, f"{participation.worker}: held pay released ({amount} added to the ledger).")
    return redirect("annotate:manage-control", slug)
