"""Dataset and score importers. Use :func:`annotate.services.imports.import_dataset` as the entry point."""
from .base import ImportFailed, ImportReport

__all__ = ["ImportFailed", "ImportReport"]
