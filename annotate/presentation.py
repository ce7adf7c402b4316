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
from collections.abc import Collection, Iterable, Sequence
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
        elif _CLITIC.match(token.replace("’", "'")) or _CLOSING_PUNCT.match(token):
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


# Small words that join the capitalised words of one name ("Royal Bank of Scotland", "Game of Thrones").
_NAME_JOINERS = frozenset({"of", "the", "de", "da", "del", "der", "di", "du", "la", "le", "van", "von", "for", "al", "el", "bin"})
#: The longest name (in words) whose casing is kept as a phrase.
MAX_NAME_WORDS = 6


@lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """spaCy's English stop words ("will", "more", "down"): common words whatever an article does with them.
    Imported when first needed: spaCy costs seconds to import and only pages being prepared need it."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


_OPENS_QUOTE_OR_CLAUSE = re.compile(r"[:‘“\"(]|(?:^|\s)'")


def _bare(word: str) -> str:
    """The word without a sentence's full stop ("Scotland." -> "Scotland"; "U.S." keeps its dots)."""
    return word[:-1] if word.endswith(".") and word.count(".") == 1 and len(word) > 1 else word


def _name_runs(sentence: str, matches: Sequence[re.Match]) -> list[list[int]]:
    """Indexes of the words of each name in the sentence: capitalised words separated by a space only, with
    joiners ("of", "de") between two of them; a name has two capitalised words or more."""
    runs: list[list[int]] = []
    current: list[int] = []
    for index, match in enumerate(matches):
        word = match.group(0)
        # ``current`` ends with the word before this one: is this one separated from it by one space only?
        follows = bool(current) and sentence[matches[index - 1].end():match.start()] == " "
        if word[:1].isupper():
            if not follows:
                runs.append(current)
                current = []
            current.append(index)
        elif follows and word.lower() in _NAME_JOINERS:
            current.append(index)
        else:
            runs.append(current)
            current = []
    runs.append(current)
    named = []
    for run in runs:
        while run and not matches[run[-1]].group(0)[:1].isupper():
            run = run[:-1]  # a name ends with a capitalised word ("Bank of" is not one)
        if sum(1 for i in run if matches[i].group(0)[:1].isupper()) >= 2:
            named.append(run)
    return named


def common_words(texts: Iterable[str]) -> set[str]:
    """Words a corpus writes in lower case mid-sentence more often than capitalised ("day", "police"): the
    corpus's casing model. Lower-cased texts (no capital at all) say nothing and are skipped."""
    lower: Counter = Counter()
    capitalised: Counter = Counter()
    for text in texts:
        if not any(ch.isupper() for ch in text):
            continue
        for sentence in _SENTENCE_BREAK.split(text):
            for match in list(_CASED_WORD.finditer(sentence))[1:]:
                word = _bare(match.group(0))
                if word.islower():
                    lower[_key(word)] += 1
                elif word[:1].isupper() and not word.isupper():
                    capitalised[_key(word)] += 1
    return {word for word, n in lower.items() if n >= 2 and n > capitalised[word]}


def casing_map(source: str | Sequence[str], common: Collection[str] = frozenset()) -> dict[str, str]:
    """Lower-cased word -> its casing in ``source`` (an article: text or lines), and lower-cased name -> the
    name as written ("royal bank of scotland" -> "Royal Bank of Scotland", up to ``MAX_NAME_WORDS`` words).

    Words right after a sentence start are not counted (their capital says nothing). Keys are whole words
    ("u.s.", "o'neill") and their letter runs ("kilmarnock" of "Kilmarnock’s"); a tie goes to the lower
    case, so a word is capitalised only when the article mostly does. A capital a word has only inside a
    name counts for the word alone only when the word is not a common one (the article writes it in lower
    case too, or it is a function word): the "Day" of "Anzac Day" or the "Police" of "Somerset Police"
    does not make "a day" or "a police officer" capitalised, while the "Locke" of "Gary Locke" stays a name.
    ``common``: words known to be common beyond this article (:func:`common_words` of its corpus), for the
    articles that never write them in lower case.
    """
    lines = [source] if isinstance(source, str) else list(source)
    alone: dict[str, Counter] = {}
    in_names: dict[str, Counter] = {}
    names: dict[str, Counter] = {}
    opening_names: dict[str, tuple[str, str]] = {}  # names that start a sentence: key -> (name, its first word)
    for line in lines:
        for sentence in _SENTENCE_BREAK.split(line):
            matches = list(_CASED_WORD.finditer(sentence))
            runs = _name_runs(sentence, matches)
            inside = {i for run in runs for i in run}
            for position, match in enumerate(matches):
                if position == 0 or _OPENS_QUOTE_OR_CLAUSE.search(sentence[matches[position - 1].end():match.start()]):
                    continue  # a capital after an opening quote or a colon says nothing either ("said: ‘They ...")
                word = match.group(0)
                target = in_names if position in inside and word[:1].isupper() else alone
                forms = [word] + (_LETTERS.findall(word) if not word.isalpha() else [])
                for form in forms:
                    target.setdefault(_key(form), Counter())[form.replace("’", "'")] += 1
            for run in runs:
                words = [_bare(matches[i].group(0)).replace("’", "'") for i in run]
                for start in range(len(run)):
                    for end in range(start + 2, min(len(run), start + MAX_NAME_WORDS) + 1):
                        part = words[start:end]
                        if not (part[0][:1].isupper() and part[-1][:1].isupper()):
                            continue
                        key = " ".join(_key(w) for w in part)
                        if run[start] == 0:
                            opening_names[key] = (" ".join(part), part[0])
                        else:
                            names.setdefault(key, Counter())[" ".join(part)] += 1
    stop_words = function_words()

    def is_common(key: str) -> bool:
        return key in stop_words or key in common or any(form.islower() for form in alone.get(key, ()))

    casing: dict[str, str] = {}
    for key in set(alone) | set(in_names):
        votes = Counter(alone.get(key, {}))
        if not is_common(key):
            votes.update(in_names.get(key, {}))
        if votes:
            casing[key] = max(votes.items(), key=lambda kv: (kv[1], kv[0].islower()))[0]
    for key, counts in names.items():
        casing[key] = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
    for key, (name, first) in opening_names.items():
        # A sentence's first word is in the name only when it is no common word ("PGA Tour", not "The Bar").
        if key not in casing and not is_common(_key(first)):
            casing[key] = name
    return casing


def truecase(sentence: str, casing: dict[str, str]) -> str:
    """The sentence with each name and word in its casing in ``casing`` (names first, the longest that
    fits; unknown words lower case, "i" as "I"), its first letter and that of every sentence in it upper case."""

    def word_case(word: str) -> str:
        whole = casing.get(_key(word))
        if whole is not None:
            return _same_apostrophes(whole, word)
        return _LETTERS.sub(lambda m: casing.get(m.group(0).lower(), "I" if m.group(0).lower() == "i" else m.group(0).lower()), word)

    matches = list(_CASED_WORD.finditer(sentence))
    # Every page with a trap truecases it: each word's key once, and how many words from each one on are
    # separated by single spaces (a name's words are), rather than both again for every candidate name.
    keys = [_key(_bare(m.group(0))) for m in matches]
    spaced = [1] * len(matches)
    for i in range(len(matches) - 2, -1, -1):
        if sentence[matches[i].end():matches[i + 1].start()] == " ":
            spaced[i] = spaced[i + 1] + 1
    cased: list[str | None] = [None] * len(matches)
    index = 0
    while index < len(matches):
        for size in range(min(MAX_NAME_WORDS, spaced[index]), 1, -1):
            group = matches[index:index + size]
            name = casing.get(" ".join(keys[index:index + size]))
            if name is None or len(name.split(" ")) != size:
                continue
            for offset, (form, match) in enumerate(zip(name.split(" "), group)):
                word = match.group(0)
                cased[index + offset] = _same_apostrophes(form, _bare(word)) + word[len(_bare(word)):]
            index += size
            break
        else:
            index += 1
    parts: list[str] = []
    last = 0
    for match, name_form in zip(matches, cased):
        parts.append(sentence[last:match.start()])
        parts.append(name_form if name_form is not None else word_case(match.group(0)))
        last = match.end()
    parts.append(sentence[last:])
    out = "".join(parts)
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
