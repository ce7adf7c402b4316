"""A tqdm progress bar adapter for the import services' ``progress(done, total)`` callback."""
from __future__ import annotations

import sys

from tqdm import tqdm


class TerminalProgress:
    def __init__(self, description: str, enabled: bool = True):
        self.bar = tqdm(desc=description, unit="rec", file=sys.stderr, disable=not enabled, dynamic_ncols=True)

    def __call__(self, done: int, total: int | None) -> None:
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
