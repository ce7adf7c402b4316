"""Import jobs: the upload and its status report."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.api.query_options import DatasetChoiceField
from annotate.kinds import kind_choices
from annotate.models import ImportJob
from annotate.services.import_jobs import DETECT, import_progress, upload_suffixes


class ImportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id", "kind", "format", "campaign_slug", "campaign_kind", "options", "original_name", "size", "status", "progress",
            "report", "error", "created_at", "started_at", "finished_at",
        ]

    @extend_schema_field(serializers.DictField())
    def get_progress(self, job: ImportJob) -> dict:
        return import_progress(job)


class ImportJobCreateSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="frank: a .zip of FRANK's folder or of a FactLab FRANK export; bump: .json; qags, jsonl: .jsonl; scores csv: .csv."
    )
    format = serializers.ChoiceField(
        choices=[], help_text="auto (datasets): recognised from the file's content, the campaign kind too (the job's "
                              "options.detected says what and why); a named format the content contradicts is refused. "
                              "csv: metric scores only (kind=scores).")
    kind = serializers.ChoiceField(choices=["dataset", "scores"], default="dataset", help_text="scores: metric scores of an existing campaign.")
    # Blank by default, so that the API docs' "Try it out" sends no dataset with a frank/bump/jsonl upload.
    dataset = DatasetChoiceField(
        required=False, allow_blank=True, default="",
        help_text="qags only: dataset of records that do not name one: cnndm, xsum (also bbc) or other "
                  "(default: from the file name, else other). Leave blank for other formats.",
    )
    campaign = serializers.SlugField(max_length=80, help_text="Campaign slug (created by dataset imports when missing).")
    campaign_kind = serializers.ChoiceField(choices=[], required=False, allow_blank=True, default="")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The registered protocols' formats and kinds, read now.
        self.fields["format"].choices = [DETECT, *sorted({fmt for _, fmt in upload_suffixes()})]
        self.fields["campaign_kind"].choices = kind_choices()
