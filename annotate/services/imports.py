"""Entry points for importing datasets and metric scores (used by management commands and the REST API).

Each import runs in one database transaction: a bad file imports nothing, and the raised
``ImportFailed`` names the file, the record and the field at fault. Re-running an import creates nothing new.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotate.importers.base import ImportFailed, ImportReport, ProgressCallback
from annotate.importers.scores import import_csv_scores, import_frank_scores, import_jsonl_scores
from annotate.importers.store import Store
from annotate.models import Campaign, Document, GoldLabel, Item, MetricScore, SentenceJudgement, Summary, Trap
from annotate.protocols import PROTOCOLS, dataset_formats
from annotate.services.campaigns import create_campaign
from annotate.services.gold import gold_from_imported_labels
from annotate.services.planner_statistics import refresh_planner_statistics_on_commit

SCORE_FORMATS: dict[str, Callable] = {"frank": import_frank_scores, "jsonl": import_jsonl_scores, "csv": import_csv_scores}
#: The tables a dataset import fills (the campaign's documents, summaries, items, traps, imported judgements and
#: the gold made from them) and those a score import fills: analyzed once the import commits.
DATASET_TABLES = (Document, Summary, Item, Trap, SentenceJudgement, GoldLabel, MetricScore)
SCORE_TABLES = (MetricScore,)


def _no_progress(done: int, total: int | None) -> None:
    return None


def _check_paths(paths: Sequence[str | Path]) -> list[Path]:
    if not paths:
        raise ImportFailed("no input path given")
    resolved = [Path(p) for p in paths]
    for path in resolved:
        if not path.exists():
            raise ImportFailed("file or folder not found", path=path)
    return resolved


def import_dataset(
    fmt: str,
    paths: Sequence[str | Path],
    *,
    campaign_slug: str,
    campaign_kind: str | None = None,
    campaign_name: str | None = None,
    progress: ProgressCallback | None = None,
    dataset: str | None = None,
) -> ImportReport:
    """Import ``paths`` in format ``fmt`` into the campaign ``campaign_slug`` (created if missing).

    ``campaign_kind`` applies only when the campaign is created, with that kind's defaults (default: the
    kind of the protocol that owns the format). ``dataset`` is the QAGS importer's dataset for records that
    do not name one.
    """
    formats = dataset_formats()
    if fmt not in formats:
        raise ImportFailed(f"unknown format {fmt!r}; expected one of {', '.join(formats)}")
    if campaign_kind is not None and campaign_kind not in PROTOCOLS:
        raise ImportFailed(f"unknown campaign kind {campaign_kind!r}; expected one of {', '.join(PROTOCOLS)}")
    dataset_format, default_kind = formats[fmt]
    options = {"dataset": dataset} if dataset else {}
    if options and "dataset" not in dataset_format.options:
        takers = [name for name, (f, _) in formats.items() if "dataset" in f.options]
        raise ImportFailed(f"the dataset option applies to {', '.join(takers)} imports only", field="dataset")
    resolved = _check_paths(paths)
    report = ImportReport(campaign=campaign_slug, format=fmt)
    with transaction.atomic():
        campaign = Campaign.objects.filter(slug=campaign_slug).first()
        created = campaign is None
        if created:
            campaign = create_campaign(
                slug=campaign_slug, name=campaign_name or campaign_slug.replace("-", " ").title(), kind=campaign_kind or default_kind,
            )
        report.count("campaigns", created)
        store = Store(campaign, report)
        dataset_format.importer(store, resolved, progress or _no_progress, **options)
        store.problems.raise_if_any()  # every wrong record named; the transaction stores nothing
        store.flush()
        if dataset_format.public_labels:  # a published benchmark's labels: anyone may hold them
            report.public_labels = dataset_format.public_labels
            Document.objects.filter(pk__in=store.document_ids).exclude(public_labels=report.public_labels).update(
                public_labels=report.public_labels
            )
        gold_from_imported_labels(campaign)  # control items: the human labels that came with the data
        refresh_planner_statistics_on_commit(DATASET_TABLES)
        queue_page_preparation(campaign)
        queue_figures(campaign)
    return report


def queue_page_preparation(campaign: Campaign) -> None:
    """Send the job that prepares the campaign's task pages once this import commits
    (``FACTLAB_PREPARE_PAGES_AFTER_IMPORT``; ``manage.py prepare_pages`` does it by hand)."""
    if not settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT:
        return
    from annotate.services.page_preparations import queue_page_preparation as queue

    queue(campaign)


def queue_figures(campaign: Campaign) -> None:
    """Once this import commits, a worker computes the admin pages' figures of the new data."""
    from annotate.signals import campaign_data_changed

    campaign_data_changed.send(sender=Campaign, campaign=campaign, delay=0)


def import_scores(
    fmt: str, paths: Sequence[str | Path], *, campaign_slug: str, progress: ProgressCallback | None = None
) -> ImportReport:
    """Import external metric scores for summaries of an existing campaign (atomic, idempotent)."""
    if fmt not in SCORE_FORMATS:
        raise ImportFailed(f"unknown score format {fmt!r}; expected one of {', '.join(SCORE_FORMATS)}")
    resolved = _check_paths(paths)
    campaign = Campaign.objects.filter(slug=campaign_slug).first()
    if campaign is None:
        raise ImportFailed(f"no campaign with slug '{campaign_slug}'")
    report = ImportReport(campaign=campaign_slug, format=fmt)
    with transaction.atomic():
        store = Store(campaign, report)
        SCORE_FORMATS[fmt](store, resolved, progress or _no_progress)
        store.problems.raise_if_any()
        store.flush()
        refresh_planner_statistics_on_commit(SCORE_TABLES)
        queue_figures(campaign)
    return report
