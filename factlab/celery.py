"""Celery application: two queues, ``cpu`` for light scorers and bookkeeping, ``gpu`` for model-based scorers."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")

app = Celery("factlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
