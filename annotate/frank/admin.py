"""Django admin for FRANK's own model: the workers' answers to the reading check."""
from django.contrib import admin

from annotate.frank.models import EntityAnswer


@admin.register(EntityAnswer)
class EntityAnswerAdmin(admin.ModelAdmin):
    list_display = ("assignment", "choice", "correct")
    list_filter = ("correct", "assignment__item__campaign")
    raw_id_fields = ("assignment",)
