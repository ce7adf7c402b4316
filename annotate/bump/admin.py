"""Django admin for BUMP's own models: edits with their review, and each assignment's checkpoint code."""
from django.contrib import admin

from annotate.bump.models import Checkpoint, Edit


@admin.register(Edit)
class EditAdmin(admin.ModelAdmin):
    list_display = ("id", "source_summary", "worker", "requested_error_type", "is_not_applicable", "word_distance", "review_status", "corrected_error_type")
    list_filter = ("review_status", "requested_error_type", "is_not_applicable", "hint_disagrees")
    raw_id_fields = ("assignment", "worker", "source_summary", "edited_summary", "reviewer")


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ("assignment", "code")
    search_fields = ("code",)
    raw_id_fields = ("assignment",)
