"""The interface a campaign kind implements on top of the shared workflow.

Everything that differs between campaign kinds is an attribute or a method here; the shared services,
views, serializers and exporters ask the campaign's protocol (``annotate.protocols.protocol_for``) and never
test the kind themselves.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from annotate.models import (
    Assignment,
    Campaign,
    Document,
    Item,
    Participation,
    Summary,
    Worker,
)

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotate.exporters.parquet import Table
    from annotate.exporters.tabular import ExportFilters


@dataclass
class SubmissionResult:
    """What a protocol reports after storing a submission (inside the submit transaction)."""

    #: Rows stored (judgements, edits...), for the response and the logs.
    stored_rows: int = 0
    #: Trap answers seen in this submission: (correct count, total count), added to the participation.
    traps_correct: int = 0
    traps_total: int = 0
    #: The item was answered faster than the campaign's minimum time per sentence (counted on the participation).
    too_fast: bool = False
    #: Reading-check answers given with the submission: (count, wrong count), added to the participation,
    #: whose reading-check rule (``participation.reading_check_block_reason``) may then block the worker.
    reading_checks: int = 0
    reading_check_failures: int = 0
    #: Summary ids created by the submission (BUMP edits), for automatic scoring.
    new_summary_ids: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset import format: its importer ``(store, paths, progress, **options)`` and the upload endings it takes."""

    importer: Callable[..., None]
    suffixes: tuple[str, ...]
    #: Keyword options the importer takes besides the paths (e.g. QAGS's ``dataset``).
    options: tuple[str, ...] = ()
    #: The published benchmark whose released labels this format carries (e.g. "FRANK"): gold derived from
    #: them is public, since anyone may download the answers. Empty for a format of new, unpublished data.
    public_labels: str = ""
    #: Whether a sample of a file looks like this format, and why (``annotate.importers.sniff``); None: never
    #: recognised from content, only chosen by name.
    recognize: Callable[..., Any] | None = None
    #: How the upload forms name the format (default: its name).
    label: str = ""


@dataclass(frozen=True)
class GoldTally:
    """How a worker's answers on gold of one class scored: ``correct`` of ``total`` right, whatever the answer's
    shape (a sentence's yes/no, a span, a rating). What the shared balanced score, control items, blocking, pay
    holds and bonuses are computed from (``annotate.services.quality``).

    The class is binary: ``expected_factual`` True for gold that says the text is right as it stands, False for
    gold that says it holds an error; the balanced score averages the share right over the two.

    Examples
    --------
    >>> GoldTally(expected_factual=False, correct=3, total=4).wrong
    1
    """

    expected_factual: bool
    correct: int
    total: int
    #: The gold was published (e.g. with a benchmark): a worker may hold it without reading.
    public: bool = False
    #: The stratum the score is balanced within (data set and word-overlap band for sentences, e.g. "cnndm/3").
    stratum: str = ""
    #: When the answers were submitted (the most recent checks decide too).
    at: datetime | None = None

    @property
    def wrong(self) -> int:
        return self.total - self.correct


@dataclass(frozen=True)
class AnswerRows:
    """A row kind that a protocol's answers add to the shared jsonl/csv/parquet exports.

    Its rows carry the shared columns (``record_type``, ``campaign``, ``document_id``, ``dataset``, ``split``,
    ``summary_id``, ``system``, ``worker``, ``created_at``...) and the kind's own ``columns``; CSV puts those
    after the shared ones, Parquet types them by their alias.

    Examples
    --------
    >>> AnswerRows("one row per rating", {"rating": "int64"}).columns["rating"]
    'int64'
    """

    description: str
    #: The kind's own columns -> their Parquet type alias ("string", "int64", "double", "bool").
    columns: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportSection:
    """A protocol's section of the campaign report, shown as it is by the API, ``manage.py report`` and the
    dashboard: counts, and the agreement of the workers' answers by the protocol's own statistic.

    Examples
    --------
    >>> ReportSection("Ratings", {"ratings": 4}, "Krippendorff's alpha (interval)", 0.5).as_dict()["agreement"]
    {'statistic': "Krippendorff's alpha (interval)", 'value': 0.5}
    """

    title: str
    counts: Mapping[str, int]
    #: The agreement statistic's name and value (None when too few answers overlap to compute it).
    agreement_statistic: str = ""
    agreement: float | None = None
    #: The protocol's own analyses, JSON-ready (e.g. detectors measured against its answers); given as they
    #: are by the API and ``manage.py report --json``, left out when empty.
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {"title": self.title, "counts": dict(self.counts),
               "agreement": {"statistic": self.agreement_statistic, "value": self.agreement}}
        if self.details:
            out["details"] = dict(self.details)
        return out


@dataclass(frozen=True)
class ReportRecords:
    """A protocol's own answer rows in a campaign, as the shared report counts them (``Protocol.report_records``,
    read by ``metrics_service.selectors``) and watches them for changes (the stored report's data state)."""

    rows: QuerySet
    #: Lookup prefix from a row to the summary it answers (e.g. "source_summary__"): the report's split, data set
    #: and system filters apply through it.
    summary_path: str
    #: A field whose latest value marks a change besides new rows (e.g. a review's time); "" when rows never change.
    changed_at: str = ""


@dataclass(frozen=True)
class ExportStream:
    """A protocol export: the byte chunks, their content type and the download's file name."""

    chunks: Iterable[bytes]
    content_type: str
    filename: str


@dataclass(frozen=True)
class QualificationForm:
    """The qualification page of a protocol: its template and what the template shows."""

    template: str
    context: dict[str, Any]


@dataclass(frozen=True)
class TaskPage:
    """A protocol's task page for one assignment, which the one task view (``annotate.views.tasks.task``) claims
    and renders: its template, the data its script reads (the page's JSON: never gold), more template
    context, and the protocol's own endpoints besides the shared submit and done URLs the view adds."""

    template: str
    data: dict[str, Any]
    context: dict[str, Any] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)


class Protocol(ABC):
    kind: str
    #: The kind as admins read it (the campaign kind field's choice label).
    label: ClassVar[str] = ""
    #: Prefix of the protocol's URL names and template folder; kinds of one family share their pages.
    family: str = ""
    #: Module of the protocol's page URLs (included by ``annotate/urls.py``), or "" when it has no pages of its own.
    urls_module: ClassVar[str] = ""
    #: Module of the protocol's REST routes under ``/api/`` (namespace ``api``, e.g. BUMP's edits list), included
    #: by ``annotate/api/urls.py`` before the campaign routers; "" when it has none.
    api_urls_module: ClassVar[str] = ""
    #: URL names (namespace ``annotate``, taking the campaign ``slug``) of this protocol's pages; the shared
    #: campaign entry page redirects a worker to the step they are at.
    tutorial_url_name: str | None = None
    qualification_url_name: str | None = None
    task_url_name: str = ""
    #: Optional pages: the read-only preview for crowd platforms, and the expert review queue (linked from
    #: the admin campaign page).
    preview_url_name: str | None = None
    review_url_name: str | None = None
    #: The protocol's words on admin and worker pages and CSVs; None hides a figure the protocol does not have.
    terms: ClassVar[dict[str, str | None]] = {
        "items": "Items", "items_csv": "items", "trap_score": "Trap score", "entity": "Reading check",
        "too_fast": "Too fast", "judgements_csv": "sentence judgements with lead times (CSV)",
        "items_done": "Items",
    }
    #: Field values of a new campaign of this kind; every creation path applies them
    #: (``annotate.services.campaigns.create_campaign``), values given explicitly win.
    campaign_defaults: ClassVar[Mapping[str, object]] = {}
    #: Dataset import formats that create a campaign of this kind when none is named.
    dataset_formats: ClassVar[Mapping[str, DatasetFormat]] = {}
    #: Export formats of the protocol's own data (besides the shared jsonl/csv/parquet rows): name -> what it writes.
    export_formats: ClassVar[Mapping[str, str]] = {}
    #: Parts of the protocol's export that can be asked for alone (the export's ``file``), besides the whole "zip".
    export_parts: ClassVar[tuple[str, ...]] = ()
    #: Pay the item bonus when the item is submitted (False: the protocol settles it later, e.g. after a review).
    bonus_at_submission: ClassVar[bool] = True
    #: Workers label summary sentences: a label model aggregates them, and adaptive redundancy can stop an
    #: item on its labels' posteriors (False: the work is something else, e.g. BUMP's edits).
    labels_sentences: ClassVar[bool] = True

    # ------------------------------------------------------------------ pages and preparation

    def prepare_campaign(self, campaign: Campaign, *, only_missing: bool = True, progress=None, checkpoint=None) -> int:
        """Compute once, after an import, what task pages need from the campaign's documents (a background
        job: ``annotate.prepare_campaign_pages``); returns how many documents were prepared. ``only_missing``:
        skip documents already prepared by the current code; ``progress(done, total)`` is called as it goes;
        ``checkpoint()`` (cheap) is called between documents and raises to stop the run (a cancel)."""
        return 0

    def pages_version(self) -> str:
        """The version of the code whose output :meth:`prepare_campaign` stores ("": the protocol prepares nothing).
        After a deploy that changes it, the beat queues one preparation per campaign whose pages are out of date
        (``annotate.services.page_preparations.queue_out_of_date_preparations``)."""
        return ""

    def campaigns_with_unprepared_pages(self, campaigns: QuerySet[Campaign]) -> list[Campaign]:
        """Those of ``campaigns`` (all of this kind) with a document whose page the current code has not prepared:
        each claim of one would prepare it inside the request."""
        return []

    def prepare_assignment(self, assignment: Assignment) -> None:
        """Fill ``assignment.layout`` (what the page shows, as the protocol records it: server-side only) on a new
        claim, before it is saved."""

    #: Relations of ``Item`` that :meth:`prepare_assignment` reads (FRANK: its document's prepared page), joined to
    #: the item a claim locks (``select_related``), so reading them costs the claim no query of its own.
    claimed_item_relations: ClassVar[tuple[str, ...]] = ()

    def assignment_claimed(self, assignment: Assignment) -> None:
        """Store the protocol's own rows of a claim just saved (BUMP: its checkpoint code), in the claim's
        transaction; set through the row's relation to ``assignment``, they are read from it without a query."""

    #: Reverse one-to-one relations of ``Assignment`` to the protocol's own rows (FRANK: its reading-check answer,
    #: BUMP: its checkpoint) that its task page, submission and ``assignment_details`` read: joined
    #: (``select_related``) wherever the shared code loads an assignment of this kind, so reading them costs no query.
    assignment_relations: ClassVar[tuple[str, ...]] = ()

    def submission_annotations(self) -> dict[str, Any]:
        """Expressions read with a submission's lock of an assignment of this kind, each set as an attribute of the
        locked assignment that ``store_submission`` reads (FRANK: the expected answers of its item's traps), where
        it would otherwise read them in a query of its own. Called once per kind, when that lock's query is
        compiled; the default adds nothing."""
        return {}

    def assignment_details(self, assignment: Assignment) -> dict[str, Any]:
        """What the protocol records about ``assignment`` beside the shared fields, JSON-ready, for admins (the
        API's assignments list); read through ``assignment_relations``, never gold."""
        return {}

    #: What the task page says when no item is left for the worker.
    nothing_left: ClassVar[str] = "There is no item left for you in this campaign."

    def task_page(self, campaign: Campaign, assignment: Assignment) -> TaskPage:
        """The task page of a claimed ``assignment`` (the view adds the submission key and the submit and done URLs)."""
        raise NotImplementedError(f"{type(self).__name__} has no task page")

    @abstractmethod
    def store_submission(self, assignment: Assignment, payload: dict[str, Any]) -> SubmissionResult:
        """Validate ``payload`` and store it. Raise ``InvalidSubmission`` to refuse (the transaction rolls back).
        The assignment's ``layout`` is what the claim stored (``prepare_assignment``): it is not written again."""

    def document_items(self, store: Any, document: Document) -> None:
        """Create (through ``store.item``, ``store`` being the import's ``annotate.importers.store.Store``) the items
        an imported document makes; default: none."""

    def reference_items(self, store: Any, document: Document, reference: Summary) -> None:
        """Create the items an imported reference summary makes; default: none."""

    # ------------------------------------------------------------------ workflow rules

    def needs_tutorial(self, campaign: Campaign) -> bool:
        """The worker must do the tutorial first: the protocol has one and the campaign asks for it."""
        return self.tutorial_url_name is not None and campaign.tutorial_required

    def order_candidates(self, worker: Worker, campaign: Campaign, candidates: Callable[[int], list[Item]], window: int) -> list[Item]:
        """The next ``window`` items the worker may take, best first (default: items under way first, then campaign
        order). ``candidates(n)``: the first ``n`` items the worker may take in the shared order (a query per call)."""
        return candidates(window)

    def worker_rules(self, campaign: Campaign) -> dict[str, bool]:
        """Which checks the worker rules announce: control sentences, the reading check, expert review."""
        return {"traps": False, "checks": False, "entity_check": False, "review": False}

    # ------------------------------------------------------------------ pay

    def pay_hold_reason(self, participation: Participation) -> str | None:
        """The protocol's own reason to hold the worker's pay for an admin's review (beside the shared rules of
        ``annotate.services.pay_rules.hold_reason``), or None. Called with the participation locked, after the
        submission was stored."""
        return None

    def pay_deferral(self, participation: Participation, assignment: Assignment) -> str | None:
        """Why the pay per item of this submission waits for a later decision on the work (the protocol then
        settles it with ``annotate.services.pay_rules.settle_deferred_pay``), or None: paid at submission."""
        return None

    #: Key prefix of the pay decisions holding a bonus this protocol settles itself (after a review) while the
    #: worker's pay is held; "" when it has none. A release hands those keys to ``release_held_bonuses``.
    held_bonus_prefix: ClassVar[str] = ""

    def release_held_bonuses(self, participation: Participation, keys: list[str]) -> Decimal:
        """Settle the bonuses held under ``held_bonus_prefix`` (``keys``, in hold order) now that the worker's pay
        is released (``annotate.services.pay_rules.release_held_pay``, the participation locked); returns the
        amount added to the ledger."""
        return Decimal(0)

    # ------------------------------------------------------------------ gold and quality
    # Control items, the balanced quality score, blocking, pay holds and bonuses are shared; they ask the
    # protocol what gold it has and how its answers score against it, so they work for any answer shape.
    # Defaults: a protocol without gold (nothing is a control item, nothing is scored but traps).

    def import_gold(self, campaign: Campaign) -> int:
        """Store the gold that data of this protocol's import formats implies, in ``campaign`` (whatever its
        kind: a campaign may hold data of another protocol's format); gold already set is kept. Called for
        every registered protocol, in registry order, inside one transaction
        (``annotate.services.gold.gold_from_imported_labels``). Returns how many gold rows were added."""
        return 0

    def has_gold(self, campaign: Campaign) -> bool:
        """Whether a campaign of this kind has gold its workers' answers are scored against."""
        return False

    def control_item_ids(self, campaign: Campaign, documents: list[int] | None) -> set[int]:
        """The ids of the campaign's items (of ``documents`` only, when given) that hold gold: its control items."""
        return set()

    def gold_tallies(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> list[GoldTally]:
        """How the worker's submitted answers in ``campaign`` (submitted up to ``until``; those of one submitted
        assignment with ``assignment_id``) scored against its gold, as per-class counts (several tallies per
        class when they differ in stratum, publicity or time)."""
        return []

    def gold_tallies_statement(
        self, worker_id: int, campaign: Campaign, *, until: datetime | None = None, assignment_id: int | None = None,
    ) -> tuple[str, list] | None:
        """The SQL, with its parameters, of :meth:`gold_tallies` where the database counts them: rows of (expected
        answer, answered right, public, data set, overlap band, submission time, count), which
        ``annotate.services.quality.gold_tallies_of_rows`` turns into tallies. A submission then reads its gold and
        trap answers in one round trip. None (the default): :meth:`gold_tallies` is called."""
        return None

    def bonus_evidence(self, campaign: Campaign, *, kept: bool = False) -> int | None:
        """How many erroneous checks a worker's bonus can rest on in ``campaign``: gold the page does not give away
        and that is private (or public where the campaign accepts public labels); None when the protocol does
        not count them, and a campaign with checks is then taken as able to pay a bonus
        (``annotate.services.bonus_rule``). ``kept``: as counted at the last change of gold (a task page)."""
        return None

    # ------------------------------------------------------------------ qualification

    def qualification_form(self, campaign: Campaign, participation: Participation, post=None) -> QualificationForm:
        """The qualification page (with the worker's answers ``post`` when it is shown again after an error)."""
        raise NotImplementedError(f"{type(self).__name__} has no qualification test")

    def parse_qualification(self, campaign: Campaign, participation: Participation, post) -> dict[str, Any]:
        """The form's answers as the scorer takes them; raise ``InvalidSubmission`` naming what is missing."""
        raise NotImplementedError(f"{type(self).__name__} has no qualification test")

    def score_qualification(self, campaign: Campaign, participation: Participation, answers: dict[str, Any]) -> float:
        """The share of right answers, 0 to 1."""
        raise NotImplementedError(f"{type(self).__name__} has no qualification test")

    def qualification_passed(self, campaign: Campaign, score: float) -> bool:
        return score >= campaign.qualification_pass_score

    def qualification_source(self, campaign: Campaign) -> str:
        """Where the campaign's qualification keys come from: "imported" (the admin's material), "campaign" (its
        own gold), or "shipped": the protocol's default pool, whose keys are in the source code, so a script
        holding the code passes it; the qualification page offers it only once an admin accepts that
        (``campaign.shipped_qualification_accepted``)."""
        return "imported" if (campaign.training_material or {}).get("qualification") else "shipped"

    #: Whether a campaign can import its own tutorial/qualification material (``import_training_material``).
    takes_training_material: ClassVar[bool] = False

    def parse_training_material(self, data: Any) -> dict[str, Any]:
        """A campaign's own tutorial/qualification material, validated (``MaterialError`` names what is wrong)."""
        raise NotImplementedError(f"{type(self).__name__} takes no imported material")

    # ------------------------------------------------------------------ exports

    def export(self, campaign: Campaign, fmt: str, export_filters: ExportFilters, *, file: str, reveal_workers: bool,
               include_gold: bool) -> ExportStream:
        """Stream one of ``export_formats``."""
        raise NotImplementedError(f"{type(self).__name__} has no export format {fmt!r}")

    def parquet_tables(self, campaign: Campaign, export_filters: ExportFilters) -> list[Table]:
        """The protocol's own tables in the Parquet dataset, beside the shared row tables."""
        return []

    # ------------------------------------------------------------------ what reads answers
    # The shared exports, the report and the speed rule ask the protocol about its answers, so an answer of any
    # shape (a rating, a span, a choice) reaches them. Defaults: nothing beyond the shared sentence rows.

    #: Row kinds the protocol's answers add to the shared jsonl/csv/parquet exports, after the shared kinds.
    answer_row_kinds: ClassVar[Mapping[str, AnswerRows]] = {}
    #: The unit of work the speed rule's minimum and the counts are per, singular and plural.
    unit_words: ClassVar[tuple[str, str]] = ("sentence", "sentences")

    def answer_rows(self, campaign: Campaign, kind: str, export_filters: ExportFilters,
                    name: Callable[[int | None], str | None]) -> Iterable[dict[str, Any]]:
        """The rows of one of ``answer_row_kinds`` (``name`` turns a worker id into the export's worker name)."""
        return ()

    #: Published row kinds this protocol's answers fill (``annotate.exporters.tabular.LAYOUT_ANSWER_KINDS``: FRANK's
    #: judgements, BUMP's edits), in every campaign holding such answers. A new protocol adds its own kinds through
    #: ``answer_row_kinds`` instead: these keep the columns and place the published layout gave them.
    layout_row_kinds: ClassVar[tuple[str, ...]] = ()

    def layout_rows(self, campaign: Campaign, kind: str, export_filters: ExportFilters,
                    name: Callable[[int | None], str | None], base: dict[str, Any], *, chunk_size: int) -> Iterable[dict[str, Any]]:
        """The rows of one of ``layout_row_kinds`` in ``campaign``, each ``base`` (every export column) updated
        with the row's cells (``name`` turns a worker id into the export's worker name)."""
        return ()

    def report_sections(self, campaign: Campaign) -> list[ReportSection]:
        """The protocol's sections of the campaign report (none: the shared sentence report says it all)."""
        return []

    def report_records(self, campaign: Campaign) -> Mapping[str, ReportRecords]:
        """The protocol's own answer rows in ``campaign`` that the shared report counts, by the name of their count
        (BUMP: ``edit_records``). Asked of every registered protocol, whatever the campaign's kind (a campaign may
        hold another protocol's answers); a name two protocols give is counted once."""
        return {}

    def written_summaries(self) -> QuerySet | None:
        """The summaries the protocol's answers wrote (BUMP: its edits' edited summaries), as a query of their ids
        (one column, no nulls), or None. Text written here was never published with a benchmark: a trap taken
        from it counts as private even when its article's data set is public (``services.quality.trap_checks``)."""
        return None

    def pair_verdicts(self, campaign: Campaign) -> Mapping[int, str | None]:
        """The review verdict on each minimal pair whose edited summary the protocol's answers wrote in ``campaign``,
        by that summary's id: the error type the review settled on ("" when it kept the requested one), or None
        while the pair is not accepted (awaiting review, rejected). The report's minimal pairs
        (``metrics_service.selectors.pairs_frame``) keep those accepted and every pair absent here (imported pairs,
        reviewed by their source). Asked once per implementation, whatever the campaign's kind."""
        return {}
