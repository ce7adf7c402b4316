"""Errors shared by the scorers and the text tools they use (a leaf module: it imports nothing)."""
from __future__ import annotations


class ScorerError(RuntimeError):
    """A scorer cannot run (missing weights or data, bad configuration); the message says what to do."""
