"""The file name of a FRANK article (``articles/<stem>.json``), for the exporter that writes it and the
importer that reads it.

FRANK names each article file by its hash (hex digits, or BBC's numeric ids), and those stay as they are.
Any other document id (one with '/', '..', spaces, non-ASCII letters, a Windows device name such as ``con``,
or over 64 characters) is never used as a path: its file is named by an ASCII slug of the id and a hash of
it, and the id itself travels inside the JSON records (``hash``). The name is safe on every file system
and the same id always gets the same name.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata

# Kept as it is: letters, digits, '_' and '-' (no '.', so no extension tricks), at most 64 characters, and
# not of the slug-and-hash form below (so a hashed name can never equal another id kept as it is).
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_HASHED = re.compile(r".*-[0-9a-f]{24}|[0-9a-f]{24}")
# Names Windows reserves for devices, whatever the extension.
_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}
SLUG_CHARS = 40


def article_stem(document_id: str) -> str:
    """The file name (without ``.json``) of the article of ``document_id``."""
    if _PLAIN.fullmatch(document_id) and not _HASHED.fullmatch(document_id) and document_id.upper() not in _DEVICES:
        return document_id
    ascii_id = unicodedata.normalize("NFKD", document_id).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ascii_id).strip("-")[:SLUG_CHARS].strip("-")
    digest = hashlib.sha256(document_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{slug}-{digest}" if slug else digest


def article_member(document_id: str) -> str:
    """The zip member name of the article of ``document_id``."""
    return f"articles/{article_stem(document_id)}.json"
