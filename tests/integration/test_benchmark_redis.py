"""The benchmarks' site keeps its cache in a Redis db of its own, which a run empties before it starts.

With a reused seed every run's workers and participations have the same ids, so whatever an earlier run kept
under the same keys (answer windows, kept counts, sessions) would be read by the next one as its own, and a
run's figures would depend on the run before it (the load benchmark emptied only the broker's db, and the
instruction count of a cycle none).
"""
from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest
import redis

from benchmarks._bench_common import bench_env, cache_db, flush_redis

# The pair the instruction count uses; the suite's own Redis uses the first few dbs.
BROKER_DB = 14


@pytest.fixture
def suite_redis_port(monkeypatch) -> int:
    port = urlsplit(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")).port or 6379
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")  # what benchmarks._bench_common.redis_port reads
    return port


def test_the_site_under_test_is_told_its_cache_db_and_a_run_empties_both(suite_redis_port):
    env = bench_env(database="factlab_bench_any", redis_db=BROKER_DB)
    assert urlsplit(env["REDIS_URL"]).path == f"/{BROKER_DB}"
    assert urlsplit(env["FACTLAB_CACHE_URL"]).path == f"/{cache_db(BROKER_DB)}" != f"/{BROKER_DB}"

    broker, cache = (redis.Redis(port=suite_redis_port, db=db) for db in (BROKER_DB, cache_db(BROKER_DB)))
    try:
        kept = ":1:factlab:answer-window:1:3"
        broker.set("queued", "1")
        cache.set(kept, "left by an earlier run")
        flush_redis(BROKER_DB)
        assert not broker.exists("queued") and cache.exists(kept)  # the broker's db alone, as the fault test's phases flush it
        broker.set("queued", "1")
        flush_redis(BROKER_DB, with_cache=True)
        assert broker.dbsize() == 0 and cache.dbsize() == 0
    finally:
        for client in (broker, cache):
            client.flushdb()
            client.close()
