"""Task protocols: what a campaign kind shows and how it stores a submission.

The shared workflow (assignments, qualification bookkeeping, quality rules, bonuses) lives in
``annotate.services``; each campaign kind plugs in one :class:`~annotate.protocols.base.Protocol`.
A protocol is an installed Django app (``annotate.kinds.ProtocolAppConfig``) that registers its
protocols when it gets ready; adding one is one package and one line in ``PROTOCOL_APPS`` (docs/architecture.md).
"""
from __future__ import annotations

from annotate.kinds import PROTOCOLS

from .base import (
    AnswerRows,
    DatasetFormat,
    ExportStream,
    GoldTally,
    Protocol,
    QualificationForm,
    ReportRecords,
    ReportSection,
    SubmissionResult,
    TaskPage,
)

#: Export formats every campaign has (rows of judgements, edits and scores); protocols add their own.
SHARED_EXPORT_FORMATS = ("jsonl", "csv", "parquet")


def protocol_for(kind: str) -> Protocol:
    """The protocol of a campaign kind (one stateless instance per kind)."""
    if kind not in PROTOCOLS:
        raise ValueError(f"no protocol for campaign kind {kind!r}; expected one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[kind]


def all_protocols() -> list[Protocol]:
    """The registered protocols, in the order their apps are installed."""
    return list(PROTOCOLS.values())


def kinds_of_family(family: str) -> list[str]:
    """The campaign kinds whose pages live under one family's URLs (e.g. both BUMP tasks under ``bump``)."""
    return [p.kind for p in all_protocols() if p.family == family]


def dataset_formats() -> dict[str, tuple[DatasetFormat, str]]:
    """Every dataset import format -> (format, the kind a campaign created by it gets when none is named)."""
    found: dict[str, tuple[DatasetFormat, str]] = {}
    for protocol in all_protocols():
        for name, fmt in protocol.dataset_formats.items():
            found.setdefault(name, (fmt, protocol.kind))
    return found


def export_formats() -> tuple[str, ...]:
    """Every export format: the protocols' own, then the shared row formats."""
    own = [name for p in all_protocols() for name in p.export_formats]
    return tuple(dict.fromkeys(own)) + SHARED_EXPORT_FORMATS


def protocol_url_modules() -> list[str]:
    """The URL modules of the registered protocols, each once."""
    return list(dict.fromkeys(p.urls_module for p in all_protocols() if p.urls_module))


def protocol_api_url_modules() -> list[str]:
    """The REST URL modules of the registered protocols, each once."""
    return list(dict.fromkeys(p.api_urls_module for p in all_protocols() if p.api_urls_module))


def report_records(campaign) -> dict[str, ReportRecords]:
    """Every registered protocol's answer rows in ``campaign`` the report counts, by name, each name once (the
    kinds of one family share their answers), in registry order."""
    found: dict[str, ReportRecords] = {}
    for protocol in all_protocols():
        for name, records in protocol.report_records(campaign).items():
            found.setdefault(name, records)
    return found


def pair_verdicts(campaign) -> dict[int, str | None]:
    """The registered protocols' review verdicts on the minimal pairs their answers wrote in ``campaign``
    (``Protocol.pair_verdicts``), each implementation asked once (the kinds of one family share their answers)."""
    verdicts: dict[int, str | None] = {}
    asked = set()
    for protocol in all_protocols():
        implementation = type(protocol).pair_verdicts
        if implementation not in asked:
            asked.add(implementation)
            verdicts.update(protocol.pair_verdicts(campaign))
    return verdicts


def written_summaries() -> list:
    """The registered protocols' queries of the summaries their answers wrote (``Protocol.written_summaries``),
    each distinct query once."""
    found: dict[tuple, object] = {}
    for protocol in all_protocols():
        query = protocol.written_summaries()
        if query is not None:
            sql, params = query.query.sql_with_params()
            found.setdefault((sql, tuple(params)), query)
    return list(found.values())


def export_parts() -> tuple[str, ...]:
    """Every protocol's export parts that can be asked for alone (``file=``)."""
    return tuple(dict.fromkeys(part for p in all_protocols() for part in p.export_parts))


def format_misfit(fmt: str, kind: str) -> str | None:
    """Why ``fmt`` cannot export a campaign of ``kind``, or None when it can."""
    protocol = protocol_for(kind)
    if fmt in SHARED_EXPORT_FORMATS or fmt in protocol.export_formats:
        return None
    what = next((p.export_formats[fmt] for p in all_protocols() if fmt in p.export_formats), f"the unknown format {fmt!r}")
    return (
        f"format={fmt} writes {what}, which a {kind} campaign does not have; "
        f"formats for a {kind} campaign: {', '.join(formats_for(kind))}"
    )


def formats_for(kind: str) -> list[str]:
    return [*protocol_for(kind).export_formats, *SHARED_EXPORT_FORMATS]


def answer_row_kinds() -> tuple[str, ...]:
    """Every row kind the registered protocols' answers add to the shared row exports, each once."""
    return tuple(dict.fromkeys(name for p in all_protocols() for name in p.answer_row_kinds))


def layout_row_owners() -> dict[str, Protocol]:
    """Each published row kind that answers fill (``annotate.exporters.tabular.LAYOUT_ANSWER_KINDS``) -> the first
    registered protocol declaring it in ``layout_row_kinds`` (kinds of one family share their answers' rows)."""
    owners: dict[str, Protocol] = {}
    for protocol in all_protocols():
        for kind in protocol.layout_row_kinds:
            owners.setdefault(kind, protocol)
    return owners


def answer_columns(kind: str) -> tuple[str, ...]:
    """The columns a campaign kind's answer rows add to the shared ones, in the protocol's order."""
    return tuple(dict.fromkeys(column for rows in protocol_for(kind).answer_row_kinds.values() for column in rows.columns))


__all__ = [
    "PROTOCOLS", "AnswerRows", "DatasetFormat", "ExportStream", "GoldTally", "Protocol", "QualificationForm", "ReportRecords",
    "ReportSection", "SubmissionResult", "TaskPage", "all_protocols", "answer_columns", "answer_row_kinds", "dataset_formats",
    "export_formats", "export_parts", "format_misfit", "formats_for", "kinds_of_family", "layout_row_owners", "pair_verdicts", "protocol_api_url_modules",
    "protocol_for", "protocol_url_modules", "report_records", "written_summaries",
]
