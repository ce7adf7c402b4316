"""Admin for scoring jobs: progress at a glance, filters, cancellation, and the chunks of each job."""
from __future__ import annotations

from django.contrib import admin, messages
from django.utils.html import format_html

from annotate.admin import CampaignAdmin

from .models import ScoringChunk, ScoringJob
from .scoring import jobs


class ScoringChunkInline(admin.TabularInline):
    model = ScoringChunk
    fields = ("index", "status", "attempts", "size", "skipped", "stored", "error", "started_at", "finished_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="summaries")
    def size(self, obj: ScoringChunk) -> int:
        return len(obj.summary_ids)


@admin.register(ScoringJob)
class ScoringJobAdmin(admin.ModelAdmin):
    list_display = ("id", "metric", "campaign", "status", "progress", "failed", "skipped", "queue", "created_by", "created_at", "finished_at")
    list_filter = ("status", "metric", "queue", "campaign")
    search_fields = ("metric", "config_key", "campaign__slug", "message")
    date_hierarchy = "created_at"
    readonly_fields = (
        "campaign", "metric", "config", "config_key", "queue", "status", "total", "done", "failed", "skipped",
        "message", "error", "created_by", "created_at", "started_at", "finished_at",
    )
    inlines = [ScoringChunkInline]
    actions = ["cancel_jobs"]

    def has_add_permission(self, request):
        # Jobs are submitted through the Campaign admin action, the `score` command or the API (validated there).
        return False

    @admin.display(description="progress", ordering="done")
    def progress(self, obj: ScoringJob) -> str:
        percent = 100.0 * obj.done / obj.total if obj.total else 100.0
        return format_html(
            '<progress max="{}" value="{}" title="{}"></progress> {}/{}', obj.total, obj.done, f"{percent:.0f}%", obj.done, obj.total
        )

    @admin.action(description="Cancel selected scoring jobs")
    def cancel_jobs(self, request, queryset):
        cancelled, refused = 0, []
        for job in queryset:
            try:
                jobs.cancel_scoring_job(job)
                cancelled += 1
            except ValueError as exc:
                refused.append(str(exc))
        if cancelled:
            self.message_user(request, f"{cancelled} scoring job(s) cancelled.")
        for reason in refused:
            self.message_user(request, reason, level=messages.WARNING)


@admin.action(description="Score summaries with ROUGE and BLEU (background jobs)")
def score_rouge_bleu(modeladmin, request, queryset) -> None:
    """Campaign admin action: score every summary of the selected campaigns with ROUGE and BLEU."""
    for campaign in queryset:
        for metric in ("rouge", "bleu"):
            try:
                job = jobs.submit_scoring_job(metric=metric, campaign=campaign, user=request.user)
            except ValueError as exc:
                modeladmin.message_user(request, f"{campaign.slug}: {metric} not submitted: {exc}", level=messages.ERROR)
            else:
                modeladmin.message_user(request, f"{campaign.slug}: {metric} scoring job {job.pk} submitted ({job.total} summaries).")


# The campaign admin is annotate's, which imports nothing of this app: the scoring action is added here.
CampaignAdmin.actions = [*CampaignAdmin.actions, score_rouge_bleu]
