"""One presentation layer for every text a worker sees (articles, summaries, traps, tutorial material).

Corpora such as FRANK's come tokenised and lower-cased ("study 's author , dr kujala could n't ."). Shown
as is, every sentence that was *not* tokenised (a trap, a generated sentence) stands out. So everything a
worker reads goes through :func:`detokenize`, and an added sentence takes the style of the text it joins
(:func:`style_like`). Admin pages and exports keep the stored, raw text.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sacremoses import MosesDetokenizer

# PTB-style splits that Moses' English rules do not join back.
_NT = re.compile(r"(\w) (n['’]t)\b", re.IGNORECASE)
_OPEN_QUOTE = re.compile(r"([‘“]) ")
_CLOSE_QUOTE = re.compile(r" ([’”])")
_SPACE_BEFORE_PUNCT = re.compile(r" +([.,;:!?%)\]}])")
_SPACES = re.compile(r"\s+")
_FINAL_PUNCT = re.compile(r"[.!?…]+[\"'’”)]*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


@lru_cache(maxsize=1)
def _detokenizer() -> MosesDetokenizer:
    # Imported here: sacremoses compiles its regular expressions on import (0.2 s of every manage.py start).
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang="en")


@lru_cache(maxsize=20000)
def detokenize(text: str) -> str:
    """Readable text from a tokenised one: " 's" -> "'s", "could n't" -> "couldn't", " ." -> ".".

    Idempotent on ordinary text, so it is safe to apply to everything shown.
    """
    tokens = text.split()
    if not tokens:
        return ""
    out = _detokenizer().detokenize(tokens)
    out = _NT.sub(r"\1\2", out)
    out = _OPEN_QUOTE.sub(r"\1", out)
    out = _CLOSE_QUOTE.sub(r"\1", out)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    return _SPACES.sub(" ", out).strip()


def detokenize_all(texts: Iterable[str]) -> list[str]:
    return [detokenize(t) for t in texts]


def is_lower_cased(sentences: Sequence[str]) -> bool:
    """True when the text has no upper-case letter at all (a lower-cased corpus)."""
    return not any(ch.isupper() for s in sentences for ch in s)


def casing_map(source: str) -> dict[str, str]:
    """Lower-cased word -> its most frequent casing in ``source`` (sentence-initial words are not counted)."""
    counts: dict[str, Counter] = {}
    for sentence in re.split(r"(?<=[.!?])\s+", source):
        for position, match in enumerate(_WORD.finditer(sentence)):
            if position == 0:
                continue
            word = match.group(0)
            counts.setdefault(word.lower(), Counter())[word] += 1
    return {low: c.most_common(1)[0][0] for low, c in counts.items()}


def truecase(sentence: str, casing: dict[str, str]) -> str:
    """The sentence with each word in the casing ``casing`` knows (names capitalised), first letter upper."""
    out = _WORD.sub(lambda m: casing.get(m.group(0).lower(), m.group(0).lower()), sentence)
    return _capitalize_first(out)


def _capitalize_first(sentence: str) -> str:
    for i, ch in enumerate(sentence):
        if ch.isalpha():
            return sentence[:i] + ch.upper() + sentence[i + 1:]
    return sentence


def final_punctuation(sentence: str) -> str:
    match = _FINAL_PUNCT.search(sentence.rstrip())
    return match.group(0) if match else ""


def style_like(sentence: str, neighbours: Sequence[str], casing: dict[str, str]) -> str:
    """``sentence`` written in the style of the (already presented) sentences it is shown with.

    Spacing: detokenised like everything else. Casing: all lower-case when the neighbours are, otherwise
    true-cased with ``casing`` (a :func:`casing_map` of the article). Final punctuation: that of the last
    neighbour (none when it has none).
    """
    text = detokenize(sentence)
    if not neighbours:
        return text
    text = text.lower() if is_lower_cased(neighbours) else truecase(text, casing)
    body = _FINAL_PUNCT.sub("", text).rstrip(" ,;:-")
    return body + final_punctuation(neighbours[-1])
