"""Forms of the admin's study path on /manage/: a new campaign from an upload, metric scores for a campaign.

They only check what a browser form can get wrong (a missing file, a taken slug); the upload itself goes
through :func:`annotate.services.import_jobs.create_import_job`, the same service as ``POST /api/imports/``.
"""
from __future__ import annotations

from django import forms

from annotate.models import Campaign, CampaignKind, Dataset
from annotate.protocols import dataset_formats
from annotate.services.import_jobs import DETECT

FORMAT_LABELS = {
    "jsonl": "FactLab JSON lines (.jsonl, see docs/import-jsonl.md)",
    "frank": "FRANK folder or FactLab FRANK export (.zip)",
    "bump": "BUMP Task 1 or Task 2 (.json)",
    "qags": "QAGS (.jsonl)",
    "aggrefact": "AggreFact (.csv)",
    "llm_aggrefact": "LLM-AggreFact (.csv or .jsonl)",
}


def dataset_format_choices() -> list[tuple[str, str]]:
    """Detection first (the default), then every format the protocols register, so a new one is offered too."""
    return [(DETECT, "Detect from the file's content (you confirm before anything is imported)"),
            *[(name, FORMAT_LABELS.get(name, name)) for name in dataset_formats()]]

RESERVED_SLUGS = {"new", "imports"}  # /manage/new/ and /manage/imports/ are pages
SCORE_FORMATS = [
    ("csv", "CSV: summary_id, metric, value (.csv)"),
    ("jsonl", "JSON lines of scores (.jsonl)"),
    ("frank", "FRANK baseline scores (.json)"),
]


class NewCampaignForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, label="Name", help_text="Shown to workers and admins (default: from the slug).")
    slug = forms.SlugField(max_length=80, label="Campaign slug", help_text="Letters, digits and hyphens; the campaign's address.")
    campaign_kind = forms.ChoiceField(
        choices=[("", "From the file's content"), *CampaignKind.choices], required=False, label="Kind"
    )
    format = forms.ChoiceField(choices=dataset_format_choices, initial=DETECT, label="File format")
    dataset = forms.ChoiceField(
        choices=[("", "As the file says (else from its name, else other)"), *Dataset.choices], required=False,
        label="Dataset", help_text="QAGS files only: the dataset of records that do not name one.",
    )
    file = forms.FileField(label="File")

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"'{slug}' names a page of /manage/; choose another slug.")
        if Campaign.objects.filter(slug=slug).exists():
            raise forms.ValidationError(f"A campaign '{slug}' exists already; import into it from its page, or choose another slug.")
        return slug


class DocumentsUploadForm(forms.Form):
    format = forms.ChoiceField(choices=dataset_format_choices, initial=DETECT, label="File format")
    dataset = NewCampaignForm.base_fields["dataset"]
    file = forms.FileField(label="File")


class ScoresUploadForm(forms.Form):
    format = forms.ChoiceField(choices=SCORE_FORMATS, label="File format")
    file = forms.FileField(label="File")
