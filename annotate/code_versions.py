"""Versions of the code whose output is stored or cached (prepared pages, entity pools, casing models, relevance).

A stored value names the version of the code that computed it, so that changed rules compute again instead of
serving what the old rules said. The version is a digest of what the code *does*: the syntax tree of each
module's source, without comments, docstrings, blank lines or layout. Hashing the files' bytes made a comment or
a reworded docstring as costly as a changed rule: every stored page of every campaign out of date at once, each
prepared again (spaCy included) by the first claim that read it, inside the request. The tree is written as the
running Python writes it, so an upgrade of Python may change every version once (the pages are then prepared again
in the background: ``annotate.services.page_preparations.queue_out_of_date_preparations``).
"""
from __future__ import annotations

import ast
import hashlib
from pathlib import Path
from types import ModuleType

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                # A body needs a statement: a function that is only a docstring keeps an empty string in its place.
                node.body = node.body[1:] or [ast.Expr(ast.Constant(""))]
    return tree


def source_behaviour(source: str) -> str:
    """The syntax tree of Python ``source`` without comments, docstrings or layout, as text.

    Examples
    --------
    >>> source_behaviour("def f(x):\\n    '''Double.'''\\n    return 2 * x  # why\\n") == source_behaviour("def f(x): return 2*x")
    True
    >>> source_behaviour("def f(x): return 2 * x") == source_behaviour("def f(x): return 3 * x")
    False
    """
    return ast.dump(_without_docstrings(ast.parse(source)))


def code_version(*sources: ModuleType | Path, length: int = 16) -> str:
    """A digest of what ``sources`` (modules or ``.py`` files, in order) do: it changes when their code changes and
    not when only their comments, docstrings or layout do.

    Examples
    --------
    >>> import annotate.code_versions as this
    >>> len(code_version(this)), code_version(this) == code_version(Path(this.__file__))
    (16, True)
    """
    digest = hashlib.sha1()
    for source in sources:
        path = Path(source.__file__) if isinstance(source, ModuleType) else Path(source)
        digest.update(source_behaviour(path.read_text(encoding="utf-8")).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:length]
