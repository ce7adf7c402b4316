"""The site's WSGI application, warmed before gunicorn forks its workers (``--preload``).

Importing every view module (and scikit-learn, used to mark relevant sentences) in the master means a
worker, including one started to replace a killed worker, answers its first request at full speed,
so the figures measure the steady state rather than Python imports.
"""
from django.urls import get_resolver

from factlab.wsgi import application

get_resolver().url_patterns  # noqa: B018 - imports the URL conf and every view module
import sklearn.feature_extraction.text
import sklearn.metrics.pairwise  # noqa: F401

import annotate.frank.relevance  # noqa: F401

__all__ = ["application"]
