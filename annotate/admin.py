"""Django admin for every shared annotation model: enough to run a campaign before the dashboards exist. Each protocol
app registers its own models in its own ``admin.py`` (e.g. BUMP's edits), which Django finds as it finds this one."""
from django import forms
from django.contrib import admin
from django.db.models import Count, Q, Sum

from . import models


class CampaignAdminForm(forms.ModelForm):
    """The admin's campaign form, refusing settings the kind cannot honour (as the API does)."""

    class Meta:
        model = models.Campaign
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        from .services.campaigns import campaign_setting_problems

        if cleaned.get("kind"):
            for field, message in campaign_setting_problems(cleaned["kind"], cleaned).items():
                self.add_error(field if field in self.fields else None, message)
        return cleaned


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    form = CampaignAdminForm
    list_display = ("slug", "name", "kind", "status", "redundancy", "item_count", "submitted_count", "active_count", "created_at")
    list_filter = ("kind", "status")
    search_fields = ("slug", "name")
    prepopulated_fields = {"slug": ("name",)}
    actions = ["start", "pause", "resume", "finish"]  # the metrics service adds its scoring action (metrics_service/admin.py)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            _items=Count("items", distinct=True),
            _submitted=Count("items__assignments", filter=Q(items__assignments__status="submitted"), distinct=True),
            _active=Count("items__assignments", filter=Q(items__assignments__status="active"), distinct=True),
        )

    @admin.display(description="items", ordering="_items")
    def item_count(self, obj):
        return obj._items

    @admin.display(description="submitted assignments", ordering="_submitted")
    def submitted_count(self, obj):
        return obj._submitted

    @admin.display(description="in flight", ordering="_active")
    def active_count(self, obj):
        return obj._active

    def save_model(self, request, obj, form, change):
        if not change:
            # A new campaign starts with its kind's rules; fields the admin changed on the form win.
            from .services.campaigns import protocol_defaults

            for name, value in protocol_defaults(obj.kind, given=form.changed_data).items():
                setattr(obj, name, value)
        super().save_model(request, obj, form, change)

    def _apply(self, request, queryset, action: str) -> None:
        from .services.campaigns import CampaignStateError, apply_campaign_action

        moved, refused = 0, []
        for campaign in queryset:
            try:
                apply_campaign_action(campaign, action)
                moved += 1
            except CampaignStateError as exc:
                refused.append(f"{campaign.slug}: {exc}")
        self.message_user(request, f"{action}: {moved} campaign(s)." + (f" Refused: {'; '.join(refused)}." if refused else ""))

    @admin.action(description="Start selected draft campaigns")
    def start(self, request, queryset):
        self._apply(request, queryset, "start")

    @admin.action(description="Pause selected running campaigns")
    def pause(self, request, queryset):
        self._apply(request, queryset, "pause")

    @admin.action(description="Resume selected paused campaigns")
    def resume(self, request, queryset):
        self._apply(request, queryset, "resume")

    @admin.action(description="Finish selected campaigns")
    def finish(self, request, queryset):
        self._apply(request, queryset, "finish")


class SummaryInline(admin.TabularInline):
    model = models.Summary
    fields = ("system", "is_reference", "text")
    extra = 0
    show_change_link = True


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("external_id", "campaign", "dataset", "split", "summary_count")
    list_filter = ("campaign", "dataset", "split")
    search_fields = ("external_id", "text")
    inlines = [SummaryInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_summaries=Count("summaries"))

    @admin.display(description="summaries", ordering="_summaries")
    def summary_count(self, obj):
        return obj._summaries


@admin.register(models.Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ("id", "document", "system", "is_reference", "requested_error_type", "corrected_error_type")
    list_filter = ("document__campaign", "system", "is_reference", "document__dataset", "document__split")
    search_fields = ("text", "document__external_id", "system")
    raw_id_fields = ("document", "edited_from")


@admin.register(models.Trap)
class TrapAdmin(admin.ModelAdmin):
    list_display = ("id", "document", "code", "expected_factual", "expected_category", "source", "weight")
    list_filter = ("code", "source", "document__campaign")
    raw_id_fields = ("document", "edited_summary")


@admin.register(models.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "document", "summary", "requested_error_type", "for_experts", "live_assignments")
    list_filter = ("campaign", "requested_error_type", "for_experts")
    search_fields = ("document__external_id",)
    raw_id_fields = ("document", "summary")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            _live=Count("assignments", filter=Q(assignments__status__in=models.LIVE_ASSIGNMENT_STATUSES))
        )

    @admin.display(description="live assignments", ordering="_live")
    def live_assignments(self, obj):
        return obj._live


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "provider", "external_id", "is_blocked", "blocked_reason", "bonus_total", "created_at")
    list_filter = ("provider", "is_blocked")
    search_fields = ("user__username", "external_id")
    raw_id_fields = ("user",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_bonus=Sum("bonuses__amount"))

    @admin.display(description="bonus total", ordering="_bonus")
    def bonus_total(self, obj):
        return obj._bonus or 0


@admin.register(models.Participation)
class ParticipationAdmin(admin.ModelAdmin):
    list_display = (
        "worker", "campaign", "tutorial_done", "qualification_status", "qualification_score", "trap_correct",
        "trap_total", "entity_failures", "items_submitted", "is_blocked", "blocked_reason",
    )
    list_filter = ("campaign", "qualification_status", "is_blocked", "tutorial_done")
    search_fields = ("worker__user__username", "worker__external_id")
    raw_id_fields = ("worker",)


@admin.register(models.QualificationAttempt)
class QualificationAttemptAdmin(admin.ModelAdmin):
    list_display = ("participation", "score", "passed", "submitted_at")
    list_filter = ("passed", "participation__campaign")


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "worker", "status", "created_at", "expires_at", "submitted_at", "lead_time_seconds", "too_fast")
    list_filter = ("status", "item__campaign", "too_fast")
    search_fields = ("worker__user__username", "worker__external_id")
    raw_id_fields = ("item", "worker")


@admin.register(models.SentenceJudgement)
class SentenceJudgementAdmin(admin.ModelAdmin):
    list_display = ("id", "summary", "sentence_index", "worker", "factual", "categories", "lead_time_seconds", "source")
    list_filter = ("source", "factual", "summary__document__campaign")
    raw_id_fields = ("summary", "worker", "assignment")


@admin.register(models.TrapAnswer)
class TrapAnswerAdmin(admin.ModelAdmin):
    list_display = ("id", "assignment", "trap", "factual", "correct")
    list_filter = ("correct",)
    raw_id_fields = ("assignment", "trap")


@admin.register(models.MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ("summary", "metric", "config_key", "value", "source", "updated_at")
    list_filter = ("metric", "source")
    raw_id_fields = ("summary",)


@admin.register(models.ExpertLabel)
class ExpertLabelAdmin(admin.ModelAdmin):
    list_display = ("summary", "sentence_index", "expert", "factual", "categories")
    raw_id_fields = ("summary",)


@admin.register(models.BonusEntry)
class BonusEntryAdmin(admin.ModelAdmin):
    list_display = ("key", "worker", "campaign", "amount", "reason", "created_at", "paid_at")
    list_filter = ("campaign", "paid_at")
    search_fields = ("key", "worker__user__username", "worker__external_id")
    raw_id_fields = ("worker", "assignment")

    def has_delete_permission(self, request, obj=None):
        return False  # append-only ledger


@admin.register(models.CopyFlag)
class CopyFlagAdmin(admin.ModelAdmin):
    """Pairs flagged as not independent (services/independence.py); deleting one clears the pair."""

    list_display = ("campaign", "worker_a", "worker_b", "shared_items", "kappa", "baseline_kappa", "updated_at")
    list_filter = ("campaign",)
    readonly_fields = ("campaign", "worker_a", "worker_b", "shared_items", "shared_sentences", "identical_answers", "kappa",
                       "baseline_kappa", "a_after_b", "b_after_a", "evidence")


@admin.register(models.GoldLabel)
class GoldLabelAdmin(admin.ModelAdmin):
    list_display = ("summary", "sentence_index", "factual", "category", "source", "public", "set_by", "updated_at")
    list_filter = ("source", "public", "factual")
    raw_id_fields = ("summary", "set_by")


@admin.register(models.PayDecision)
class PayDecisionAdmin(admin.ModelAdmin):
    list_display = ("created_at", "kind", "worker", "campaign", "amount", "reason")
    list_filter = ("kind", "campaign")
    search_fields = ("key", "worker__user__username", "worker__external_id")
    raw_id_fields = ("worker", "assignment", "decided_by")

    def has_change_permission(self, request, obj=None):
        return False  # append-only: a release is a new decision (the control page), never an edit

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.CrowdEvent)
class CrowdEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "campaign", "kind", "provider", "external_id", "ip", "detail")
    list_filter = ("kind", "campaign")
    search_fields = ("external_id", "ip")
    raw_id_fields = ("worker",)
