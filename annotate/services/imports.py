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
from annotate.bump.importer import import_bump
from annotate.frank.importer import import_frank
from annotate.importers.jsonl import import_jsonl
from annotate.importers.qags import import_qags
from annotate.importers.scores import import_csv_scores, import_frank_scores, import_jsonl_scores
from annotate.importers.store import Store
from annotate.models import Campaign, CampaignKind

DATASET_FORMATS: dict[str, Callable] = {
    "frank": import_frank,
    "bump": import_bump,
    "qags": import_qags,
    "jsonl": import_jsonl,
}
DATASET_OPTION_FORMATS = ("qags",)  # importers that take ``dataset=`` for records without one
SCORE_FORMATS: dict[str, Callable] = {"frank": import_frank_scores, "jsonl": import_jsonl_scores, "csv": import_csv_scores}
DEFAULT_KIND = {"frank": CampaignKind.FRANK, "bump": CampaignKind.BUMP_TAXONOMY, "qags": CampaignKind.FRANK, "jsonl": CampaignKind.FRANK}


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

    ``campaign_kind`` applies only when the campaign is created (default: FRANK for frank/qags/jsonl,
    BUMP taxonomy for bump). ``dataset`` is the QAGS importer's dataset for records that do not name one.
    """
    if fmt not in DATASET_FORMATS:
        raise ImportFailed(f"unknown format {fmt!r}; expected one of {', '.join(DATASET_FORMATS)}")
    if campaign_kind is not None and campaign_kind not in CampaignKind.values:
        raise ImportFailed(f"unknown campaign kind {campaign_kind!r}; expected one of {', '.join(CampaignKind.values)}")
    options = {"dataset": dataset} if dataset else {}
    if options and fmt not in DATASET_OPTION_FORMATS:
        raise ImportFailed(f"the dataset option applies to {', '.join(DATASET_OPTION_FORMATS)} imports only", field="dataset")
    resolved = _check_paths(paths)
    report = ImportReport(campaign=campaign_slug, format=fmt)
    with transaction.atomic():
        campaign, created = Campaign.objects.get_or_create(
            slug=campaign_slug,
            defaults={"name": campaign_name or campaign_slug.replace("-", " ").title(), "kind": campaign_kind or DEFAULT_KIND[fmt]},
        )
        report.count("campaigns", created)
        store = Store(campaign, report)
        DATASET_FORMATS[fmt](store, resolved, progress or _no_progress, **options)
        store.flush()
        queue_page_preparation(campaign)
    return report


def queue_page_preparation(campaign: Campaign) -> None:
    """Send the job that prepares the campaign's task pages once this import commits
    (``FACTLAB_PREPARE_PAGES_AFTER_IMPORT``; ``manage.py prepare_pages`` does it by hand)."""
    if not settings.FACTLAB_PREPARE_PAGES_AFTER_IMPORT:
        return
    from annotate.tasks import prepare_campaign_pages
    from factlab.jobs import send_after_commit

    send_after_commit(lambda: prepare_campaign_pages.delay(campaign.pk), what=f"page preparation of campaign {campaign.slug}")


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
        store.flush()
    return report
