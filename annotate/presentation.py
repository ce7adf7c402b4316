"""One presentation layer for every text a worker or reviewer reads (articles, summaries, traps, edits).

Corpora such as FRANK's come tokenised and often lower-cased ("study 's author , dr kujala could n't .",
"`` american pie ''", "signed for # 1.9 m", "UNK"). Shown as is, the page reads like a prototype, and every
sentence that was *not* tokenised (a trap, a generated sentence) stands out. So everything shown goes
through :func:`present` (one text) or :func:`present_summary` (a summary's sentences, truecased from the
article), and an added sentence takes the style of the text it joins (:func:`style_like`). Admin pages and
exports keep the stored, raw text.

The rules, and only these, separate a shown text from its stored text:

- spaces that tokenisation put in are taken out ("author , dr" -> "author, dr", "could n't" -> "couldn't",
  "( today )" -> "(today)"); a space the source has is kept: only a token standing alone between spaces
  is joined, so "said: 'On average" and "a 'buffer'" stay as they are;
- tokenised quotes become proper pairs: ``\\`\\` x ''`` -> "“x”", ``\\` x '`` -> "‘x’", a standalone
  ``'`` or ``"`` opens or closes by turn; a closing quote glued to the next word gets its space back;
- ``#`` before an amount is the pound sign of CNN/DailyMail's tokenisation ("# 1.9 m" -> "£1.9m");
- ``UNK`` (a word the system could not produce) becomes the neutral :data:`UNKNOWN_WORD`;
- mojibake in the source (UTF-8 read as Windows-1252, e.g. "Â£50,000", "itâ€™s") is repaired with ftfy, and so
  is mojibake a corpus lower-cased afterwards ("â£50,000" in QAGS' XSum articles: "Â" lower-cased), which ftfy
  cannot see (:func:`repair_mojibake`);
- a lower-cased summary is truecased: each word takes its most frequent casing in the article, and every
  sentence starts with a capital (:func:`truecase`).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import ftfy

#: What a worker sees for a word the summarising system could not produce (its ``UNK`` token).
UNKNOWN_WORD = "[?]"

QUOTES = "'‘’\"“”`"
_UNK_TOKENS = {"UNK", "[UNK]", "<unk>", "<UNK>"}
_CLITIC = re.compile(r"^(?:'s|'re|'ve|'ll|'d|'m|n't|'t)[.,;:!?]*$", re.IGNORECASE)
_CLOSING_PUNCT = re.compile(r"^(?:[.,;:!?%)\]}]+|\.\.\.|…)$")
_OPENING_BRACKETS = {"(", "[", "{"}
_CURRENCY = {"$", "£", "€"}
_AMOUNT = re.compile(r"^\d[\d.,]*(?:m|bn|k|million|billion)?[.,;:!?)\]]*$", re.IGNORECASE)
_AMOUNT_SUFFIX = {"m", "bn", "k"}
_CLOSE_THEN_WORD = re.compile(r"([”’])(?=[^\W_])")
_CLOSE_DOUBLE_THEN_WORD = re.compile(r"”(?=[^\W_])")
_FINAL_PUNCT = re.compile(r"[.!?…]+[\"'’”)]*$")
# A word for casing: letters with inner apostrophes, dots or hyphens ("o'neill", "u.s.", "co-owner").
_CASED_WORD = re.compile(r"[^\W\d_]+(?:['’.\-][^\W\d_]+)*\.?")
_LETTERS = re.compile(r"[^\W\d_]+")
# A sentence ends after a word of two or more characters ("U.S. team" goes on).
_SENTENCE_BREAK = re.compile(r"(?<=[^\W_]{2}[.!?])[\"'’”)]*\s+")
_LONE_OPENING_QUOTE = re.compile(r"\s+(['‘\"“])$")


# A lower-cased lead character of UTF-8-as-Windows-1252 mojibake (À-Ï became à-ï) and its continuation
# characters (bytes 0x80-0xBF as Windows-1252 or Latin-1 shows them).
_LOWERED_MOJIBAKE = re.compile(
    "[\u00e0-\u00ef][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2020\u2021\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]{1,2}"
)


def _undo_lowered_mojibake(match: re.Match) -> str:
    raw = match.group(0)
    candidate = raw[0].upper() + raw[1:]
    for encoding in ("cp1252", "latin-1"):
        try:
            return candidate.encode(encoding).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    return raw  # not mojibake after all (e.g. "à" before a quote)


def repair_mojibake(text: str) -> str:
    """Text whose UTF-8 was decoded as Windows-1252 somewhere upstream, repaired; other text unchanged.

    Examples
    --------
    >>> repair_mojibake("he paid â£50,000, itâ€™s said")
    'he paid £50,000, it’s said'
    >>> repair_mojibake("déjà vu à la carte, naïve café £5")
    'déjà vu à la carte, naïve café £5'
    """
    if text.isascii():
        return text
    return _LOWERED_MOJIBAKE.sub(_undo_lowered_mojibake, ftfy.fix_encoding(text))


@lru_cache(maxsize=50000)
def present(text: str) -> str:
    """The text as a person would write it (see the module's rules; no casing change).

    Idempotent, and ordinary (untokenised) text comes back unchanged except for ``UNK`` and a ``#`` before
    an amount, so it is safe to apply to everything shown.
    """
    tokens = repair_mojibake(text).replace("\\'", "'").replace('\\"', '"').split()
    out: list[str] = []
    glue_next = False
    single_open = double_open = False
    currency_before = expect_suffix = False
    for index, token in enumerate(tokens):
        glue = glue_next
        glue_next = False
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        amount, currency_before = currency_before, False
        if token in _UNK_TOKENS:
            token = UNKNOWN_WORD
        elif token == "``" or token == "“":
            token, glue_next, double_open = "“", True, True
        elif token in ("''", '"', "”"):
            # Standalone: a closing quote if one is open (or nothing follows), otherwise an opening one.
            if token == "”" or (token == "''" and double_open) or (token != "''" and double_open) or not following:
                token, glue, double_open = "”", True, False
            else:
                token, glue_next, double_open = "“", True, True
        elif token == "`" or token == "‘":
            token, glue_next, single_open = "‘", True, True
        elif token in ("'", "’"):
            if single_open or not following or following[0] in QUOTES:
                token, glue, single_open = "’", True, False
            elif out and out[-1][-1:] in ("s", "S") and not any(t in ("'", "’") for t in tokens[index + 1:]):
                token, glue = "’", True  # a plural possessive split off by tokenisation ("the players ' union")
            else:
                token, glue_next, single_open = "‘", True, True
        elif _CLITIC.match(token.replace("’", "'")):
            glue = bool(out)
        elif _CLOSING_PUNCT.match(token):
            glue = bool(out)
        elif token in _OPENING_BRACKETS:
            glue_next = True
        elif token.lstrip("([") == "#" and _AMOUNT.match(following):
            token, glue_next, currency_before = token[:-1] + "£", True, True
        elif token in _CURRENCY and _AMOUNT.match(following):
            glue_next, currency_before = True, True
        elif expect_suffix and token.lower() in _AMOUNT_SUFFIX:
            glue = True  # "£ 1.9 m" -> "£1.9m"
        else:
            token = _inner_quotes(token)
        expect_suffix = amount
        if glue and out:
            out[-1] += token
        else:
            out.append(token)
    return " ".join(out)


def _inner_quotes(token: str) -> str:
    """Quotes inside a token: ``\\`\\``` opens, ``''`` closes after a character (opens before one), and a
    closing quote glued to the next word gets its space back ("honour''of" -> "honour” of")."""
    if "``" in token or "''" in token:
        token = token.replace("``", "“")
        token = re.sub(r"(?<=\S)''", "”", token)
        token = token.replace("''", "“")
        token = _CLOSE_THEN_WORD.sub(r"\1 ", token)
    elif "”" in token[:-1]:
        token = _CLOSE_DOUBLE_THEN_WORD.sub("” ", token)
    if "UNK" in token:
        token = re.sub(r"(?<![A-Za-z])UNK(?![A-Za-z])", UNKNOWN_WORD, token)
    return token


def detokenize(text: str) -> str:
    """:func:`present` (the name kept for callers that only need spacing and quotes)."""
    return present(text)


def present_article(lines: Sequence[str]) -> list[str]:
    """The article's lines as shown: :func:`present` each, with an opening quote left at a line's end
    (FRANK's sentence splitter leaves "... defense. '" before the quoted line) moved to the next line."""
    moved = list(lines)
    for i in range(len(moved) - 1):
        match = _LONE_OPENING_QUOTE.search(moved[i])
        if match:
            moved[i] = moved[i][: match.start()]
            moved[i + 1] = match.group(1) + moved[i + 1].lstrip()
    return [present(line) for line in moved]


_CAPTION_PREFIX = re.compile(r"^(?:Scroll down for video|Scroll down for videos?)\b\s*", re.IGNORECASE)


MAX_MERGED_LINES = 3


def article_paragraphs(shown: Sequence[str]) -> list[dict]:
    """How the (shown) article lines are laid out: ``[{"caption": bool, "lines": [indices]}]``.

    A line becomes its own paragraph (news sites write one or two sentences a paragraph), except that a
    quotation left open at a line's end carries on into the next line (unless that line opens a quotation
    itself, as every paragraph of a long quotation does). A line without final punctuation
    (an image caption, "Scroll down for video") is kept apart as a caption.
    """
    paragraphs: list[dict] = []
    open_quote = False
    for index, line in enumerate(shown):
        caption = not _FINAL_PUNCT.search(line.rstrip()) or bool(_CAPTION_PREFIX.match(line) and not line.rstrip().endswith("."))
        # A line opening a quotation starts its own paragraph (news style opens every quoted paragraph).
        starts_quote = line[:1] in "'‘\"“"
        # At most MAX_MERGED_LINES a paragraph: a quote mark miscounted (a plural possessive) never glues an article together.
        if (open_quote and not starts_quote and paragraphs and not caption and not paragraphs[-1]["caption"]
                and len(paragraphs[-1]["lines"]) < MAX_MERGED_LINES):
            paragraphs[-1]["lines"].append(index)
        else:
            paragraphs.append({"caption": caption, "lines": [index]})
        open_quote = _quote_left_open(line, open_quote)
    return paragraphs


def article_blocks(shown: Sequence[str]) -> list[dict]:
    """:func:`article_paragraphs` with the texts, for templates: ``[{"caption": bool, "sentences": [str]}]``."""
    return [{"caption": p["caption"], "sentences": [shown[i] for i in p["lines"]]} for p in article_paragraphs(shown)]


def _quote_left_open(line: str, already_open: bool) -> bool:
    depth = 1 if already_open else 0
    for match in re.finditer(r"(?:(?<=^)|(?<=\s))[‘“\"'](?=\w)|(?<=[\w.,!?])[’”\"'](?=\s|$|[.,;:!?])", line):
        mark = match.group(0)
        opening = mark in "‘“" or (match.start() == 0 or line[match.start() - 1].isspace())
        depth = depth + 1 if opening else max(depth - 1, 0)
    return depth > 0


def is_lower_cased(sentences: Sequence[str]) -> bool:
    """True when the text has no upper-case letter at all (a lower-cased corpus)."""
    return not any(ch.isupper() for s in sentences for ch in s)


def _key(word: str) -> str:
    return word.lower().replace("’", "'")


def casing_map(source: str | Sequence[str]) -> dict[str, str]:
    """Lower-cased word -> its most frequent casing in ``source`` (an article: text or lines).

    Words right after a sentence start are not counted (their capital says nothing). Keys are whole words
    ("u.s.", "o'neill") and their letter runs ("kilmarnock" of "Kilmarnock’s"); a tie goes to the lower
    case, so a word is capitalised only when the article mostly does.
    """
    lines = [source] if isinstance(source, str) else list(source)
    counts: dict[str, Counter] = {}
    for line in lines:
        for sentence in _SENTENCE_BREAK.split(line):
            for position, match in enumerate(_CASED_WORD.finditer(sentence)):
                if position == 0:
                    continue
                word = match.group(0)
                forms = [word] + (_LETTERS.findall(word) if not word.isalpha() else [])
                for form in forms:
                    counts.setdefault(_key(form), Counter())[form.replace("’", "'")] += 1
    return {low: max(c.items(), key=lambda kv: (kv[1], kv[0].islower()))[0] for low, c in counts.items()}


def truecase(sentence: str, casing: dict[str, str]) -> str:
    """The sentence with each word in its casing in ``casing`` (unknown words lower case, "i" as "I"),
    its first letter and that of every sentence in it upper case."""

    def word_case(match: re.Match) -> str:
        word = match.group(0)
        whole = casing.get(_key(word))
        if whole is not None:
            return _same_apostrophes(whole, word)
        return _LETTERS.sub(lambda m: casing.get(m.group(0).lower(), "I" if m.group(0).lower() == "i" else m.group(0).lower()), word)

    out = _CASED_WORD.sub(word_case, sentence)
    return "".join(_capitalize_first(part) for part in re.split(f"({_SENTENCE_BREAK.pattern})", out))


def _same_apostrophes(cased: str, original: str) -> str:
    return "".join(o if o in "'’" else c for c, o in zip(cased, original)) if len(cased) == len(original) else cased


def _capitalize_first(sentence: str) -> str:
    if sentence.lstrip(" ‘“'\"(").startswith(UNKNOWN_WORD):
        return sentence  # the placeholder is the sentence's first word
    for i, ch in enumerate(sentence):
        if ch.isalpha():
            return sentence[:i] + ch.upper() + sentence[i + 1:]
        if ch.isdigit():
            return sentence
    return sentence


def present_summary(sentences: Sequence[str], casing: dict[str, str]) -> list[str]:
    """A summary's sentences as shown: :func:`present` each, truecased with the article's ``casing``
    (a :func:`casing_map`) when the whole summary is lower case; in a cased summary only a sentence's first
    letter is made upper case (systems such as BART start some sentences in lower case)."""
    shown = [present(s) for s in sentences]
    if shown and is_lower_cased(shown):
        return [truecase(s, casing) for s in shown]
    return [_capitalize_first(s) for s in shown]


def final_punctuation(sentence: str) -> str:
    match = _FINAL_PUNCT.search(sentence.rstrip())
    return match.group(0) if match else ""


def style_like(sentence: str, neighbours: Sequence[str], casing: dict[str, str]) -> str:
    """``sentence`` written in the style of the (already presented) sentences it is shown with.

    Spacing, quotes, amounts and unknown words: :func:`present`, like everything else. Casing: all lower
    case when the neighbours are, otherwise true-cased with ``casing`` (a :func:`casing_map` of the
    article), so a trap in a truecased summary is truecased the same way. Final punctuation: that of the
    last neighbour (none when it has none).
    """
    text = present(sentence)
    if not neighbours:
        return text
    text = text.lower().replace(UNKNOWN_WORD.lower(), UNKNOWN_WORD) if is_lower_cased(neighbours) else truecase(text, casing)
    body = _FINAL_PUNCT.sub("", text).rstrip(" ,;:-")
    return body + final_punctuation(neighbours[-1])
