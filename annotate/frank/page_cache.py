"""Cached parts of the FRANK task page: what depends only on texts is computed once, not per page load.

The relevance underlines of a summary (with or without its trap sentence) depend only on the article's
sentences, the summary's sentences, ``k`` and the rule in ``relevance.py``; they are cached under a hash
of exactly these (the rule by a hash of its source file), so a cached value can never be stale: an edited
text or a changed rule is a different key. The cache is Django's (Redis in production, shared by the
gunicorn workers).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from django.core.cache import cache

from annotate.code_versions import code_version
from annotate.frank import relevance

RULE_VERSION = code_version(relevance, length=12)
TIMEOUT_SECONDS = 7 * 24 * 3600


def relevant_sentences(article: Sequence[str], queries: Sequence[str], k: int) -> list[list[int]]:
    """:func:`annotate.frank.relevance.relevant_sentences`, computed once per distinct input."""
    digest = hashlib.sha1(json.dumps([RULE_VERSION, k, list(article), list(queries)]).encode()).hexdigest()
    key = f"frank:relevance:{digest}"
    value = cache.get(key)
    if value is None:
        value = relevance.relevant_sentences(article, queries, k)
        cache.set(key, value, TIMEOUT_SECONDS)
    return value
