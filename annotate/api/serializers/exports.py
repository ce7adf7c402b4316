"""The export's query options."""
from __future__ import annotations

from rest_framework import serializers

from annotate.api.query_options import DatasetChoiceField
from annotate.exporters.tabular import ANNOTATORS, ROW_KINDS, WORKER_STATUSES
from annotate.protocols import answer_row_kinds, export_formats, export_parts


def rows_field() -> serializers.RegexField:
    """``rows``, stated in the schema as it is checked: row kinds separated by commas, nothing else; the shared
    kinds, then those the registered protocols' answers add (read now, so a registered protocol's show)."""
    kinds = [*ROW_KINDS, *answer_row_kinds()]
    return serializers.RegexField(
        "^({kinds})(,({kinds}))*$".format(kinds="|".join(kinds)), required=False,
        help_text=f"jsonl/csv/parquet only: comma-separated row kinds among {', '.join(kinds)} (default all of the campaign's).",
        error_messages={"invalid": f"expected a comma-separated list of {', '.join(kinds)}"},
    )


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=[], default="jsonl")
    file = serializers.ChoiceField(
        choices=["zip"], default="zip",
        help_text="frank only: the whole zip (default) or one of its JSON files: summaries, sentences, articles.",
    )
    rows = rows_field()
    split = serializers.ChoiceField(choices=["valid", "test"], required=False)
    dataset = DatasetChoiceField(required=False)
    system = serializers.CharField(required=False, max_length=100)
    worker_status = serializers.ChoiceField(choices=WORKER_STATUSES, default="any")
    annotators = serializers.ChoiceField(
        choices=ANNOTATORS, default="human",
        help_text="Whose sentence judgements: people's (default), model annotators' (LLMs doing the task, workers llm:<model>) or all.",
    )
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    reveal_workers = serializers.BooleanField(default=False, help_text="Admins only: real worker ids instead of pseudonyms.")
    license = serializers.RegexField(
        r"^[A-Za-z0-9.+-]{1,64}$", required=False,
        help_text="parquet only: license id for the dataset card (default: the campaign's license, else unknown).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = export_formats()  # the registered protocols' formats, read now
        self.fields["file"].choices = ["zip", *export_parts()]
        self.fields["rows"] = rows_field()

    def validate_rows(self, value: str) -> list[str]:
        return value.split(",")
