"""What a campaign holds: documents, their summaries, trap sentences, items (the unit given to a worker) and each document's prepared page."""
from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from .campaigns import Campaign, Dataset, Split


class Document(models.Model):
    """A source article of a campaign."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=200, help_text="Hash or id in the source dataset.")
    dataset = models.CharField(max_length=10, choices=Dataset.choices, default=Dataset.OTHER)
    split = models.CharField(max_length=5, choices=Split.choices, default=Split.NONE, blank=True)
    text = models.TextField()
    sentences = models.JSONField(default=list)
    url = models.URLField(max_length=500, blank=True)
    # Candidate entities for the entity question (FRANK's entity_counter or spaCy NER).
    entities = models.JSONField(default=list, blank=True)
    # Gold: an entity NOT in the article. Never sent to an annotator as such.
    negative_entity = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Labels released with a published benchmark are known to anyone who downloads it, so gold derived from
    # them is public (GoldLabel.public): it cannot tell a worker who reads from one who looks the answer up.
    public_labels = models.CharField(
        max_length=40, blank=True,
        help_text="The published benchmark whose released labels came with this document (e.g. FRANK); empty: none.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "external_id"], name="document_unique_per_campaign")]
        indexes = [models.Index(fields=["campaign", "dataset", "split"])]

    def __str__(self) -> str:
        return f"{self.dataset}:{self.external_id}"


class Summary(models.Model):
    """A summary of a document: a system output, a reference, or a human edit of another summary."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="summaries")
    system = models.CharField(max_length=100, help_text="Producing system (model name), 'reference' or 'human-edit'.")
    text = models.TextField()
    sentences = models.JSONField(default=list)
    is_reference = models.BooleanField(default=False)
    # Minimal pairs: this summary is an edit of ``edited_from``.
    edited_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="edits")
    requested_error_type = models.CharField(max_length=30, blank=True)
    corrected_error_type = models.CharField(max_length=30, blank=True)
    external_id = models.CharField(max_length=200, blank=True, help_text="Id of the record this summary came from.")
    # Imported human scores (e.g. FRANK's Factuality and per-category scores).
    human_scores = models.JSONField(default=dict, blank=True)
    # What an importer keeps verbatim from its source, e.g. a BUMP pair's own id and label strings.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "summaries"
        constraints = [
            models.UniqueConstraint(
                fields=["document", "system"], condition=Q(edited_from__isnull=True), name="summary_unique_system_per_document"
            ),
        ]
        indexes = [models.Index(fields=["document", "system"])]

    def __str__(self) -> str:
        return f"{self.system} summary of {self.document.external_id}"


class TrapSource(models.TextChoices):
    """Where a trap's text comes from, which decides how much it counts (``TRAP_SOURCE_WEIGHTS``)."""

    MECHANICAL = "mechanical", "Built mechanically from the shipped article"
    BUMP_EDIT = "bump_edit", "Accepted human BUMP edit of the same article"


#: How much one trap answer counts in the trap score, per source. A mechanical trap (copy, negation,
#: scramble, pronoun swap, other article) is one edit away from text the page ships, so a script reading the
#: page detects many of them; a reviewed human minimal edit of the same article is far harder to tell.
TRAP_SOURCE_WEIGHTS: dict[str, float] = {TrapSource.MECHANICAL: 0.5, TrapSource.BUMP_EDIT: 1.0}


#: Trap code of an error trap taken from a BUMP edit (F-codes are FRANK's mechanical kinds).
BUMP_EDIT_TRAP_CODE = "B"


class Trap(models.Model):
    """A sentence with a known label, appended to a summary in the annotation page (gold)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="traps")
    code = models.CharField(
        max_length=4, help_text="F0 copy, F1 negation, F4 other article, F5 scrambled, F6 pronoun swap; B: a BUMP edit.",
    )
    text = models.TextField()
    expected_factual = models.BooleanField()
    expected_category = models.CharField(max_length=10, blank=True)
    source = models.CharField(max_length=12, choices=TrapSource.choices, default=TrapSource.MECHANICAL)
    weight = models.FloatField(
        default=TRAP_SOURCE_WEIGHTS[TrapSource.MECHANICAL], validators=[MinValueValidator(0.0)],
        help_text="How much an answer on this trap counts in the trap score (set from its source when created).",
    )
    #: Word overlap with the closest article sentence, as for gold (GoldLabel.overlap): set when the trap is made.
    overlap = models.FloatField(null=True, blank=True, help_text="Word overlap with the closest article sentence (0 to 1).")
    # The accepted BUMP edit a "bump_edit" trap was taken from (another campaign's summary).
    edited_summary = models.ForeignKey(
        "Summary", null=True, blank=True, on_delete=models.SET_NULL, related_name="traps_made",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "edited_summary"], condition=Q(edited_summary__isnull=False), name="trap_once_per_edit",
            ),
        ]

    def __str__(self) -> str:
        return f"trap {self.code} of {self.document.external_id}"


def trap_weight(trap: Trap) -> float:
    """How much an answer on ``trap`` counts in a trap score: the weight stored with it (from its source)."""
    return float(trap.weight)


class Item(models.Model):
    """A HIT: the unit given to a worker. FRANK: a document with its summaries; BUMP: (summary, error type)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="items")
    summary = models.ForeignKey(Summary, null=True, blank=True, on_delete=models.CASCADE, related_name="items")
    requested_error_type = models.CharField(max_length=30, blank=True)
    # Expert items (BUMP N/A re-queue) are only given to reviewers.
    for_experts = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)
    # Active and submitted assignments: kept by annotate.services.live_counts (claims read it from an index).
    live_count = models.PositiveIntegerField(default=0)
    # Some of its sentences have a gold label (server-side only; the page is the same as any other item's).
    is_control = models.BooleanField(default=False)
    # Adaptive redundancy (annotate.services.adaptive): how many workers the item may have now (None: the
    # campaign's min_workers), whether the stop rule has closed it, and its least certain label's posterior.
    worker_target = models.PositiveSmallIntegerField(null=True, blank=True)
    settled = models.BooleanField(default=False)
    label_posterior = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [
            models.Index(fields=["campaign", "document"]),
            models.Index(fields=["campaign", "for_experts", "-live_count", "position", "id"], name="item_claim_order"),
            # Adaptive claims skip settled items through the index, so their cost stays flat as items settle.
            models.Index(fields=["campaign", "for_experts", "settled", "-live_count", "position", "id"], name="item_adaptive_claim_order"),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} of {self.campaign.slug}"


class DocumentPage(models.Model):
    """What a protocol's task page needs from a document, computed once (after import) and read by every claim.

    ``data`` is protocol-specific (FRANK: shown sentences, relevance rankings, trap similarities, entity pool);
    ``version`` names the code that computed it, so a changed rule recomputes instead of serving stale data.
    """

    document = models.OneToOneField(Document, on_delete=models.CASCADE, related_name="prepared_page")
    version = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"prepared page of {self.document_id} ({self.version})"


__all__ = ["BUMP_EDIT_TRAP_CODE", "TRAP_SOURCE_WEIGHTS", "Document", "DocumentPage", "Item", "Summary", "Trap", "TrapSource", "trap_weight"]
