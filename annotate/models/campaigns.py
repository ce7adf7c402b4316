"""Campaigns: their kind, status, rules and pay; the datasets and splits documents come from."""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from annotate.kinds import default_kind, kind_choices


class Dataset(models.TextChoices):
    CNNDM = "cnndm", "CNN/DailyMail"
    XSUM = "xsum", "XSum (BBC)"
    OTHER = "other", "Other"


class Split(models.TextChoices):
    NONE = "", "No split"
    VALID = "valid", "Validation"
    TEST = "test", "Test"


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    FINISHED = "finished", "Finished"


def _share(default: float, help_text: str = "") -> models.FloatField:
    return models.FloatField(default=default, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)], help_text=help_text)


class Campaign(models.Model):
    """A crowdsourcing campaign: its items, its rules, and its pay. Defaults are FRANK's/BUMP's values."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=kind_choices, default=default_kind)
    status = models.CharField(max_length=10, choices=CampaignStatus.choices, default=CampaignStatus.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # Assignment
    redundancy = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1), MaxValueValidator(50)])
    assignment_timeout_minutes = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1), MaxValueValidator(7 * 24 * 60)]
    )
    # Adaptive redundancy (off by default: a fixed ``redundancy`` reproduces FRANK's protocol). Each item gets
    # ``min_workers``; the label model, refitted off the request path, asks for one more at a time while the
    # least certain of the item's labels has a posterior below ``stop_posterior``, up to ``max_workers``.
    adaptive_redundancy = models.BooleanField(default=False, help_text="Ask more workers only where the labels are still uncertain.")
    min_workers = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1), MaxValueValidator(50)])
    max_workers = models.PositiveSmallIntegerField(default=5, validators=[MinValueValidator(1), MaxValueValidator(50)])
    stop_posterior = models.FloatField(default=0.95, validators=[MinValueValidator(0.5), MaxValueValidator(1.0)])
    label_model = models.CharField(
        max_length=20, default="glad", choices=[("dawid_skene", "Dawid–Skene"), ("mace", "MACE"), ("glad", "GLAD")],
        help_text="The label model whose posteriors are stored with every label and drive adaptive redundancy.",
    )
    # Pay and bonuses (one ledger for every campaign kind)
    pay_per_item = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0.00"), validators=[MinValueValidator(Decimal("0"))])
    bonus_per_item = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("1.00"), validators=[MinValueValidator(Decimal("0"))])
    bonus_min_score = _share(0.60)
    bonus_streak_size = models.PositiveIntegerField(default=10, validators=[MinValueValidator(1)])
    bonus_streak_amount = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("1.00"), validators=[MinValueValidator(Decimal("0"))])
    # Qualification
    tutorial_required = models.BooleanField(default=True)
    qualification_required = models.BooleanField(default=True)
    qualification_pass_score = _share(0.85)
    qualification_attempts = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(20)])
    shipped_qualification_accepted = models.BooleanField(
        default=False,
        help_text="Risky: use the protocol's shipped qualification pool when the campaign has no material of its own "
        "(imported, or its own gold). Its keys are in the source code, so a script holding the code passes it.",
    )
    # Quality control (FRANK)
    entity_check_enabled = models.BooleanField(default=True)
    trap_rate = _share(0.25)
    trap_block_threshold = _share(0.50)
    trap_min_count = models.PositiveSmallIntegerField(default=3)
    min_seconds_per_sentence = models.FloatField(default=2.0, validators=[MinValueValidator(0.0)])
    relevant_sentences_k = models.PositiveSmallIntegerField(default=2, validators=[MaxValueValidator(20)])
    # Control items: real items whose label is known (GoldLabel), scored by balanced accuracy (services/gold.py, services/quality.py)
    control_share = _share(0.2, "Share of each worker's items that carry gold labels (drawn at random per claim, not every k-th).")
    control_min_per_class = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Checked answers needed on factual AND on erroneous sentences before the balanced score decides.",
    )
    control_block_threshold = _share(0.60, "A worker whose balanced quality score (0.5 = chance) falls below this is blocked.")
    bonus_confidence = models.FloatField(
        default=0.95, validators=[MinValueValidator(0.0), MaxValueValidator(0.999)],
        help_text="The bonus needs the balanced score's lower confidence bound (Wilson, per class) at the bonus threshold; 0: the score itself.",
    )
    bonus_on_public_labels = models.BooleanField(
        default=False,
        help_text="Risky: let gold from published labels (e.g. FRANK's release) earn bonuses. A worker holding the "
        "published labels then passes every check without reading; off: bonuses need private checks.",
    )
    crowd_gold_posterior = _share(0.0, "0: off. Else a sentence becomes gold once trusted workers agree on it with at least this posterior.")
    # Raised by every change of gold or traps (annotate.services.check_counts): the workers' counts of checked
    # answers kept under an older value are counted again from their history before they are read.
    checks_version = models.PositiveIntegerField(default=0, editable=False)
    # BUMP editing
    max_edit_distance = models.PositiveSmallIntegerField(default=6, validators=[MinValueValidator(1), MaxValueValidator(100)])
    # BUMP pay: an edit is verified by its review, so pay before review is bounded (annotate/bump/pay.py)
    unreviewed_paid_edits = models.PositiveSmallIntegerField(
        default=5, validators=[MaxValueValidator(1000)],
        help_text="Edits a worker is paid for at submission while they await review; the pay of further edits waits "
        "for their review (paid if accepted or corrected).",
    )
    max_not_applicable_share = _share(
        0.3, "A worker whose share of N/A answers is above this (after 5 items) has their pay held for review.",
    )
    max_rejected_edit_share = _share(
        0.3, "A worker whose share of edits rejected in review is above this (after 4 reviewed) has their pay held for review.",
    )
    exclusive_with = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Workers who took this campaign's qualification may not join (BUMP Task 2 excludes Task 1 workers).",
    )
    # Crowd platforms (see annotate/providers.py and docs/workflows.md, "Crowd platforms")
    crowd_platform = models.CharField(
        max_length=20, default="prolific",
        choices=[("prolific", "Prolific"), ("mturk", "Amazon Mechanical Turk"), ("invited", "Invited workers (accounts here)")],
        help_text="Where the workers come from: a Prolific study needs its completion and screen-out codes before it starts.",
    )
    prolific_completion_code = models.CharField(max_length=64, blank=True, help_text="Shown once the worker submitted completion_min_items items.")
    prolific_screenout_code = models.CharField(
        max_length=64, blank=True, help_text="Shown only to workers screened out (failed qualification or blocked)."
    )
    completion_min_items = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="Items a crowd worker must submit before the completion code is shown.",
    )
    mturk_items_per_assignment = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Items one MTurk assignmentId covers (the HIT's reward pays for them); no more are handed out under it.",
    )
    new_crowd_workers_per_hour = models.PositiveIntegerField(
        default=100, validators=[MaxValueValidator(100000)],
        help_text="New crowd identities this campaign accepts per hour (hoarding and identity-farming cap).",
    )
    unattended_release_minutes = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(24 * 60)],
        help_text="An assignment whose page never sent a heartbeat, or stopped sending them, is released after this many minutes.",
    )
    # Scoring of new summaries/annotations as they arrive, e.g. ["rouge", "bleu"]
    auto_score_metrics = models.JSONField(default=list, blank=True)
    # The campaign's own tutorial/qualification material (validated by the protocol; keys stay server-side).
    training_material = models.JSONField(default=dict, blank=True, help_text="Imported with manage.py import_training_material; empty: the protocol's default.")
    # Researchers granted read/export access to this campaign (admins see every campaign).
    researchers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="granted_campaigns")
    # Reviewers of this campaign's work (BUMP edits) invited for it; staff and the global "reviewers" group review every campaign.
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="reviewed_campaigns")
    # License of the campaign's data, written into the dataset card of Parquet exports (e.g. "mit", "cc-by-4.0").
    license = models.CharField(max_length=100, blank=True, help_text="SPDX-style license id of the data, e.g. mit or cc-by-4.0.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Prolific tells completed from screened-out workers by the code alone.
            models.CheckConstraint(
                condition=Q(prolific_completion_code="") | ~Q(prolific_completion_code=models.F("prolific_screenout_code")),
                name="completion_code_differs_from_screen_out_code",
                violation_error_message="The screen-out code must differ from the completion code.",
            ),
            models.CheckConstraint(
                condition=Q(min_workers__lte=F("max_workers")), name="campaign_min_workers_le_max",
                violation_error_message="The minimum number of workers per item must not exceed the maximum.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"


__all__ = ["Campaign", "CampaignStatus", "Dataset", "Split"]
