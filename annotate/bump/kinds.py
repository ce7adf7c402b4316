"""BUMP's two campaign kinds (Ma et al., 2023): Task 1 asks for one error of a requested type of the taxonomy,
Task 2 for one factual error of any kind. Only the BUMP app and its tests name them; shared code reads kinds
from the registry (``annotate.kinds``)."""
from __future__ import annotations

#: Task 1: introduce exactly one error of the requested type.
TAXONOMY = "bump_taxonomy"
#: Task 2: introduce one factual error of any kind.
FREE = "bump_free"
