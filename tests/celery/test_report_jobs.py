"""Report jobs cannot starve other work: identical requests share one job, a user's open jobs are limited, and
reports queue apart from imports (a real worker per queue, as in production)."""
from __future__ import annotations

import time

import pytest
import redis
from django.core.cache import cache

from annotate.models import ImportJob, ImportStatus, MetricScore
from annotate.services.import_jobs import dispatch_import_job
from metrics_service.report import normalize_options
from metrics_service.report_jobs import report_job_key, request_report
from metrics_service.tasks_report import compute_report
from tests.celery.test_lost_messages import _queued_upload
from tests.celery.test_scoring_jobs_worker import WORKER_ENV
from tests.celery.test_scoring_jobs_worker import make_campaign as make_scoring_campaign
from tests.celery_helpers import CeleryWorker, broker, redis_url, wait_for
from tests.test_api_fixtures import *

C = "/api/campaigns/frank-api"
DB = 11  # broker database of these tests


@pytest.fixture
def waiting_broker():
    """A broker that answers and no worker: every report job stays queued, as behind a busy report worker."""
    cache.clear()
    with broker(redis_db=DB) as url:
        yield redis.Redis.from_url(url)


@pytest.mark.django_db
def test_identical_report_requests_share_one_job(campaign, researcher_client, admin_client, waiting_broker):
    first = researcher_client.get(f"{C}/report/?spearman=ranks")
    assert first.status_code == 202 and first.json()["status"] == "queued"
    job = first.json()["job"]
    assert job and first.json()["progress"]["job"] == job
    # The same options again, by the same user, by another one, and after the campaign changed: the same job.
    assert researcher_client.get(f"{C}/report/?spearman=ranks").json()["job"] == job
    assert admin_client.get(f"{C}/report/?spearman=ranks").json()["job"] == job
    MetricScore.objects.create(summary=campaign.documents.first().summaries.first(), metric="bleu", value=0.3)
    assert researcher_client.get(f"{C}/report/?spearman=ranks").json()["job"] == job
    assert waiting_broker.llen("reports") == 1 and waiting_broker.llen("interactive") == 0
    # Other options: another job.
    other = researcher_client.get(f"{C}/report/?spearman=ranks&kendall=true")
    assert other.status_code == 202 and other.json()["job"] != job
    assert waiting_broker.llen("reports") == 2
    # The worker runs the job (here, in this process, as the worker would): the report is served, the job is over.
    compute_report("frank-api", spearman="ranks", job=job)
    done = researcher_client.get(f"{C}/report/?spearman=ranks")
    assert done.status_code == 200 and done.json()["options"]["spearman"] == "ranks"


@pytest.mark.django_db
def test_a_user_has_at_most_the_allowed_report_jobs_at_once(campaign, researcher_client, admin_client, settings, waiting_broker):
    settings.FACTLAB_REPORT_JOBS_PER_USER = 2
    queued = [researcher_client.get(f"{C}/report/?split={split}") for split in ("all", "test")]
    assert [r.status_code for r in queued] == [202, 202]
    refused = researcher_client.get(f"{C}/report/?split=valid")
    assert refused.status_code == 429 and refused["Retry-After"] == "10"
    assert "FACTLAB_REPORT_JOBS_PER_USER=2" in refused.json()["detail"] and refused.json()["limit"] == 2
    assert researcher_client.get(f"{C}/report/outputs/?split=valid").status_code == 429  # the outputs too
    assert waiting_broker.llen("reports") == 2  # nothing queued for the refused requests
    # Joining a job already queued is not refused, and another user has a limit of their own.
    assert researcher_client.get(f"{C}/report/?split=test").status_code == 202
    assert admin_client.get(f"{C}/report/?split=valid&kendall=true").status_code == 202
    # Once one of the researcher's jobs has run, they may queue another.
    compute_report("frank-api", split="all", job=queued[0].json()["job"])
    assert researcher_client.get(f"{C}/report/?split=valid").status_code == 202
    assert researcher_client.get(f"{C}/report/?split=all&kendall=true").status_code == 429
    # A job whose worker died stops counting when it expires.
    cache.delete(report_job_key(campaign, normalize_options(split="test")))
    assert researcher_client.get(f"{C}/report/?split=all&kendall=true").status_code == 202


def test_simultaneous_requests_of_one_user_queue_no_more_than_the_limit(transactional_db, settings, waiting_broker):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from metrics_service.report_jobs import ReportJobLimit

    settings.FACTLAB_REPORT_JOBS_PER_USER = 2
    campaign = make_scoring_campaign("simultaneous-reports", n_documents=2, with_references=False)

    def ask(options: dict) -> str:
        try:
            return "queued" if request_report(campaign, user_id=7, **options)[1]["state"] == "queued" else "other"
        except ReportJobLimit:
            return "refused"
        finally:
            connection.close()

    floods = [{"split": split, "kendall": kendall} for split in ("all", "valid", "test") for kendall in (False, True)]
    with ThreadPoolExecutor(max_workers=len(floods)) as pool:
        answers = list(pool.map(ask, floods))
    assert sorted(answers) == ["queued"] * 2 + ["refused"] * 4, answers
    assert waiting_broker.llen("reports") == 2


@pytest.mark.celery_worker
@pytest.mark.slow
def test_an_import_finishes_in_seconds_while_reports_fill_their_worker(transactional_db, settings, tmp_path):
    """A flood of report requests with distinct options, then an upload: the import does not wait behind them."""
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()
    campaign = make_scoring_campaign("busy-reports", n_documents=30, with_references=True)
    env = {**WORKER_ENV, "FACTLAB_MEDIA_ROOT": str(settings.MEDIA_ROOT)}
    url = redis_url(DB)
    with broker(redis_db=DB), CeleryWorker(broker_url=url, env=env, queues=("interactive",)) as imports_worker:
        # A first import warms the worker up (its first one loads the NLP pipeline), as in a running deployment.
        warm_up = _queued_upload("import-warm-up")
        dispatch_import_job(warm_up.pk)
        wait_for(lambda: ImportJob.objects.get(pk=warm_up.pk).finished_at is not None, timeout=120,
                 what="the first import", workers=[imports_worker])
        # Half a minute of report work: each of these small reports takes a few tenths of a second.
        floods = [
            {"split": split, "spearman": spearman, "kendall": kendall, "partial": partial, "aggregation": aggregation}
            for split in ("all", "valid", "test") for spearman in ("residuals", "ranks") for kendall in (False, True)
            for partial in (True, False) for aggregation in ("majority", "dawid_skene", "mace", "glad")
        ]
        for options in floods:
            assert request_report(campaign, **options)[0] is None  # user None: no per-user limit here
        queue = redis.Redis.from_url(url)
        # The reports and the admin pages' figures the warm-up import queued (same queue).
        assert queue.llen("reports") == len(floods) + 1 and queue.llen("interactive") == 0
        with CeleryWorker(broker_url=url, env=env, queues=("reports",)) as reports_worker:
            wait_for(lambda: queue.llen("reports") < len(floods), timeout=60, what="the report worker to start", workers=[reports_worker])
            upload = _queued_upload("import-beside-reports")
            started = time.monotonic()
            dispatch_import_job(upload.pk)
            wait_for(lambda: ImportJob.objects.get(pk=upload.pk).finished_at is not None, timeout=60,
                     what="the import", workers=[imports_worker])
            took = time.monotonic() - started
            still_queued = queue.llen("reports")
    print(f"import finished {took:.1f} s after it was sent, with {still_queued} report jobs still queued")
    assert ImportJob.objects.get(pk=upload.pk).status == ImportStatus.SUCCEEDED
    assert still_queued > 0 and took < 10
