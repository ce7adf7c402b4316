"""The admin pages read figures a worker stored: on FRANK imported with its metric scores and a crowd's
judgements, opening the campaign page, the dashboard and the report API fits no label model and builds no
report, each in fewer than a stated number of queries; the pages say the figures are not computed yet, the
import queued their computation, and once a worker ran it the pages show them and say how fresh they are."""
from __future__ import annotations

import json

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import SentenceJudgement
from metrics_service.models import CampaignFigures
from metrics_service.report import checked_options
from metrics_service.report_jobs import report_job_key
from metrics_service.stats import label_aggregation
from metrics_service.stored_figures import FIGURES_TASK, WORKER_RELIABILITY
from metrics_service.tasks_report import compute_campaign_figures, compute_report
from tests.celery_helpers import broker
from tests.factories import judge_like_a_crowd
from tests.test_report_support import frank_campaign

DB = 13  # broker database of this test: no worker consumes it, the test runs the worker's tasks itself
SLUG = "frank-admin-pages"
PAGES = {
    "campaign page": f"/manage/{SLUG}/",
    "dashboard": f"/campaigns/{SLUG}/dashboard/",
    "report API": f"/api/campaigns/{SLUG}/report/",
}
# Queries each page may make, whatever the campaign's size (on FRANK: 27-32, 11-15 and 9-14).
MAX_QUERIES = {"campaign page": 40, "dashboard": 20, "report API": 20}


class FitCounter:
    """Counts the label models' fits (``label_aggregation.fit_labels``), calling the real one."""

    def __init__(self, fit):
        self.fit, self.methods = fit, []

    def __call__(self, tasks, method):
        self.methods.append(method)
        return self.fit(tasks, method)


def open_pages(client) -> dict[str, tuple[object, int]]:
    """Each page opened once: its response and its query count."""
    out = {}
    for name, url in PAGES.items():
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        out[name] = response, len(queries)
    return out


def queued_tasks(queue: redis.Redis, name: str) -> list[dict]:
    return [json.loads(message)["headers"] for message in queue.lrange(name, 0, -1)]


@pytest.mark.long(seconds=45)
@pytest.mark.django_db
def test_admin_pages_on_frank_read_stored_figures_and_fit_nothing(client, frank_dir, monkeypatch, django_capture_on_commit_callbacks):
    cache.clear()
    with broker(redis_db=DB) as url:
        queue = redis.Redis.from_url(url)
        with django_capture_on_commit_callbacks(execute=True):
            campaign = frank_campaign(frank_dir, SLUG)  # the real importer, then ROUGE and BLEU of every summary
        judged = judge_like_a_crowd(campaign, workers=12, summaries=200)
        # The import queued the computation of the pages' figures for a worker (queue "reports").
        assert [task["task"] for task in queued_tasks(queue, "reports")] == [FIGURES_TASK]
        fits = FitCounter(label_aggregation.fit_labels)
        monkeypatch.setattr(label_aggregation, "fit_labels", fits)
        client.force_login(get_user_model().objects.create_user("figures-admin", is_staff=True))

        pages = open_pages(client)
        for name, (_response, queries) in pages.items():
            assert queries < MAX_QUERIES[name], f"{name}: {queries} queries"
        assert fits.methods == [] and not CampaignFigures.objects.exists()  # nothing fitted, nothing computed
        campaign_page, dashboard, api = (pages[name][0] for name in PAGES)
        assert campaign_page.status_code == dashboard.status_code == 200
        assert "not computed yet: queued" in campaign_page.content.decode()
        assert "Figures not computed yet: queued" in dashboard.content.decode() and dashboard.context["report"] is None
        assert api.status_code == 202 and api.json()["status"] == "queued"
        assert api.json()["freshness"]["text"] == "not computed yet: queued"
        # One figures computation (the import's) and one report job (the dashboard's and the API's request).
        assert sorted(task["task"] for task in queued_tasks(queue, "reports")) == [FIGURES_TASK, "metrics_service.tasks_report.compute_report"]

        # The worker runs the queued tasks (here in this process, as the worker would).
        compute_campaign_figures(campaign.pk)
        assert {"dawid_skene", "mace", "glad"} <= set(fits.methods)
        stored = CampaignFigures.objects.get(campaign=campaign, name=WORKER_RELIABILITY)
        assert len(stored.data) == 12 and all(0 <= row["majority"] <= 1 for row in stored.data.values())
        compute_report(SLUG, job=cache.get(report_job_key(campaign, checked_options({})))["job"])
        fits.methods.clear()

        cache.clear()  # cold: the pages read what the worker stored in the database
        pages = open_pages(client)
        for name, (_response, queries) in pages.items():
            assert queries < MAX_QUERIES[name], f"{name}: {queries} queries"
        assert fits.methods == []
        campaign_page, dashboard, api = (pages[name][0] for name in PAGES)
        html = campaign_page.content.decode()
        assert 'id="reliability-freshness" data-current="1"' in html and "computed 0 minutes ago" in html
        shown = {row["worker"].pk: row["reliability"] for row in campaign_page.context["workers"]}
        assert shown == {int(pk): values for pk, values in stored.data.items()}
        assert dashboard.context["freshness"].current and "2246 summaries" in dashboard.content.decode()
        assert dashboard.context["tables"]["labels"] and "rouge1" in dashboard.context["report"]["correlations"]
        assert dashboard.context["charts"]["scatter"]["type"] == "scatter"  # the worker stored it with the report
        assert api.status_code == 200 and api.json()["counts"]["judgements"] == judged

        # New data: the pages show the stored figures as stale while a worker recomputes them, still fitting nothing.
        SentenceJudgement.objects.filter(summary__document__campaign=campaign).order_by("id").first().delete()
        pages = open_pages(client)
        assert fits.methods == []
        assert "computed 0 minutes ago; recomputing" in pages["campaign page"][0].content.decode()
        dashboard = pages["dashboard"][0]
        assert dashboard.context["report"]["counts"]["judgements"] == judged and not dashboard.context["freshness"].current
        assert "Figures computed 0 minutes ago; recomputing" in dashboard.content.decode()
        api = pages["report API"][0]
        assert api.status_code == 202 and api.json()["freshness"]["text"] == "computed 0 minutes ago; recomputing"


@pytest.mark.django_db
def test_a_burst_of_changes_queues_one_computation_and_a_rolled_back_one_none(django_capture_on_commit_callbacks):
    from django.db import transaction

    from metrics_service.stored_figures import figures_job, schedule_figures
    from tests.factories import make_campaign

    cache.clear()
    campaign = make_campaign()
    with broker(redis_db=DB) as url:
        queue = redis.Redis.from_url(url)
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
            schedule_figures(campaign)
            raise RuntimeError("the change is rolled back")
        assert queued_tasks(queue, "reports") == [] and figures_job(campaign) is None
        with django_capture_on_commit_callbacks(execute=True):
            for _ in range(5):  # submissions in a burst, each committed
                with transaction.atomic():
                    schedule_figures(campaign)
        assert [task["task"] for task in queued_tasks(queue, "reports")] == [FIGURES_TASK]
        assert figures_job(campaign) == "queued"


@pytest.mark.django_db(transaction=True)
def test_a_submit_queues_the_figures_through_the_signal_the_metrics_service_receives():
    # annotate imports nothing of metrics_service: the submit sends campaign_data_changed, whose receiver
    # (connected in MetricsServiceConfig.ready) queues the computation once the submit commits.
    from annotate.services.assignments import request_assignment, submit_assignment
    from annotate.signals import campaign_data_changed
    from metrics_service.stored_figures import figures_job
    from tests.factories import make_campaign, make_document, make_worker, qualify
    from tests.guarantee_support import frank_answers

    assert campaign_data_changed.has_listeners()
    cache.clear()
    campaign = make_campaign(entity_check_enabled=False)
    make_document(campaign, summaries=[["The council met on Monday."]])
    worker = make_worker("figures-signal")
    qualify(worker, campaign)
    with broker(redis_db=DB) as url:
        queue = redis.Redis.from_url(url)
        queue.flushdb()
        assignment = request_assignment(worker, campaign)
        assert queued_tasks(queue, "reports") == [] and figures_job(campaign) is None
        submit_assignment(assignment.pk, worker, frank_answers(assignment), submission_key="figures-signal")
        assert [task["task"] for task in queued_tasks(queue, "reports")] == [FIGURES_TASK]
        assert figures_job(campaign) == "queued"
