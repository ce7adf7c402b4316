"""Celery application: two queues, ``cpu`` for light scorers and bookkeeping, ``gpu`` for model-based scorers.

Worker processes load the spaCy pipelines before their pool starts (jobs never pay seconds of loading, and
prefork children share them), watch that they keep consuming, and exit within a bound once asked to stop
(factlab/liveness.py).
"""
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")

app = Celery("factlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

_worker = None  # this process's WorkController, once it is a worker


@signals.worker_init.connect
def _load_before_consuming(sender=None, **kwargs):
    global _worker
    _worker = sender
    from factlab.warm import freeze_loaded_heap, load_for_jobs

    load_for_jobs()
    freeze_loaded_heap()


@signals.worker_ready.connect
def _watch_consumption(sender=None, **kwargs):
    from factlab.liveness import start_watchdog

    start_watchdog(sender)


@signals.worker_shutting_down.connect
def _bound_shutdown(**kwargs):
    from factlab.liveness import bound_shutdown

    bound_shutdown(_worker)
