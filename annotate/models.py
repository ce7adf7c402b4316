"""The crowdsourcing domain: datasets, campaigns, workers, assignments and what workers produce.

Models hold data and invariants (constraints), not workflow: the rules live in ``annotate.services``.
Gold answers (trap labels, the negative entity, qualification keys) are stored here and only ever read
by services that score a submission; views never serialise them for an annotator.
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class Dataset(models.TextChoices):
    CNNDM = "cnndm", "CNN/DailyMail"
    XSUM = "xsum", "XSum (BBC)"
    OTHER = "other", "Other"


class Split(models.TextChoices):
    NONE = "", "No split"
    VALID = "valid", "Validation"
    TEST = "test", "Test"


class CampaignKind(models.TextChoices):
    FRANK = "frank", "FRANK sentence annotation"
    BUMP_TAXONOMY = "bump_taxonomy", "BUMP taxonomy edit (Task 1)"
    BUMP_FREE = "bump_free", "BUMP free edit (Task 2)"


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    FINISHED = "finished", "Finished"


def _share(default: float) -> models.FloatField:
    return models.FloatField(default=default, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])


class Campaign(models.Model):
    """A crowdsourcing campaign: its items, its rules, and its pay. Defaults are FRANK's/BUMP's values."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=CampaignKind.choices, default=CampaignKind.FRANK)
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
    # Quality control (FRANK)
    entity_check_enabled = models.BooleanField(default=True)
    trap_rate = _share(0.25)
    trap_block_threshold = _share(0.50)
    trap_min_count = models.PositiveSmallIntegerField(default=3)
    min_seconds_per_sentence = models.FloatField(default=2.0, validators=[MinValueValidator(0.0)])
    relevant_sentences_k = models.PositiveSmallIntegerField(default=2, validators=[MaxValueValidator(20)])
    # BUMP editing
    max_edit_distance = models.PositiveSmallIntegerField(default=6, validators=[MinValueValidator(1), MaxValueValidator(100)])
    exclusive_with = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Workers who took this campaign's qualification may not join (BUMP Task 2 excludes Task 1 workers).",
    )
    # Crowd platforms (see annotate/providers.py and README "Crowd platforms")
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
    # License of the campaign's data, written into the dataset card of Parquet exports (e.g. "mit", "cc-by-4.0").
    license = models.CharField(max_length=100, blank=True, help_text="SPDX-style license id of the data, e.g. mit or cc-by-4.0.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    @property
    def is_bump(self) -> bool:
        return self.kind in (CampaignKind.BUMP_TAXONOMY, CampaignKind.BUMP_FREE)


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


class Trap(models.Model):
    """A generated sentence with a known label, appended to a summary in the annotation page (gold)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="traps")
    code = models.CharField(max_length=4, help_text="F0 copy, F1 negation, F4 other article, F5 scrambled, F6 pronoun swap.")
    text = models.TextField()
    expected_factual = models.BooleanField()
    expected_category = models.CharField(max_length=10, blank=True)

    def __str__(self) -> str:
        return f"trap {self.code} of {self.document.external_id}"


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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [
            models.Index(fields=["campaign", "document"]),
            models.Index(fields=["campaign", "for_experts", "-live_count", "position", "id"], name="item_claim_order"),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} of {self.campaign.slug}"


class Worker(models.Model):
    """An annotator. Crowd workers get a Django user created from their platform id."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="worker")
    provider = models.CharField(max_length=20, blank=True, help_text="'prolific', 'mturk' or empty for local accounts.")
    external_id = models.CharField(max_length=200, blank=True)
    is_blocked = models.BooleanField(default=False, help_text="Blocked from every campaign.")
    blocked_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "external_id"], condition=~Q(external_id=""), name="worker_unique_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.external_id or self.user.get_username()


class QualificationStatus(models.TextChoices):
    NOT_TAKEN = "not_taken", "Not taken"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"


class Participation(models.Model):
    """A worker's state in one campaign: tutorial, qualification, quality figures and blocking."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="participations")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="participations")
    tutorial_done = models.BooleanField(default=False)
    qualification_status = models.CharField(max_length=10, choices=QualificationStatus.choices, default=QualificationStatus.NOT_TAKEN)
    qualification_attempts = models.PositiveSmallIntegerField(default=0)
    qualification_score = models.FloatField(null=True, blank=True)
    is_blocked = models.BooleanField(default=False)
    blocked_reason = models.CharField(max_length=300, blank=True)
    blocked_at = models.DateTimeField(null=True, blank=True)
    trap_total = models.PositiveIntegerField(default=0)
    trap_correct = models.PositiveIntegerField(default=0)
    entity_checks = models.PositiveIntegerField(default=0)
    entity_failures = models.PositiveIntegerField(default=0)
    items_submitted = models.PositiveIntegerField(default=0)
    too_fast_items = models.PositiveIntegerField(default=0, help_text="Submitted items faster than the campaign's minimum time (server clock).")
    bonus_items = models.PositiveIntegerField(default=0, help_text="Items submitted while the trap score met the bonus threshold.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "campaign"], name="participation_unique")]

    def __str__(self) -> str:
        return f"{self.worker} in {self.campaign.slug}"

    @property
    def trap_score(self) -> float | None:
        """Continuous evaluation score: share of trap sentences judged correctly (None before any trap)."""
        return self.trap_correct / self.trap_total if self.trap_total else None

    #: "Consistently" too fast: at least this many items, and this share of them under the campaign's minimum.
    FAST_WORKER_MIN_ITEMS = 3
    FAST_WORKER_SHARE = 0.8

    @property
    def is_fast_worker(self) -> bool:
        """Items consistently faster than the campaign's ``min_seconds_per_sentence`` (server-measured)."""
        return self.items_submitted >= self.FAST_WORKER_MIN_ITEMS and self.too_fast_items >= self.FAST_WORKER_SHARE * self.items_submitted


class QualificationAttempt(models.Model):
    """One try at a campaign's qualification test, with its answers and score."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="qualification_tries")
    answers = models.JSONField(default=dict)
    score = models.FloatField()
    passed = models.BooleanField()
    # Keyed hash of the network address (services.participation.client_address): attempts per address.
    address = models.CharField(max_length=64, blank=True, default="", db_index=True)
    submitted_at = models.DateTimeField(auto_now_add=True)


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "In progress"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Expired"
    RELEASED = "released", "Released"


LIVE_ASSIGNMENT_STATUSES = (AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED)


class Assignment(models.Model):
    """A worker's claim on an item. At most ``campaign.redundancy`` live ones per item; never twice per worker."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    submission_key = models.CharField(max_length=64, blank=True, help_text="Client key of the accepted submission (idempotency).")
    lead_time_seconds = models.FloatField(null=True, blank=True)
    too_fast = models.BooleanField(default=False)
    # What the page showed: the order of summaries and where traps were appended (server-side only).
    layout = models.JSONField(default=dict, blank=True)
    # BUMP checkpoint code shown in the instructions.
    checkpoint_code = models.CharField(max_length=16, blank=True)
    entity_correct = models.BooleanField(null=True, blank=True)
    # Platform details (MTurk assignment id, Prolific session id...).
    external_assignment_id = models.CharField(max_length=200, blank=True)
    # Last heartbeat of the task page (None: the page never reported being open); see release_unattended_assignments.
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "worker"], name="assignment_once_per_worker")]
        indexes = [
            models.Index(fields=["item", "status"]),
            models.Index(fields=["worker", "status"]),
            # Expiry runs on every claim: find the active ones past their deadline without a scan.
            models.Index(fields=["expires_at"], condition=Q(status="active"), name="assignment_active_expiry"),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class CrowdEventKind(models.TextChoices):
    IDENTITY_CREATED = "identity_created", "New crowd identity"
    IDENTITY_REUSED = "identity_reused", "Crowd id presented by another browser (refused)"
    RATE_LIMITED = "rate_limited", "New identity refused by a rate limit"
    BAD_LINK = "bad_link", "Study link without a valid token"


class CrowdEvent(models.Model):
    """What happened at a campaign's crowd entry that an admin should be able to see (and count)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="crowd_events")
    kind = models.CharField(max_length=20, choices=CrowdEventKind.choices)
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="crowd_events")
    provider = models.CharField(max_length=20, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["campaign", "kind", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.provider}:{self.external_id} in {self.campaign.slug}"


class JudgementSource(models.TextChoices):
    COLLECTED = "collected", "Collected here"
    IMPORTED = "imported", "Imported"


class SentenceJudgement(models.Model):
    """A worker's answer for one summary sentence: factual or not, and the error categories."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="judgements")
    sentence_index = models.PositiveIntegerField()
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="judgements")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="judgements")
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True, help_text="FRANK category codes (empty when factual).")
    lead_time_seconds = models.FloatField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=JudgementSource.choices, default=JudgementSource.COLLECTED)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["summary", "sentence_index", "worker"], name="judgement_once_per_worker"),
        ]
        indexes = [models.Index(fields=["summary", "sentence_index"])]


class TrapAnswer(models.Model):
    """A worker's answer on a trap sentence: quality control only, never part of the collected data."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="trap_answers")
    trap = models.ForeignKey(Trap, on_delete=models.CASCADE, related_name="answers")
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True)
    correct = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "trap"], name="trap_answer_once")]


class ReviewStatus(models.TextChoices):
    PENDING = "pending", "Awaiting review"
    ACCEPTED = "accepted", "Accepted"
    CORRECTED = "corrected", "Type corrected"
    REJECTED = "rejected", "Rejected"


class Edit(models.Model):
    """A BUMP edit: the worker's minimal change of a reference summary (or N/A), with hints and review."""

    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="edit")
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="edits")
    source_summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="received_edits")
    edited_summary = models.OneToOneField(Summary, null=True, blank=True, on_delete=models.SET_NULL, related_name="edit_record")
    requested_error_type = models.CharField(max_length=30, blank=True, help_text="Empty for free-style edits.")
    is_not_applicable = models.BooleanField(default=False, help_text="The worker said the type cannot be introduced (N/A).")
    text = models.TextField(blank=True)
    word_distance = models.PositiveIntegerField(default=0)
    inserted_words = models.JSONField(default=list, blank=True)
    hint_inserted_in_article = models.BooleanField(null=True, blank=True)
    hint_likely_kind = models.CharField(max_length=10, blank=True, help_text="'intrinsic' or 'extrinsic'.")
    hint_disagrees = models.BooleanField(default=False)
    review_status = models.CharField(max_length=10, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)
    corrected_error_type = models.CharField(max_length=30, blank=True)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    review_comment = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class MetricSource(models.TextChoices):
    IMPORTED = "imported", "Imported"
    COMPUTED = "computed", "Computed here"


class MetricScore(models.Model):
    """A metric's value for a summary, unique per (summary, metric, configuration)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="metric_scores")
    metric = models.CharField(max_length=100, help_text="Output name, e.g. rouge2, coco_sent, BARTScore.")
    config_key = models.CharField(max_length=64, blank=True, default="", help_text="Hash of the scorer configuration.")
    value = models.FloatField()
    source = models.CharField(max_length=10, choices=MetricSource.choices, default=MetricSource.COMPUTED)
    job_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "metric", "config_key"], name="metric_score_unique")]
        indexes = [models.Index(fields=["metric"])]


class ExpertLabel(models.Model):
    """An expert's label for a summary sentence (crowd-vs-expert agreement)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="expert_labels")
    sentence_index = models.PositiveIntegerField()
    expert = models.CharField(max_length=150)
    factual = models.BooleanField()
    categories = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["summary", "sentence_index", "expert"], name="expert_label_unique")]


class BonusEntry(models.Model):
    """Append-only bonus ledger. ``key`` is unique so recomputing or retrying never pays twice."""

    key = models.CharField(max_length=200, unique=True)
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="bonuses")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="bonuses")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="bonuses")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    reason = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "bonus entries"
        ordering = ["created_at"]


class ImportStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed (nothing was stored)"


class ImportJob(models.Model):
    """An uploaded dataset or metric-score file, imported by a Celery task (``annotate.tasks.run_import_job``)."""

    kind = models.CharField(max_length=10, choices=[("dataset", "Dataset"), ("scores", "Metric scores")], default="dataset")
    format = models.CharField(max_length=10)
    campaign_slug = models.SlugField(max_length=80)
    campaign_kind = models.CharField(max_length=20, choices=CampaignKind.choices, blank=True)
    file = models.FileField(upload_to="imports/%Y/%m/")
    original_name = models.CharField(max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    done = models.PositiveIntegerField(default=0, help_text="Records read so far.")
    total = models.PositiveIntegerField(null=True, blank=True, help_text="Records in the file when known.")
    report = models.JSONField(default=dict, blank=True, help_text="What the import created (ImportReport.as_dict()).")
    error = models.JSONField(default=dict, blank=True, help_text="ImportFailed.as_dict(): file, record, field, message.")
    options = models.JSONField(default=dict, blank=True, help_text="Importer options, e.g. {\"dataset\": \"xsum\"} for QAGS.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Starts so far (a lost worker's re-delivery counts).")
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its task message reached the broker.")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.format} into {self.campaign_slug}, {self.status})"


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
