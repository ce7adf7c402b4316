"""Idempotent writes shared by every importer: each helper finds a row by its natural key or creates it.

Speed at research scale (docs/benchmarks.md): the natural keys already in the campaign are read once per
import instead of one query per record; rows nothing else refers to (items, traps, judgements, metric
scores) are buffered and written in bulk, metric scores through ``COPY`` and one ``INSERT ... ON CONFLICT``
on PostgreSQL. Everything still runs inside the caller's transaction, so a refused import stores nothing.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from annotate.models import (
    Campaign,
    Document,
    Item,
    JudgementSource,
    MetricScore,
    MetricSource,
    SentenceJudgement,
    Summary,
    Trap,
    Worker,
)
from annotate.nlp import split_sentences_many
from annotate.protocols import protocol_for

from .base import ImportFailed, ImportReport, RecordReader
from .errors import RecordProblems
from .fields import check_model_values

IMPORTED_CONFIG = "imported"
# Rows buffered before a bulk write: large enough to amortise a round trip, small enough for flat memory.
FLUSH_ROWS = 20_000
BULK_BATCH = 2_000


class SentenceCache:
    """Sentence splits of one import: spaCy runs once per distinct text, in ``nlp.pipe`` batches."""

    def __init__(self) -> None:
        self._splits: dict[str, list[str]] = {}

    def prime(self, texts: Iterable[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._splits))
        if missing:
            self._splits.update(zip(missing, split_sentences_many(missing)))

    def split(self, text: str) -> list[str]:
        if text not in self._splits:
            self.prime([text])
        return self._splits[text]

    def clear(self) -> None:
        self._splits.clear()


class Store:
    """Writes of one import run into one campaign, counting what was created and what existed.

    Call :meth:`flush` before the transaction ends (``annotate.services.imports`` does).
    """

    def __init__(self, campaign: Campaign, report: ImportReport):
        self.campaign = campaign
        self.protocol = protocol_for(campaign.kind)
        self.report = report
        self.problems = RecordProblems()  # wrong records, all named before the import is refused
        self.sentences = SentenceCache()
        self._workers: dict[tuple[str, str], Worker] = {}
        self._documents: dict[str, Document] | None = None
        self._summaries: dict[tuple[int, str], Summary] | None = None
        self._edited: dict[tuple[int, str], Summary] | None = None
        self._traps: set[tuple[int, str, str]] | None = None
        self._items: set[tuple[int, int | None, str]] | None = None
        self._next_position = 0
        self._summary_ids: set[int] | None = None
        self._summary_keys: dict[tuple[str, str], int] | None = None
        self._new_items: list[Item] = []
        self._new_traps: list[Trap] = []
        self._judgements: dict[tuple[int, int, int], tuple[bool, list[str]]] = {}
        self._scores: dict[tuple[int, str, str], float] = {}
        self._seen: dict[tuple[str, tuple], tuple[bytes, str]] = {}  # (kind, natural key) -> (text, where first read)
        self._met: set[tuple[str, tuple]] = set()  # rows this import met: meeting one again is a repeat
        self._metrics_checked: set[str] = set()  # metric names found within their field's length
        self.document_ids: set[int] = set()  # documents this import read (created or met again)

    def _check(self, model: type, values: dict[str, Any], origin: RecordReader | None, names: dict[str, str] | None = None) -> None:
        """Refuse a value its model field cannot store, naming the record and the field, before anything is written."""
        check_model_values(model, values, path=origin.path if origin else None, record=origin.index if origin else None, names=names)

    def _tally(self, kind: str, key: tuple, created: bool) -> None:
        """Count a row as created, as in the campaign before this import, or as repeated within this import."""
        repeated = (kind, key) in self._met
        self._met.add((kind, key))
        self.report.count(kind, created, repeated=repeated)

    def _same_content(
        self, kind: str, key: tuple, text: str, existing_text: Callable[[], str] | None, origin: RecordReader | None, field: str
    ) -> None:
        """Refuse a second record with the same id and a different text, naming both records.

        A re-import of the same content is fine (idempotent); a different text under an existing id would
        silently attach summaries to the wrong article.
        """
        label = f"{Path(origin.path).name}, record {origin.index}" if origin is not None else "this import"
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        first = self._seen.setdefault((kind, key), (digest, label))
        if first[0] != digest:
            error = f"{kind} {key[-1]!r} was already read with a different text at {first[1]}"
        elif existing_text is not None and first[1] == label and existing_text() != text:
            error = f"{kind} {key[-1]!r} is already in campaign '{self.campaign.slug}' with a different text"
        else:
            return
        raise ImportFailed(error, path=origin.path if origin else None, record=origin.index if origin else None, field=field)

    # -- rows other rows refer to: found in a per-import map, created one by one -------------------------

    def _document_map(self) -> dict[str, Document]:
        if self._documents is None:
            self._documents = {
                d.external_id: d for d in Document.objects.filter(campaign=self.campaign).only("id", "external_id", "campaign_id")
            }
        return self._documents

    def document(self, external_id: str, *, origin: RecordReader | None = None, id_field: str = "id", **fields: Any) -> Document:
        self._check(Document, {"external_id": external_id, **fields}, origin, {"external_id": id_field})
        doc = self._document_map().get(external_id)
        created = doc is None
        if created:
            doc = Document.objects.create(campaign=self.campaign, external_id=external_id, **_resolve(fields))
            self._documents[external_id] = doc
        if "text" in fields:
            # an existing row's text (deferred) is read only the first time this import meets the id
            self._same_content("document", (external_id,), fields["text"], None if created else (lambda: doc.text), origin, id_field)
        self._tally("documents", (external_id,), created)
        self.document_ids.add(doc.pk)
        return doc

    def has_document(self, external_id: str) -> bool:
        """Whether the campaign holds the document already (importers skip its sentence split then)."""
        return external_id in self._document_map()

    def _load_summaries(self) -> None:
        self._summaries, self._edited = {}, {}
        rows = Summary.objects.filter(document__campaign=self.campaign).only(
            "id", "document_id", "system", "edited_from_id", "external_id", "human_scores", "text"
        )
        for s in rows:
            if s.edited_from_id is None:
                self._summaries[(s.document_id, s.system)] = s
            else:
                self._edited[(s.edited_from_id, s.external_id)] = s

    def summary(
        self, document: Document, system: str, *, origin: RecordReader | None = None, system_field: str = "system", **fields: Any
    ) -> Summary:
        self._check(Summary, {"system": system, **fields}, origin, {"system": system_field})
        if self._summaries is None:
            self._load_summaries()
        summary = self._summaries.get((document.pk, system))
        created = summary is None
        if created:
            summary = Summary.objects.create(document=document, system=system, edited_from=None, **_resolve(fields))
            self._summaries[(document.pk, system)] = summary
        if "text" in fields:
            self._same_content(
                "summary", (document.external_id, system), fields["text"], None if created else (lambda: summary.text), origin, "system"
            )
        if not created and fields.get("human_scores") and summary.human_scores != fields["human_scores"]:
            summary.human_scores = fields["human_scores"]
            summary.save(update_fields=["human_scores"])
        self._tally("summaries", (document.pk, system), created)
        return summary

    def edited_summary(
        self, source: Summary, external_id: str, *, origin: RecordReader | None = None, id_field: str = "id", **fields: Any
    ) -> Summary:
        self._check(Summary, {"external_id": external_id, **fields}, origin, {"external_id": id_field})
        if self._edited is None:
            self._load_summaries()
        summary = self._edited.get((source.pk, external_id))
        created = summary is None
        if created:
            summary = Summary.objects.create(
                document_id=source.document_id, edited_from=source, external_id=external_id, **_resolve(fields)
            )
            self._edited[(source.pk, external_id)] = summary
        self._tally("summaries", (source.pk, "edit", external_id), created)
        return summary

    def worker(self, provider: str, external_id: str, *, origin: RecordReader | None = None, field: str = "worker") -> Worker:
        key = (provider, external_id)
        if key not in self._workers:
            self._check(Worker, {"provider": provider, "external_id": external_id}, origin, {"external_id": field})
            worker = Worker.objects.filter(provider=provider, external_id=external_id).first()
            created = worker is None
            if created:
                user = get_user_model().objects.create_user(username=f"{provider}-{external_id}"[:150])
                user.set_unusable_password()
                user.save(update_fields=["password"])
                worker = Worker.objects.create(user=user, provider=provider, external_id=external_id)
            self.report.count("workers", created)
            self._workers[key] = worker
        return self._workers[key]

    # -- rows nothing refers to during an import: buffered and written in bulk ---------------------------

    def trap(
        self, document: Document, code: str, text: str, expected_factual: bool, expected_category: str, *, origin: RecordReader | None = None
    ) -> None:
        self._check(Trap, {"code": code, "text": text, "expected_category": expected_category}, origin, {"code": "traps", "text": "traps"})
        if self._traps is None:
            self._traps = set(
                Trap.objects.filter(document__campaign=self.campaign).values_list("document_id", "code", "text")
            )
        key = (document.pk, code, text)
        created = key not in self._traps
        if created:
            self._traps.add(key)
            self._new_traps.append(
                Trap(document=document, code=code, text=text, expected_factual=expected_factual, expected_category=expected_category)
            )
        self._tally("traps", key, created)

    def item(self, document: Document, summary: Summary | None = None, requested_error_type: str = "") -> None:
        if self._items is None:
            rows = Item.objects.filter(campaign=self.campaign, for_experts=False).values_list(
                "document_id", "summary_id", "requested_error_type"
            )
            self._items = set(rows)
            self._next_position = Item.objects.filter(campaign=self.campaign).count()
        key = (document.pk, summary.pk if summary else None, requested_error_type)
        created = key not in self._items
        if created:
            self._items.add(key)
            self._new_items.append(
                Item(
                    campaign=self.campaign, document=document, summary=summary,
                    requested_error_type=requested_error_type, for_experts=False, position=self._next_position,
                )
            )
            self._next_position += 1
        self._tally("items", key, created)

    def items_for_document(self, document: Document) -> None:
        """The items the campaign's protocol makes of a document (FRANK: one per document)."""
        self.protocol.document_items(self, document)

    def items_for_reference(self, document: Document, reference: Summary) -> None:
        """The items the campaign's protocol makes of a reference summary (BUMP edits references)."""
        self.protocol.reference_items(self, document, reference)

    def judgement(self, summary: Summary, sentence_index: int, worker: Worker, factual: bool, categories: list[str]) -> None:
        # The first answer of a (summary, sentence, worker) wins, as get_or_create did.
        self._judgements.setdefault((summary.pk, sentence_index, worker.pk), (factual, categories))
        if len(self._judgements) >= FLUSH_ROWS:
            self._flush_judgements()

    def score(
        self, summary: Summary | int, metric: str, value: float, config_key: str = IMPORTED_CONFIG, *,
        origin: RecordReader | None = None, field: str = "metric",
    ) -> None:
        # Checked once per metric name (a million scores name a handful), the value only when it is not finite.
        if metric not in self._metrics_checked or not math.isfinite(value):
            self._check(MetricScore, {"metric": metric, "value": value}, origin, {"metric": field, "value": field})
            self._metrics_checked.add(metric)
        # The last value of a (summary, metric, config) wins, as update_or_create did.
        summary_id = summary if isinstance(summary, int) else summary.pk
        self._scores[(summary_id, metric, config_key)] = value
        if len(self._scores) >= FLUSH_ROWS:
            self._flush_scores()

    # -- lookups of score importers ----------------------------------------------------------------------

    def summary_id_in_campaign(self, summary_id: int) -> bool:
        if self._summary_ids is None:
            self._summary_ids = set(Summary.objects.filter(document__campaign=self.campaign).values_list("id", flat=True))
        return summary_id in self._summary_ids

    def summary_id_by_key(self, document_id: str, system: str) -> int | None:
        """The id of the unedited summary of ``system`` for the document ``document_id`` (external id)."""
        if self._summary_keys is None:
            rows = Summary.objects.filter(document__campaign=self.campaign, edited_from=None).values_list(
                "document__external_id", "system", "id"
            )
            self._summary_keys = {(doc, system): pk for doc, system, pk in rows}
        return self._summary_keys.get((document_id, system))

    # -- bulk writes ---------------------------------------------------------------------------------------

    def flush(self) -> None:
        if self._new_traps:
            Trap.objects.bulk_create(self._new_traps, batch_size=BULK_BATCH)
            self._new_traps = []
        if self._new_items:
            Item.objects.bulk_create(self._new_items, batch_size=BULK_BATCH)
            self._new_items = []
        self._flush_judgements()
        self._flush_scores()

    def _flush_judgements(self) -> None:
        if not self._judgements:
            return
        pending, self._judgements = self._judgements, {}
        summary_ids = {key[0] for key in pending}
        existing = set(
            SentenceJudgement.objects.filter(summary_id__in=summary_ids).values_list("summary_id", "sentence_index", "worker_id")
        )
        new = [
            SentenceJudgement(
                summary_id=s, sentence_index=i, worker_id=w, factual=factual, categories=categories, source=JudgementSource.IMPORTED
            )
            for (s, i, w), (factual, categories) in pending.items()
            if (s, i, w) not in existing
        ]
        SentenceJudgement.objects.bulk_create(new, batch_size=BULK_BATCH)
        self.report.created["judgements"] += len(new)
        self.report.existing["judgements"] += len(pending) - len(new)

    def _flush_scores(self) -> None:
        if not self._scores:
            return
        pending, self._scores = self._scores, {}
        if connection.vendor == "postgresql":
            created, updated = _upsert_scores_copy(pending)
        else:
            created, updated = _upsert_scores_orm(pending)
        self.report.created["metric scores"] += created
        self.report.existing["metric scores"] += updated


def _resolve(fields: dict[str, Any]) -> dict[str, Any]:
    """Field values given as callables (e.g. a sentence split) are computed only for rows being created."""
    return {name: value() if callable(value) else value for name, value in fields.items()}


def _upsert_scores_copy(rows: dict[tuple[int, str, str], float]) -> tuple[int, int]:
    """COPY the rows into a temporary table, then one upsert; returns (created, updated)."""
    table = MetricScore._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS factlab_import_scores "
            "(summary_id bigint, metric text, config_key text, value double precision) ON COMMIT DROP"
        )
        cursor.execute("TRUNCATE factlab_import_scores")
        with cursor.cursor.copy("COPY factlab_import_scores (summary_id, metric, config_key, value) FROM STDIN") as copy:
            for (summary_id, metric, config_key), value in rows.items():
                copy.write_row((summary_id, metric, config_key, value))
        cursor.execute(
            f"""
            WITH up AS (
                INSERT INTO {table} (summary_id, metric, config_key, value, source, job_id, created_at, updated_at)
                SELECT summary_id, metric, config_key, value, %s, NULL, %s, %s FROM factlab_import_scores
                ON CONFLICT (summary_id, metric, config_key)
                DO UPDATE SET value = EXCLUDED.value, source = EXCLUDED.source, updated_at = EXCLUDED.updated_at
                RETURNING (xmax = 0) AS inserted
            )
            SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
            """,
            [MetricSource.IMPORTED, timezone.now(), timezone.now()],
        )
        created, updated = cursor.fetchone()
    return created, updated


def _upsert_scores_orm(rows: dict[tuple[int, str, str], float]) -> tuple[int, int]:
    """The portable path (SQLite demo): count what exists, then ``bulk_create`` with ``update_conflicts``."""
    keys = set(rows)
    ids = list({key[0] for key in rows})
    existing = 0
    for start in range(0, len(ids), BULK_BATCH):
        for key in MetricScore.objects.filter(summary_id__in=ids[start:start + BULK_BATCH]).values_list("summary_id", "metric", "config_key"):
            existing += key in keys
    now = timezone.now()
    MetricScore.objects.bulk_create(
        [
            MetricScore(summary_id=s, metric=m, config_key=c, value=v, source=MetricSource.IMPORTED, created_at=now, updated_at=now)
            for (s, m, c), v in rows.items()
        ],
        batch_size=500,
        update_conflicts=True,
        unique_fields=["summary", "metric", "config_key"],
        update_fields=["value", "source", "updated_at"],
    )
    return len(rows) - existing, existing
