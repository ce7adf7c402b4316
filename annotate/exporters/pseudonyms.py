"""Stable, non-reversible worker pseudonyms for exports.

A pseudonym is a short HMAC-SHA256 of ``(campaign id, worker id)`` keyed with ``FACTLAB_PSEUDONYM_KEY`` (separate from ``SECRET_KEY``, required in production): stable for a
campaign (the same worker always gets the same id, so agreement can be computed), different across
campaigns (exports of two campaigns cannot be joined on workers), and not invertible without the key.
"""
from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

PSEUDONYM_HEX_CHARS = 12


def worker_pseudonym(campaign_id: int, worker_id: int, *, key: str | None = None) -> str:
    """The pseudonym of worker ``worker_id`` in campaign ``campaign_id``: ``"w"`` + 12 hex characters."""
    secret = (key if key is not None else settings.FACTLAB_PSEUDONYM_KEY).encode()
    digest = hmac.new(secret, f"factlab-worker:{campaign_id}:{worker_id}".encode(), hashlib.sha256).hexdigest()
    return "w" + digest[:PSEUDONYM_HEX_CHARS]


class WorkerNamer:
    """Maps worker ids to the names an export shows: pseudonyms, or (``reveal``, admins only) real ids.

    ``real_names`` maps worker id to ``"provider:external_id"`` or the username; it is only read when
    ``reveal`` is true. Pseudonyms are cached because a worker appears in many rows.
    """

    def __init__(self, campaign_id: int, *, reveal: bool = False):
        self.campaign_id = campaign_id
        self.reveal = reveal
        self._cache: dict[int, str] = {}

    def __call__(self, worker_id: int | None) -> str:
        if worker_id is None:
            return ""
        name = self._cache.get(worker_id)
        if name is None:
            name = self._real_name(worker_id) if self.reveal else worker_pseudonym(self.campaign_id, worker_id)
            if len(self._cache) < 100_000:  # bounded: memory stays flat on huge exports
                self._cache[worker_id] = name
        return name

    @staticmethod
    def _real_name(worker_id: int) -> str:
        from annotate.models import Worker

        row = Worker.objects.filter(pk=worker_id).values("provider", "external_id", "user__username").first()
        if row is None:
            return str(worker_id)
        if row["external_id"]:
            return f"{row['provider'] or 'local'}:{row['external_id']}"
        return row["user__username"]
