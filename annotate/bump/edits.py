"""Pure text logic of BUMP minimal-pair edits: word diff, word edit distance, inserted words, hints.

No Django, no spaCy: sentence counting is passed in as a function so these stay small and testable.
Text is compared on tokens, whatever its spacing: BUMP's summaries are tokenised ("1943 . Mary",
"could n't") and a worker's edit is not, so "1943 . Mary", "1943. Mary" and "1943.  Mary" are the same
tokens, and "could n't" is "couldn't". A token is a word (letters/digits, inner apostrophes and hyphens kept, "5,000" whole) or one
punctuation mark. The diff shows both; the edit distance counts words only, so an edit must change at
least one word. Words are compared exactly for the distance, and case- and punctuation-insensitively when
looking them up in the article. ``static/factlab/bump_task.js`` applies the same rule for the live diff.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from annotate.bump import taxonomy as bump_taxonomy

EQUAL, DELETE, INSERT = "equal", "delete", "insert"

# Function words tell nothing about where an inserted fact came from.
_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is was were are be been has have had it its this that "
    "these those as not no he she they his her their him them we our you your i".split()
)
_PUNCT = re.compile(r"^\W+|\W+$")
# A split clitic ("could n't", "Locke 's") belongs to the word before it.
_CLITIC = re.compile(r"\s+(?=(?:n['’]t|['’](?:s|re|ve|ll|d|m))(?![\w]))", re.IGNORECASE)
# Hyphenated compounds ("19-year-old", "co-owner") and numbers ("5,000", "1.9") are one word, as a person counts them.
_TOKEN = re.compile(r"\w+(?:['’\-]\w+|(?<=\d)[.,]\d+)*|[^\w\s]")
# Display spacing of a run of tokens: no space before closing marks, none after opening ones.
_NO_SPACE_BEFORE = re.compile(r"^[.,;:!?%)\]}’”…]$")
_NO_SPACE_AFTER = re.compile(r"^[(\[{‘“$£€]$")


def tokens(text: str) -> list[str]:
    """Words and punctuation marks of ``text``, independent of spacing (the unit of the diff)."""
    return _TOKEN.findall(_CLITIC.sub("", text))


def join_tokens(run: Sequence[str]) -> str:
    """Tokens of a diff run written as text ("made by Merck ." -> "made by Merck.", never "19 - year - old")."""
    out = ""
    open_straight: set[str] = set()  # a straight quote opens, the next one of its kind closes
    glue_next = False
    for index, token in enumerate(run):
        closing = bool(_NO_SPACE_BEFORE.match(token))
        opening = bool(_NO_SPACE_AFTER.match(token))
        if token in ("'", '"'):
            closing = token in open_straight
            opening = not closing
            open_straight ^= {token}
        if index and not closing and not glue_next:
            out += " "
        out += token
        glue_next = opening
    return out


def is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def words(text: str) -> list[str]:
    """The words of ``text``, punctuation left out (the unit of the edit distance)."""
    return [t for t in tokens(text) if is_word(t)]


def _alignment(a: Sequence[str], b: Sequence[str]) -> list[list[int]]:
    """Levenshtein table over tokens: ``d[i][j]`` = edits to turn ``a[:i]`` into ``b[:j]``."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            same = a[i - 1] == b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (0 if same else 1))
    return d


def word_edit_distance(reference: str, edited: str) -> int:
    """Word-level Levenshtein distance: insertions, deletions and substitutions of whole words.

    >>> word_edit_distance("the FDA approved it", "the FDA rejected it")
    1
    """
    a, b = words(reference), words(edited)
    return _alignment(a, b)[len(a)][len(b)]


def word_diff(reference: str, edited: str) -> list[tuple[str, str]]:
    """Minimal word-level diff as ``[(op, text), ...]`` with op ``equal``, ``delete`` or ``insert``.

    Over :func:`tokens` (words and punctuation). A substitution is a ``delete`` followed by an ``insert``;
    adjacent tokens with the same op are written as text (:func:`join_tokens`).

    >>> word_diff("made by Merck on Thursday", "made by Pfizer on Thursday")
    [('equal', 'made by'), ('delete', 'Merck'), ('insert', 'Pfizer'), ('equal', 'on Thursday')]
    """
    a, b = tokens(reference), tokens(edited)
    d = _alignment(a, b)
    ops: list[tuple[str, str]] = []
    i, j = len(a), len(b)
    while i > 0 or j > 0:
        if i > 0 and j > 0 and a[i - 1] == b[j - 1] and d[i][j] == d[i - 1][j - 1]:
            ops.append((EQUAL, a[i - 1]))
            i, j = i - 1, j - 1
        elif i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + 1:
            # Walking backwards: push the insert first so the forward order reads delete, insert.
            ops.append((INSERT, b[j - 1]))
            ops.append((DELETE, a[i - 1]))
            i, j = i - 1, j - 1
        elif j > 0 and d[i][j] == d[i][j - 1] + 1:
            ops.append((INSERT, b[j - 1]))
            j -= 1
        else:
            ops.append((DELETE, a[i - 1]))
            i -= 1
    ops.reverse()
    # Group runs: deletes of a changed span before its inserts, then join tokens of the same op.
    grouped: list[tuple[str, list[str]]] = []
    pending_del: list[str] = []
    pending_ins: list[str] = []

    def flush() -> None:
        if pending_del:
            grouped.append((DELETE, pending_del.copy()))
        if pending_ins:
            grouped.append((INSERT, pending_ins.copy()))
        pending_del.clear()
        pending_ins.clear()

    for op, token in ops:
        if op == EQUAL:
            flush()
            if grouped and grouped[-1][0] == EQUAL:
                grouped[-1][1].append(token)
            else:
                grouped.append((EQUAL, [token]))
        elif op == DELETE:
            pending_del.append(token)
        else:
            pending_ins.append(token)
    flush()
    return [(op, join_tokens(run)) for op, run in grouped]


def inserted_words(reference: str, edited: str) -> list[str]:
    """Words the edit brought in (the ``insert`` side of the diff, punctuation left out), in order."""
    return [token for op, text in word_diff(reference, edited) if op == INSERT for token in tokens(text) if is_word(token)]


def _norm(token: str) -> str:
    return _PUNCT.sub("", token.lower())


def highlight_inserted(article: str, inserted: Sequence[str]) -> list[tuple[str, bool]]:
    """The article as ``[(token, marked), ...]`` (whitespace tokens), marking every occurrence of an inserted
    content word (compared like :func:`edit_hints`), so a reviewer sees whether the edit took it from the
    article (intrinsic) or not (extrinsic)."""
    wanted = {w for w in (_norm(t) for t in inserted) if w and w not in _STOPWORDS}
    return [(token, bool(wanted) and _norm(token) in wanted) for token in article.split()]


@dataclass(frozen=True)
class EditHints:
    """Automatic hints for a reviewer; never used to refuse an edit."""

    #: True when every inserted content word occurs in the article, False when one does not, None when the
    #: edit inserted no content word (only deletions or function words).
    inserted_in_article: bool | None
    #: "intrinsic" (taken from the article), "extrinsic" (new information) or "" when unknown.
    likely_kind: str
    #: True when the likely kind contradicts the requested type (e.g. an "extrinsic" request with article words).
    disagrees: bool


def edit_hints(inserted: Sequence[str], article: str, requested_error_type: str = "") -> EditHints:
    """Hint whether an edit is intrinsic or extrinsic from where its inserted words come from.

    Content words (not function words, compared without case and surrounding punctuation) are looked up
    among the article's words. ``requested_error_type`` is a taxonomy code; types without the
    intrinsic/extrinsic distinction (coreference, other) or an empty type never disagree.
    """
    content = [w for w in (_norm(t) for t in inserted) if w and w not in _STOPWORDS]
    if not content:
        return EditHints(None, "", False)
    article_words = {_norm(t) for t in article.split()}
    in_article = all(w in article_words for w in content)
    kind = "intrinsic" if in_article else "extrinsic"
    requested = bump_taxonomy.BY_CODE.get(requested_error_type)
    disagrees = requested is not None and requested.intrinsic is not None and requested.intrinsic != in_article
    return EditHints(in_article, kind, disagrees)


def edit_problems(
    reference: str, edited: str, *, max_distance: int, count_sentences: Callable[[str], int]
) -> dict[str, str]:
    """Why ``edited`` is not an acceptable minimal edit of ``reference``: ``{field: message}``, empty if fine.

    Rules: not empty; changes at least one word (spacing and punctuation alone do not count); at most
    ``max_distance`` words changed; the same number of sentences (``count_sentences``).
    """
    if not edited.strip():
        return {"edited": "The edited summary is empty: change the summary instead of deleting it."}
    distance = word_edit_distance(reference, edited)
    if distance == 0:
        if tokens(edited) == tokens(reference):
            return {"edited": "The edited summary is the same as the original (spacing does not count): "
                    "change a word to introduce one error."}
        return {"edited": "The edit only changes punctuation: change at least one word to introduce one error."}
    if distance > max_distance:
        return {
            "edited": f"The edit changes {distance} words; keep it minimal (at most {max_distance} words changed, "
            "inserted or deleted). Do not rewrite the summary."
        }
    before, after = count_sentences(reference), count_sentences(edited)
    if before != after:
        what = "adds" if after > before else "removes"
        return {
            "edited": f"The edit {what} a sentence ({before} before, {after} after); change words inside the "
            "existing sentences instead."
        }
    return {}
