"""Pure text logic of BUMP minimal-pair edits: word diff, word edit distance, inserted words, hints.

No Django, no spaCy: sentence counting is passed in as a function so these stay small and testable.
Text is compared on tokens, whatever its spacing: BUMP's summaries are tokenised ("1943 . Mary",
"could n't") and a worker's edit is not, so "1943 . Mary", "1943. Mary" and "1943.  Mary" are the same
tokens, and "could n't" is "couldn't". A token is a word (letters/digits, inner apostrophes and hyphens kept, "5,000" whole) or one
punctuation mark. The diff shows both; the edit distance counts words only, so an edit must change at
least one word. Words are compared exactly for the distance, and case- and punctuation-insensitively when
looking them up in the article. ``bump/static/bump/task.js`` applies the same rule for the live diff.

Before the check both texts are normalised (:func:`comparable`): Unicode NFKC, invisible characters (zero-width
spaces, soft hyphens, direction marks) removed, letters of other alphabets that look like Latin ones mapped to
them, case folded. An edit must then change one place (:func:`change_problem`) by a real change: not only case,
a typo, punctuation inside a number or an article; and an edit that still types a look-alike letter is refused
(:func:`lookalike_letters`), so that the reviewer never sees identical-looking text as an edit. These rules
are the server's alone: the page's live diff shows the words as typed, and the page shows the refusal's reason.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from annotate.bump import lexicon
from taxonomies import bump as bump_taxonomy

EQUAL, DELETE, INSERT = "equal", "delete", "insert"

# Function words tell nothing about where an inserted fact came from.
_STOPWORDS = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but", "is", "was", "were", "are", "be", "been", "has", "have", "had", "it", "its", "this", "that", "these", "those", "as", "not", "no", "he", "she", "they", "his", "her", "their", "him", "them", "we", "our", "you", "your", "i"]
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


# ---------------------------------------------------------------- normalisation

# Characters a reader cannot see, by what the refusal calls them.
_INVISIBLE = {
    "\u00ad": "soft hyphen", "\u034f": "combining grapheme joiner", "\u180e": "Mongolian vowel separator",
    "\u200b": "zero-width space", "\u200c": "zero-width non-joiner", "\u200d": "zero-width joiner",
    "\u200e": "direction mark", "\u200f": "direction mark", "\u2060": "word joiner", "\ufeff": "zero-width no-break space",
    **{chr(c): "direction control" for c in range(0x202A, 0x202F)},
    **{chr(c): "direction control" for c in range(0x2066, 0x206A)},
    **{chr(c): "invisible operator" for c in range(0x2061, 0x2065)},
}
_STRIP_INVISIBLE = str.maketrans(dict.fromkeys(map(ord, _INVISIBLE)))
# Letters of other alphabets drawn like a Latin letter (after NFKC), each with that letter: Cyrillic, Greek,
# Armenian and Latin variants (Unicode's confusables for the Latin alphabet, the ones fonts draw alike).
LOOKALIKES = dict(zip(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u0501\u04bb\u051b\u051d\u04cf\u04af"  # Cyrillic small
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0405\u0406\u0408\u04ae\u051a\u051c\u04c0"  # capital
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"  # Greek capital
    "\u03bf\u03b9\u03bd\u03c5\u03c1\u03ba\u03f3\u03c3"  # Greek small
    "\u0585\u057d\u0570\u0578\u0131\u0251\u0261",  # Armenian, Latin variants
    "aeopcyxsijdhqwly" "ABEKMHOPCTXSIJYQWI" "ABEZHIKMNOPTYX" "oivupkjo" "ouhniag",
    strict=True,
))
_TO_LATIN = str.maketrans(LOOKALIKES)


def clean_edit(text: str) -> str:
    """An edit as it is stored: invisible characters removed, NFKC (full-width letters, ligatures become
    plain ones), whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text.translate(_STRIP_INVISIBLE)).split())


def comparable(text: str) -> str:
    """``text`` as the edit check compares it: :func:`clean_edit`, look-alike letters mapped to Latin, case folded."""
    return clean_edit(text).translate(_TO_LATIN).casefold()


def _script(ch: str) -> str:
    return unicodedata.name(ch, "?").split(" ", 1)[0]


def lookalike_letters(reference: str, edited: str) -> list[str]:
    """Words of ``edited`` (cleaned) that the reference does not have and that type a look-alike letter of
    another alphabet or mix alphabets ("Whеn" with a Cyrillic е): described for the worker."""
    known = set(tokens(clean_edit(reference)))
    found: list[str] = []
    for word in words(clean_edit(edited)):
        if word in known:
            continue
        letters = [ch for ch in word if ch.isalpha()]
        odd = [ch for ch in letters if ch in LOOKALIKES]
        if odd:
            ch = odd[0]
            found.append(f"{_script(ch).capitalize()} '{ch}' (looks like Latin '{LOOKALIKES[ch]}') in '{word}'")
        elif len({_script(ch) for ch in letters}) > 1:
            found.append(f"letters of several alphabets in '{word}'")
    return found


def ignored_differences(reference: str, edited: str) -> list[str]:
    """What the normalisation of :func:`comparable` took out of ``edited`` compared with ``reference``, named
    for the worker (invisible characters, character variants, look-alike letters, capitals)."""
    ignored: list[str] = []
    invisible = sorted({_INVISIBLE[ch] for ch in edited if ch in _INVISIBLE})
    if invisible:
        ignored.append("invisible characters (" + ", ".join(invisible) + ")")
    visible = edited.translate(_STRIP_INVISIBLE)
    if unicodedata.normalize("NFKC", visible) != visible:
        ignored.append("variants of the same character (full-width letters, ligatures and the like)")
    lookalikes = lookalike_letters(reference, edited)
    if lookalikes:
        ignored.append("letters of another alphabet that look like Latin ones (" + "; ".join(lookalikes[:3]) + ")")
    latin_ref, latin_edit = (tokens(clean_edit(t).translate(_TO_LATIN)) for t in (reference, edited))
    if latin_ref != latin_edit:
        pairs = [(r, e) for r, e in zip(latin_ref, latin_edit) if r != e]
        example = f" ('{pairs[0][1]}' for '{pairs[0][0]}')" if pairs else ""
        ignored.append(f"capital letters{example}")
    return ignored


# ---------------------------------------------------------------- one real change

#: Changed places separated by more than this many unchanged words are two changes, not one.
MAX_GAP_WORDS = 3
_ARTICLES = frozenset({"a", "an", "the"})


@dataclass
class Change:
    """One changed place of an edit: the words deleted from the reference and inserted by the edit."""

    deleted: list[str] = field(default_factory=list)
    inserted: list[str] = field(default_factory=list)

    def describe(self) -> str:
        before, after = " ".join(self.deleted), " ".join(self.inserted)
        if before and after:
            return f"'{before}' → '{after}'"
        return f"'{before}' deleted" if before else f"'{after}' inserted"


def changes(reference: str, edited: str) -> list[Change]:
    """The changed places of ``edited`` (compared as :func:`comparable`, words only, shown as typed): a run of
    changed words, where up to :data:`MAX_GAP_WORDS` unchanged words between two runs keep them one place."""
    shown_a, shown_b = words(clean_edit(reference).translate(_TO_LATIN)), words(clean_edit(edited).translate(_TO_LATIN))
    a, b = [w.casefold() for w in shown_a], [w.casefold() for w in shown_b]
    found: list[Change] = []
    gap = MAX_GAP_WORDS + 1
    for op, i, j in _aligned_ops(a, b):
        if op == EQUAL:
            gap += 1
            continue
        if gap > MAX_GAP_WORDS or not found:
            found.append(Change())
        (found[-1].deleted.append(shown_a[i]) if op == DELETE else found[-1].inserted.append(shown_b[j]))
        gap = 0
    return found


def _letters(run: Sequence[str]) -> str:
    return "".join(ch for word in run for ch in word.casefold() if ch.isalnum())


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _is_typo(old: str, new: str, is_known: Callable[[str], bool]) -> bool:
    """``new`` is ``old`` mistyped: at most two letters apart (and less than half the word) and not a word."""
    distance = _levenshtein(old.casefold(), new.casefold())
    return 0 < distance <= 2 and 2 * distance < len(old) and not is_known(new)


def change_problem(reference: str, edited: str, *, context: str = "") -> str:
    """Why the words ``edited`` changes are not one real change of ``reference``, or "" when they are.

    One real change: one changed place (two places swapping their words count as one), which is not only an
    article ("a", "an", "the"), not punctuation inside a word or number ("1,000" -> "1.000", "co-owner" ->
    "co owner") and not only typos (a word at most two letters from the one it replaces that is neither an
    English word (:mod:`annotate.bump.lexicon`) nor a word of ``context``, the article and the reference).
    """
    found = changes(reference, edited)
    if len(found) == 2 and found[0].deleted and found[0].inserted and (
        [w.casefold() for w in found[0].deleted], [w.casefold() for w in found[0].inserted]
    ) == ([w.casefold() for w in found[1].inserted], [w.casefold() for w in found[1].deleted]):
        found = [Change(found[0].deleted + found[1].deleted, found[0].inserted + found[1].inserted)]  # a swap
    if len(found) > 1:
        places = " and ".join(c.describe() for c in found[:3])
        return (f"The edit changes {len(found)} places far apart ({places}): introduce one error, in one place "
                f"(changed words at most {MAX_GAP_WORDS} words apart).")
    if not found:
        return ""
    change = found[0]
    if {w.casefold() for w in change.deleted + change.inserted} <= _ARTICLES:
        return f"The edit only changes an article ({change.describe()}): change a word that carries meaning."
    if _letters(change.deleted) == _letters(change.inserted):
        return (f"The edit only changes punctuation or spacing inside a word or number ({change.describe()}): "
                "change the number or the word itself.")
    context_words = {w.casefold() for w in words(comparable(context + " " + reference))}

    def known(word: str) -> bool:
        return word.casefold() in context_words or lexicon.is_english_word(word)

    if len(change.deleted) == len(change.inserted) and all(
        old.casefold() == new.casefold() or _is_typo(old, new, known) for old, new in zip(change.deleted, change.inserted)
    ):
        return (f"The edit looks like a typo ({change.describe()} is not a word): replace the word with another "
                "real word, or change something else.")
    return ""


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


def _aligned_ops(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int]]:
    """A minimal alignment of ``a`` to ``b`` as ``[(op, i, j), ...]`` in reading order: ``equal`` and
    ``delete`` name ``a[i]``, ``insert`` names ``b[j]``; a substitution reads delete, then insert."""
    d = _alignment(a, b)
    ops: list[tuple[str, int, int]] = []
    i, j = len(a), len(b)
    while i > 0 or j > 0:
        if i > 0 and j > 0 and a[i - 1] == b[j - 1] and d[i][j] == d[i - 1][j - 1]:
            ops.append((EQUAL, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + 1:
            # Walking backwards: push the insert first so the forward order reads delete, insert.
            ops.append((INSERT, i - 1, j - 1))
            ops.append((DELETE, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif j > 0 and d[i][j] == d[i][j - 1] + 1:
            ops.append((INSERT, i, j - 1))
            j -= 1
        else:
            ops.append((DELETE, i - 1, j))
            i -= 1
    ops.reverse()
    return ops


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
    ops = [(op, a[i] if op in (DELETE, EQUAL) else b[j]) for op, i, j in _aligned_ops(a, b)]
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
    reference: str, edited: str, *, max_distance: int, count_sentences: Callable[[str], int], context: str = "",
) -> dict[str, str]:
    """Why ``edited`` is not an acceptable minimal edit of ``reference``: ``{field: message}``, empty if fine.

    Rules, on the normalised texts (:func:`comparable`): not empty; changes at least one word (spacing,
    punctuation, case, invisible characters and look-alike letters alone do not count, and the refusal names
    what was ignored); types no look-alike letter of another alphabet; at most ``max_distance`` words changed;
    one real change (:func:`change_problem`, ``context`` being the article); the same number of sentences
    (``count_sentences``).
    """
    if not edited.strip() or not clean_edit(edited):
        return {"edited": "The edited summary is empty: change the summary instead of deleting it."}
    reference_words, edited_words = comparable(reference), comparable(edited)
    if tokens(edited_words) == tokens(reference_words):
        ignored = ignored_differences(reference, edited)
        if ignored:
            return {"edited": "The edit changes nothing once these are ignored: "
                    + "; ".join(ignored) + ". Change a word to introduce one error."}
        return {"edited": "The edited summary is the same as the original (spacing does not count): "
                "change a word to introduce one error."}
    lookalikes = lookalike_letters(reference, edited)
    if lookalikes:
        return {"edited": "The edit types letters of another alphabet that look like Latin ones ("
                + "; ".join(lookalikes[:3]) + "): type the words with Latin letters."}
    distance = word_edit_distance(reference_words, edited_words)
    if distance == 0:
        return {"edited": "The edit only changes punctuation: change at least one word to introduce one error."}
    if distance > max_distance:
        return {
            "edited": f"The edit changes {distance} words; keep it minimal (at most {max_distance} words changed, "
            "inserted or deleted). Do not rewrite the summary."
        }
    problem = change_problem(reference, edited, context=context)
    if problem:
        return {"edited": problem}
    before, after = count_sentences(reference), count_sentences(edited)
    if before != after:
        what = "adds" if after > before else "removes"
        return {
            "edited": f"The edit {what} a sentence ({before} before, {after} after); change words inside the "
            "existing sentences instead."
        }
    return {}
