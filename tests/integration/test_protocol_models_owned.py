"""The shared code reaches FRANK's and BUMP's own models only through the protocol interface: no shared module
names them, their relations from shared models or the assignment columns they replaced (a shared module that
did would break, or silently lose the data, once the protocol app is not installed)."""
from __future__ import annotations

import re

from tests.protocol_ownership import REPO, tree_files

#: The shared code: every package but the protocol apps; the shared app's migrations are history (they created
#: the columns and the edit table before the protocol apps took them over).
SHARED = re.compile(r"^(annotate|metrics_service|factlab|taxonomies)/")
PROTOCOL_APPS = re.compile(r"^annotate/(frank|bump|spans)/|^annotate/migrations/")
CODE = (".py", ".html", ".js")
NAMES = re.compile(
    r"annotate[./](bump|frank)[./]models"
    r"|\b(Edit|Checkpoint|EntityAnswer)\.(objects|_meta|DoesNotExist)|models\.(Edit|Checkpoint|EntityAnswer)\b"
    r"|^\s*from \S+ import .*\b(Edit|Checkpoint|EntityAnswer)\b|^\s+(Edit|Checkpoint|EntityAnswer),$"
    r"|get_model\([\"'](bump|frank)[\"']"
    r"|checkpoint_code|entity_correct|entity_choice|entity_answer|\bedit_record(\b|__)|received_edits|__edit__|\"edit__",
)


def shared_lines_naming_protocol_models() -> list[str]:
    found = []
    for name in tree_files():
        if not SHARED.search(name) or PROTOCOL_APPS.search(name) or not name.endswith(CODE):
            continue
        path = REPO / name
        if path.is_file():
            found += [f"{name}: {line.strip()}" for line in path.read_text(encoding="utf-8").splitlines() if NAMES.search(line)]
    return found


def test_shared_code_names_no_model_or_column_of_frank_or_bump():
    assert shared_lines_naming_protocol_models() == []


def test_the_check_finds_a_shared_line_naming_them():
    # The pattern catches the forms such a line takes (the test above would pass on a pattern that matched nothing).
    for line in ("from annotate.bump.models import Edit", "    Edit,", "Edit.objects.filter(x=1)", "a.checkpoint_code",
                 "assignment.entity_correct", 'apps.get_model("bump", "Edit")', 'Q(edit_record__isnull=True)'):
        assert NAMES.search(line), line
