"""The admin's whole study in headless Chromium, with a real Celery worker: a campaign from an upload (a
broken file first: its error names the record), import progress, start, scoring with a live job list, and
the report, all from /manage/."""
from __future__ import annotations

import json

import pytest

from annotate.models import Campaign, CampaignStatus, MetricScore
from tests.browser import follow, live_login
from tests.celery.test_scoring_jobs_worker import WORKER_ENV
from tests.celery_helpers import CeleryWorker, broker, wait_for
from tests.factories import make_worker

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def record(n: int, **changes) -> dict:
    return {
        "id": f"doc-{n}", "dataset": "cnndm",
        "text": f"The council of town {n} met on Monday. It approved the budget for the schools.",
        "sentences": [f"The council of town {n} met on Monday.", "It approved the budget for the schools."],
        "summaries": [
            {"system": "ref", "text": f"Town {n} approved a school budget.", "is_reference": True},
            {"system": "bart", "text": f"The council of town {n} approved the budget.", "sentences": [f"The council of town {n} approved the budget."]},
        ],
        **changes,
    }


def upload(page, live_server, slug: str, name: str, records: list[dict]) -> None:
    page.goto(f"{live_server.url}/manage/")
    page.click("#new-campaign")
    page.fill("#id_slug", slug)
    page.select_option("#id_campaign_kind", "frank")
    page.select_option("#id_format", "jsonl")
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    page.set_input_files("#id_file", files=[{"name": name, "mimeType": "application/jsonl", "buffer": body}])
    page.click("#upload")


def test_an_admin_runs_a_study_from_an_upload_to_the_report(browser_page, live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    make_worker("study-admin", staff=True)
    env = {**WORKER_ENV, "FACTLAB_MEDIA_ROOT": str(settings.MEDIA_ROOT)}
    page = browser_page
    with broker(redis_db=3) as url, CeleryWorker(broker_url=url, env=env) as worker:
        live_login(page, live_server, "study-admin", "pw-factlab-1")
        broken = record(2)
        del broken["text"]
        upload(page, live_server, "browser-study", "broken.jsonl", [record(1), broken])
        page.wait_for_selector("#import-status[data-status=failed]")
        error = page.inner_text("#import-error")
        assert "Nothing was stored" in error and "line 2" in error and "text" in error
        assert not Campaign.objects.filter(slug="browser-study").exists()

        upload(page, live_server, "browser-study", "study.jsonl", [record(n) for n in range(1, 4)])
        page.wait_for_selector("#import-status[data-status=succeeded]")
        assert '"documents": 3' in page.inner_text("#import-report")
        follow(page, "#open-campaign")
        # Not ready for a Prolific study yet: the checklist says what is missing and the start is refused.
        assert "needed" in page.inner_text("#ready-exits")
        follow(page, "#action-start")
        assert "Cannot start the campaign yet" in page.inner_text("main") and page.inner_text("#campaign-status") == "Draft"
        page.fill("#id_prolific_completion_code", "STUDY-DONE")
        page.fill("#id_prolific_screenout_code", "STUDY-OUT")
        follow(page, "#crowd-save")
        # The uploaded data has no labels, so the qualification can only be the shipped pool: accepted knowingly.
        assert page.locator("#ready-qualification.missing").count() == 1
        page.goto(f"{live_server.url}/manage/browser-study/control/")
        follow(page, "#accept-shipped-qualification")
        page.goto(f"{live_server.url}/manage/browser-study/")
        assert page.locator("#readiness li.missing").count() == 0
        follow(page, "#action-start")
        assert page.inner_text("#campaign-status") == "Running"
        assert Campaign.objects.get(slug="browser-study").status == CampaignStatus.RUNNING

        page.check("#score-form input[value=rouge]")
        follow(page, "#score-form button[type=submit]")
        # The request only queued the job: the page is back at once and the job list follows the worker.
        assert page.locator("tr.job[data-kind=scoring]").count() == 1
        page.wait_for_selector("tr.job[data-kind=scoring][data-status=done]", timeout=120_000)
        assert "6 / 6" in page.inner_text("tr.job[data-kind=scoring]")  # references are scored too (BUMP pairs need them)
        wait_for(lambda: MetricScore.objects.filter(summary__document__campaign__slug="browser-study").exists(),
                 timeout=5, what="stored scores", workers=[worker])

        follow(page, "#report-link")
        page.wait_for_selector("h1")
        assert "analysis" in page.inner_text("h1")
        # The dashboard shows the figures a worker stores after the scores arrive (never computed in the
        # request): until then it says they are queued, and it reloads itself once they are stored.
        page.wait_for_function("() => document.body.innerText.toLowerCase().includes('rouge')", timeout=180_000)
        assert "rouge" in page.content().lower()
    assert page.js_errors == []
