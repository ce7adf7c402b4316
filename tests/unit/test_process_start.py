"""What a process of the site loads when it starts, before it runs a task module: every manage.py command pays
for it (the workers' health check that docker-compose.yml runs every 30 s, migrate, create_admin). The
statistics' libraries come with the reports' modules, which the web server's master and each Celery worker load
once before they fork (factlab/warm.py), not with the site; what those load is then frozen out of the garbage
collector's reach before the fork."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

# Loaded only where a report, a kappa, a table or a model needs them (two seconds of CPU together).
HEAVY_AT_START = ("sklearn", "statsmodels", "scipy", "pandas", "pyarrow", "krippendorff", "torch", "spacy", "transformers", "matplotlib", "crowdkit")

START_THE_SITE = """
import json, sys
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # every view module, as the first request loads them
import factlab.celery, factlab.wsgi  # the Celery app and the web application, as a command's start loads them
from metrics_service.stats import majority_label  # the package itself: its names are loaded when asked for
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def started_process_reports(script: str, *, timeout: int = 120):
    """The JSON that ``script`` prints last, run in a new interpreter as a process of the site starts (the demo's
    settings, no database named)."""
    env = {**os.environ, "DJANGO_DEBUG": "1", "DJANGO_SETTINGS_MODULE": "factlab.settings"}
    env.pop("DATABASE_URL", None)
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_starting_the_site_loads_no_statistics_or_model_library():
    loaded = set(started_process_reports(START_THE_SITE))
    assert "annotate" in loaded and "metrics_service" in loaded  # the apps did start
    assert not loaded & set(HEAVY_AT_START), sorted(loaded & set(HEAVY_AT_START))


def test_the_statistics_package_gives_each_name_from_its_module():
    from metrics_service import stats
    from metrics_service.stats import agreement, correlation, majority

    assert stats.majority_label is majority.majority_label and stats.williams_test is correlation.williams_test
    assert stats.correlation is correlation  # the module: its function is imported from it
    assert stats.factual_agreement is agreement.factual_agreement
    assert set(stats.__all__) <= set(dir(stats))
    with pytest.raises(AttributeError, match="no attribute 'no_such_statistic'"):
        stats.no_such_statistic  # noqa: B018


START_A_CELERY_WORKER = """
import gc, json, sys
import django
django.setup()
from celery import signals
import factlab.celery
signals.worker_init.send(sender=None)  # what `celery worker` sends before its pool forks the children
print(json.dumps({"frozen": gc.get_freeze_count(), "walkable": len(gc.get_objects()), "spacy": "spacy" in sys.modules}))
"""


@pytest.mark.slow
def test_a_celery_worker_freezes_what_it_loaded_before_its_pool_forks():
    start = started_process_reports(START_A_CELERY_WORKER, timeout=180)
    # The pipelines were loaded, then frozen: the children's collectors never walk them (factlab.warm.freeze_loaded_heap).
    assert start["spacy"] and start["frozen"] > 100_000 and start["walkable"] < start["frozen"] / 10, start
