"""The version stored pages and cached values carry: what the code does, not how its file is written."""
from __future__ import annotations

import doctest

from annotate import code_versions
from annotate.code_versions import code_version

RULE = '''"""A rule."""
import re


def words(text):
    """The words of ``text``."""
    return re.findall(r"\\w+", text)


class Counter:
    """Counts."""

    def count(self, text):
        """Only a docstring before the code."""
        return len(words(text))
'''


def test_docstring_examples():
    result = doctest.testmod(code_versions)
    assert result.attempted > 0 and result.failed == 0


def test_comments_docstrings_and_layout_keep_the_version_and_code_changes_it(tmp_path):
    def version_of(source: str) -> str:
        path = tmp_path / "rule.py"
        path.write_text(source, encoding="utf-8")
        return code_version(path)

    written = version_of(RULE)
    reworded = RULE.replace('"""The words of ``text``."""', '"""Every word of ``text``, in order.\n\n    Examples: none."""')
    commented = RULE.replace("import re\n", "import re  # the standard library's\n\n# Rules follow.\n")
    reflowed = RULE.replace("return len(words(text))", "return len(\n            words(text)\n        )")
    assert version_of(reworded) == version_of(commented) == version_of(reflowed) == written
    # A function left with a docstring alone differs from one that does something.
    assert version_of(RULE.replace('        return len(words(text))\n', '')) != written
    for changed in (RULE.replace("\\w+", "\\S+"), RULE.replace("len(", "sum(1 for _ in "),
                    RULE.replace("def count(self, text)", "def count(self, text, limit=None)")):
        assert changed != RULE and version_of(changed) != written


def test_the_order_and_set_of_sources_count(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("A = 1\n", encoding="utf-8")
    second.write_text("B = 2\n", encoding="utf-8")
    assert code_version(first, second) != code_version(second, first)
    assert code_version(first, second) != code_version(first)
    assert len(code_version(first, length=12)) == 12
