"""What a serving process loads at start, never inside a request or a job.

``load_for_requests`` runs in gunicorn's master before it forks (gunicorn.conf.py); ``load_for_jobs`` in a
Celery worker before its pool starts (factlab/celery.py). Both leave the loaded modules and spaCy pipelines
to the forked processes, and both callers then call ``freeze_loaded_heap``.
"""
from __future__ import annotations


def load_for_jobs() -> None:
    """The spaCy pipelines of imports (sentence splits), page preparation (entities, traps) and scoring."""
    from annotate.nlp import load_pipelines
    from metrics_service.text import scoring_pipeline

    load_pipelines()
    scoring_pipeline()


def load_for_requests() -> None:
    """Every view module (the URL conf), the Celery task modules (a submit or an import sends a job, and
    sending one imports its module: the reports' statistics with it, scikit-learn and scipy included), the
    spaCy pipelines that claims and submits use, and what every first request would import (authentication
    backends, session engine, cache backend, base template).
    Nothing here connects to a database or to Redis: forked workers must not share a connection."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import get_backends
    from django.template.loader import get_template
    from django.urls import get_resolver
    from django.utils.module_loading import import_string

    from annotate.nlp import load_pipelines
    from factlab.celery import app

    get_resolver().url_patterns  # noqa: B018 - imports the URL conf and every view module
    app.loader.import_default_modules()  # every app's tasks module, as a worker imports them
    get_backends()
    import_module(settings.SESSION_ENGINE)
    import_string(settings.CACHES["default"]["BACKEND"])
    get_template("base.html")
    load_pipelines()


def freeze_loaded_heap() -> None:
    """Moves every object loaded so far out of the garbage collector's reach, just before the process forks.

    The loaded heap (Django, the views, spaCy's pipelines, scikit-learn: about 280,000 objects) lives as long as
    the process. Unfrozen, a forked worker's full collections walked all of it (a quarter of a second of CPU each)
    and, by writing each object's collector header, copied the pages it shares with the master: 109 MB of a
    gunicorn worker's own memory after a load run, 43 MB frozen (docs/benchmarks.md).
    """
    import gc

    gc.collect()  # what the loading left as garbage goes now, instead of staying frozen
    gc.freeze()
