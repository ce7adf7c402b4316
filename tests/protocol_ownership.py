"""What a protocol package owns, and which lines outside it name it: the check that a protocol is one package
and one registry line (used by each protocol's own test)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Prose and data may mention a protocol (docs pointing to an example); code and configuration may not.
NOT_CODE = frozenset({".md", ".txt", ".json", ".jsonl", ".csv"})


def tree_files() -> list[str]:
    """The repository's files as git sees them: tracked, and untracked ones not ignored."""
    return subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.splitlines()


def package_files(package: str) -> set[str]:
    """The files under ``package`` (a folder relative to the repository, e.g. "annotate/spans"), relative to it."""
    prefix = package.rstrip("/") + "/"
    return {f.removeprefix(prefix) for f in tree_files() if f.startswith(prefix) and "__pycache__" not in f}


def lines_naming(names: re.Pattern, package: str, *, skip: re.Pattern | None = None) -> list[str]:
    """``"path: line"`` for each line of code or configuration outside ``package`` that matches ``names``
    (files matching ``skip`` left out)."""
    prefix = package.rstrip("/") + "/"
    found = []
    for name in tree_files():
        path = REPO / name
        if name.startswith(prefix) or (skip is not None and skip.search(name)) or path.suffix in NOT_CODE or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{name}: {line.strip()}" for line in text.splitlines() if names.search(line)]
    return found
