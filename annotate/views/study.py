"""The admin's whole study in the browser (/manage/): a campaign from an upload, import progress, more
documents or metric scores, and every background job of a campaign with live progress, cancel and retry.

Thin views: uploads go through ``create_import_job`` and job changes through the job services, exactly as
the API's; nothing here imports, scores or prepares by itself.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.forms import DocumentsUploadForm, NewCampaignForm, ScoresUploadForm
from annotate.models import Campaign, ImportJob, ImportStatus, PagePreparation
from annotate.protocols import formats_for
from annotate.services.import_jobs import (
    DETECT,
    cancel_import_job,
    confirm_import_job,
    create_import_job,
    import_progress,
    retry_import_job,
)
from annotate.services.job_state import JobStateError
from annotate.services.page_preparations import (
    cancel_page_preparation,
    retry_page_preparation,
)
from annotate.views.access import staff_required
from factlab.jobs import BrokerUnavailable

OPEN_IMPORTS = (ImportStatus.PENDING, ImportStatus.RUNNING)


def _upload(request: HttpRequest, form, *, kind: str, slug: str, campaign_kind: str = "", confirm_first: bool = False) -> ImportJob | None:
    """Hand the form's file to the import service; its refusals become form errors (nothing stored then).

    A new campaign's name travels as the ``campaign_name`` importer option (``import_dataset`` names the
    campaign it creates with it)."""
    data = form.cleaned_data
    try:
        return create_import_job(
            kind=kind, fmt=data["format"], campaign_slug=slug, campaign_kind=campaign_kind, upload=data["file"],
            user=request.user, options={"dataset": data.get("dataset") or "", "campaign_name": data.get("name") or ""},
            confirm_first=confirm_first,
        )
    except (ValueError, BrokerUnavailable, Campaign.DoesNotExist) as exc:
        form.add_error(None, str(exc))
        return None


@staff_required
def new_campaign(request: HttpRequest) -> HttpResponse:
    form = NewCampaignForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        # A new campaign's kind cannot change later: what was taken from the file's content (format or kind left
        # to detection) waits for the admin's confirmation; explicit choices the content contradicts are refused.
        chosen = form.cleaned_data
        job = _upload(request, form, kind="dataset", slug=chosen["slug"], campaign_kind=chosen["campaign_kind"],
                      confirm_first=chosen["format"] == DETECT or not chosen["campaign_kind"])
        if job is not None:
            return redirect("annotate:manage-import", job.pk)
    return render(request, "annotate/manage/new_campaign.html", {"form": form}, status=400 if form.errors else 200)


@staff_required
@require_POST
def upload_to_campaign(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    if kind not in ("dataset", "scores"):
        raise Http404("uploads are of kind dataset or scores")
    form = (ScoresUploadForm if kind == "scores" else DocumentsUploadForm)(request.POST, request.FILES)
    job = _upload(request, form, kind=kind, slug=campaign.slug) if form.is_valid() else None
    if job is None:
        messages.error(request, "The upload was refused: " + "; ".join(
            " ".join(errors) if field == "__all__" else f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()
        ))
        return redirect("annotate:manage-campaign", slug)
    return redirect("annotate:manage-import", job.pk)


def _import_state(job: ImportJob) -> dict:
    return {
        "id": job.pk, "status": job.status, "status_display": job.get_status_display(), "progress": import_progress(job),
        "finished": job.status not in OPEN_IMPORTS, "report": job.report, "error": job.error,
    }


@staff_required
def import_page(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(ImportJob, pk=job_id)
    campaign = Campaign.objects.filter(slug=job.campaign_slug).first()
    return render(request, "annotate/manage/import.html", {"job": job, "state": _import_state(job), "campaign": campaign})


@staff_required
@require_POST
def import_confirm(request: HttpRequest, job_id: int) -> HttpResponse:
    """The admin's answer to what an upload was recognised as: import it so, or discard the upload."""
    job = get_object_or_404(ImportJob, pk=job_id)
    if request.POST.get("answer") == "discard" and job.status == ImportStatus.DETECTED:
        job.file.delete(save=False)
        job.delete()
        messages.success(request, "The upload was discarded; nothing was imported. Upload it again with the format and kind you want.")
        return redirect("annotate:manage-new")
    try:
        confirm_import_job(job)
    except JobStateError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    return redirect("annotate:manage-import", job.pk)


@staff_required
def import_status(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(_import_state(get_object_or_404(ImportJob, pk=job_id)))


def study_context(campaign: Campaign) -> dict:
    """What the campaign page's study sections show: jobs of every kind, upload forms, export formats."""
    from annotate.metrics_port import metrics

    scoring = metrics().scoring_jobs(campaign)
    imports = list(ImportJob.objects.filter(campaign_slug=campaign.slug).order_by("-created_at", "-id")[:20])
    preparations = list(PagePreparation.objects.filter(campaign=campaign).order_by("-created_at", "-id")[:5])
    open_jobs = (
        any(job["status"] in ("pending", "running") for job in scoring)
        or any(job.status in OPEN_IMPORTS for job in imports)
        or any(run.status in OPEN_IMPORTS for run in preparations)
    )
    return {
        "study_scoring_jobs": scoring,
        "study_imports": [{"job": job, "progress": import_progress(job)} for job in imports],
        "study_preparations": preparations,
        "study_open_jobs": open_jobs,
        "study_export_formats": formats_for(campaign.kind),
        "documents_form": DocumentsUploadForm(),
        "scores_form": ScoresUploadForm(),
    }


@staff_required
def campaign_jobs(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign page's job section alone: the page polls it while a job is open."""
    campaign = get_object_or_404(Campaign, slug=slug)
    return render(request, "annotate/manage/_jobs.html", {"campaign": campaign, **study_context(campaign)})


@staff_required
@require_POST
def job_action(request: HttpRequest, slug: str, job_kind: str, job_id: int, action: str) -> HttpResponse:
    """Cancel or retry one of the campaign's jobs (the services the API's cancel/retry call)."""
    from annotate.metrics_port import metrics

    campaign = get_object_or_404(Campaign, slug=slug)
    if action not in ("cancel", "retry"):
        raise Http404("unknown action")
    if job_kind == "import":
        job, change = get_object_or_404(ImportJob, pk=job_id, campaign_slug=campaign.slug), {"cancel": cancel_import_job, "retry": retry_import_job}[action]
    elif job_kind == "scoring":
        job = metrics().scoring_job(campaign, job_id)
        if job is None:
            raise Http404("no such scoring job in this campaign")

        def change(job):
            return metrics().change_scoring_job(job, action)
    elif job_kind == "preparation":
        job, change = get_object_or_404(PagePreparation, pk=job_id, campaign=campaign), {"cancel": cancel_page_preparation, "retry": retry_page_preparation}[action]
    else:
        raise Http404("unknown job kind")
    try:
        change(job)
    except (ValueError, BrokerUnavailable) as exc:
        messages.error(request, f"Cannot {action} {job_kind} job {job_id}: {exc}")
    else:
        messages.success(request, f"{job_kind.capitalize()} job {job_id}: {'cancelled' if action == 'cancel' else 'sent again'}.")
    return redirect("annotate:manage-campaign", slug)
