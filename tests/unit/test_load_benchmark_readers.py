"""The load benchmark's simulated readers (``benchmarks/_bench_common.py``, ``--as-browser``), against a small
aiohttp server that answers as the task page and its submit do.

A reader keeps the page open while it reads, then submits. When the run ends first, it leaves the page
unsubmitted, as a person would: submitting at the deadline would send every reader's answers in the same
instant, and the submit latencies would report that burst instead of the study's pace.
"""
from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web

from benchmarks._bench_common import SLUG, Stats, annotator

PAGE_DATA = {
    "assignment": 7,
    "submission_key": "key-7",
    "urls": {"submit": f"/c/{SLUG}/frank/task/7/submit/"},
    "summaries": [{"sentences": [{"text": "A sentence."}]}],
    "entity_done": True,
    "entity_options": [],
    "article": ["An article."],
}


def task_page() -> str:
    return (f'<div id="heartbeat" data-url="/c/{SLUG}/frank/task/7/heartbeat/" data-seconds="15"></div>'
            f'<script id="task-data" type="application/json">{json.dumps(PAGE_DATA)}</script>')


async def run_reader(reading_seconds: float, run_seconds: float) -> tuple[Stats, dict[str, int], float]:
    """One reader against the stand-in server for ``run_seconds``; its reading takes ``reading_seconds``."""
    requests = {"page": 0, "heartbeat": 0, "submit": 0}

    async def page(request):
        requests["page"] += 1
        if requests["page"] > 1:  # the second visit finds no more work, so the reader stops
            return web.Response(text="No more articles", content_type="text/html")
        return web.Response(text=task_page(), content_type="text/html")

    async def heartbeat(request):
        requests["heartbeat"] += 1
        return web.Response(status=204)

    async def submit(request):
        requests["submit"] += 1
        return web.json_response({"ok": True, "duplicate": False, "next": f"/c/{SLUG}/done/"})

    async def done(request):
        return web.Response(text="Submitted.", content_type="text/html")

    app = web.Application()
    app.router.add_get(f"/c/{SLUG}/frank/task/", page)
    app.router.add_post(f"/c/{SLUG}/frank/task/7/heartbeat/", heartbeat)
    app.router.add_post(f"/c/{SLUG}/frank/task/7/submit/", submit)
    app.router.add_get(f"/c/{SLUG}/done/", done)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    stats = Stats()
    started = time.monotonic()
    try:
        await annotator(0, "session", f"http://127.0.0.1:{port}", started + run_seconds, stats, think=reading_seconds,
                        think_min=reading_seconds, double_click=0.0, retries=0, seed=1, as_browser=True)
    finally:
        await runner.cleanup()
    return stats, requests, time.monotonic() - started


def test_a_reader_whose_reading_outlasts_the_run_leaves_its_page_unsubmitted():
    stats, requests, elapsed = asyncio.run(run_reader(reading_seconds=30.0, run_seconds=0.5))
    assert requests == {"page": 1, "heartbeat": 1, "submit": 0}
    assert stats.reading_at_end == 1 and not stats.submit_latencies and not stats.acknowledged
    assert elapsed < 5, "the reader should stop at the run's end, not read on"


@pytest.mark.parametrize("reading_seconds", [0.0, 0.2])
def test_a_reader_who_finishes_reading_in_time_submits(reading_seconds):
    stats, requests, _ = asyncio.run(run_reader(reading_seconds=reading_seconds, run_seconds=10.0))
    assert requests["submit"] == 1 and requests["heartbeat"] == 1
    assert stats.reading_at_end == 0 and stats.acknowledged == {7: "key-7"} and len(stats.submit_latencies) == 1
