"""Forms of the admin's pages on /manage/: a new campaign from an upload, metric scores, a campaign's settings
and the invitations of its people.

They only check what a browser form can get wrong (a missing file, a taken slug); the upload itself goes
through :func:`annotate.services.import_jobs.create_import_job`, the same service as ``POST /api/imports/``.
"""
from __future__ import annotations

from django import forms
from django.forms.models import fields_for_model, model_to_dict

from annotate.kinds import kind_choices
from annotate.models import Campaign, Dataset
from annotate.protocols import dataset_formats
from annotate.services.campaign_settings import (
    FIELD_TEXT,
    CampaignSettingsRejected,
    campaign_sections,
    editable_fields,
    save_campaign_settings,
)
from annotate.services.import_jobs import DETECT
from annotate.services.people import INVITABLE_ROLES, REVIEWER


def dataset_format_choices() -> list[tuple[str, str]]:
    """Detection first (the default), then every format the protocols register, so a new one is offered too."""
    return [(DETECT, "Detect from the file's content (you confirm before anything is imported)"),
            *[(name, fmt.label or name) for name, (fmt, _kind) in dataset_formats().items()]]

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
        choices=lambda: [("", "From the file's content"), *kind_choices()], required=False, label="Kind"
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


class CampaignSettingsForm(forms.Form):
    """Every setting of ``campaign`` that applies to its protocol, in the sections of the settings page.

    A plain form built from the model's fields (their types, choices and bounds): the rules that involve
    several fields (the two codes differ, minimum under maximum, what the kind allows) are the service's,
    which reports them on the field to change (:func:`annotate.services.campaign_settings.save_campaign_settings`).
    """

    def __init__(self, campaign: Campaign, *args, **kwargs):
        names = editable_fields(campaign)
        super().__init__(*args, initial=model_to_dict(campaign, fields=names), **kwargs)
        self.campaign = campaign
        self.fields.update(fields_for_model(
            Campaign, fields=names,
            labels={name: text[0] for name, text in FIELD_TEXT.items()},
            help_texts={name: text[1] for name, text in FIELD_TEXT.items()},
        ))
        self.sections = [(section, [self[name] for name in section.fields]) for section in campaign_sections(campaign)]

    def save(self) -> bool:
        """Store every value or none; False with the refusals on their fields."""
        try:
            self.campaign = save_campaign_settings(self.campaign, self.cleaned_data)
        except CampaignSettingsRejected as exc:
            for field, messages in exc.errors.items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
            return False
        return True


class InviteToCampaignForm(forms.Form):
    role = forms.ChoiceField(choices=list(INVITABLE_ROLES.items()), widget=forms.RadioSelect, initial=REVIEWER, label="Role")
    username = forms.CharField(max_length=150, label="Username", help_text="A new name creates an account and gives you a one-time link to send; an existing account is granted this campaign.")
    email = forms.EmailField(required=False, label="Email (optional)", help_text="Kept with the account; FactLab sends no mail, you send the link.")
