"""The unit lane runs with no services (``make test-fast``): a test here that asks for the database, a Celery
worker or a browser belongs in tests/integration, tests/celery or tests/browser, and collection says so.

Every test here is marked ``unit``, so ``make test`` can run the rest of the suite in one pass
(``-m "not unit or slow"``) after the fast lane (``-m "not slow"``) without running a test twice. A test
that builds one of the tiny models (or the LLM server on one) is ``slow``: loading torch and a model takes
seconds of CPU each time, which a loaded machine turns into minutes.
"""
from __future__ import annotations

from pathlib import Path

import pytest

LANE = Path(__file__).resolve().parent
SERVICE_MARKERS = ("django_db", "celery_worker", "browser")
SERVICE_FIXTURES = ("db", "transactional_db", "live_server", "client", "admin_client", "page")
MODEL_FIXTURES = ("tiny_seq2seq_dir", "tiny_nli_dir", "tiny_nli_unnamed_dir", "tiny_t5_dir",
                  "tiny_minicheck_roberta_dir", "tiny_alignscore_dir", "tiny_causal_lm_dir", "llm_server")


@pytest.hookimpl(tryfirst=True)  # before -m selects: it reads the markers given here
def pytest_collection_modifyitems(config, items):
    misplaced = []
    for item in items:
        if LANE not in Path(str(item.path)).resolve().parents:
            continue
        item.add_marker(pytest.mark.unit)
        fixtures = getattr(item, "fixturenames", ())
        if any(f in fixtures for f in MODEL_FIXTURES):
            item.add_marker(pytest.mark.slow)
        needs = [m for m in SERVICE_MARKERS if item.get_closest_marker(m)]
        needs += [f for f in SERVICE_FIXTURES if f in fixtures]
        if needs:
            misplaced.append(f"{item.nodeid} needs {', '.join(needs)}")
    if misplaced:
        raise pytest.UsageError("tests/unit runs without services; move these to another lane:\n" + "\n".join(misplaced))
