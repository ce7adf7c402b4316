"""``manage.py score`` on a small FRANK subset with the real ROUGE and BLEU scorers (``--sync``, no broker)."""
from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.models import MetricScore, Summary
from annotate.services.imports import import_dataset
from metrics_service.models import JobStatus, ScoringJob
from metrics_service.scorers import get_scorer
from tests.tiny_models import tiny_seq2seq_dir  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db
N_ARTICLES = 4


@pytest.fixture
def frank_subset(frank_dir, tmp_path):
    """FRANK's records of its first few articles, with those article files (a fast import)."""
    records = json.loads((frank_dir / "human_annotations.json").read_text())
    hashes = list(dict.fromkeys(r["hash"] for r in records))[:N_ARTICLES]
    (tmp_path / "articles").mkdir()
    for h in hashes:
        shutil.copy(frank_dir / "articles" / f"{h}.json", tmp_path / "articles" / f"{h}.json")
    (tmp_path / "human_annotations.json").write_text(json.dumps([r for r in records if r["hash"] in hashes]))
    import_dataset("frank", [tmp_path], campaign_slug="frank-mini")
    return "frank-mini"


def run_score(*args: str) -> str:
    out = StringIO()
    call_command("score", *args, "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


def test_score_sync_stores_rouge_and_bleu_for_every_summary(frank_subset):
    summaries = Summary.objects.filter(document__campaign__slug=frank_subset)
    refs = set(summaries.filter(is_reference=True).values_list("id", flat=True))
    systems = set(summaries.filter(is_reference=False).values_list("id", flat=True))
    assert len(refs) == N_ARTICLES and len(systems) >= N_ARTICLES

    output = run_score("--campaign", frank_subset, "--metrics", "rouge,bleu", "--sync", "--chunk-size", "7")

    jobs = {job.metric: job for job in ScoringJob.objects.all()}
    assert set(jobs) == {"rouge", "bleu"}
    for metric, job in jobs.items():
        assert (job.status, job.done, job.total, job.skipped) == (JobStatus.DONE, len(refs | systems), len(refs | systems), len(refs))
        assert f"job {job.pk} {metric}: done" in output
        scorer = get_scorer(metric)
        for name in scorer.output_names:
            scored = set(MetricScore.objects.filter(metric=name, config_key=job.config_key).values_list("summary_id", flat=True))
            # Reference-based outputs for system summaries only; article-based ones for references too.
            assert scored == (systems if name in scorer.reference_outputs else systems | refs), name
    values = list(MetricScore.objects.filter(metric="rouge1").values_list("value", flat=True))
    assert all(0.0 <= v <= 1.0 for v in values) and len(set(values)) > 1
    count = MetricScore.objects.count()

    run_score("--campaign", frank_subset, "--metrics", "rouge", "--sync")  # a re-run updates in place
    assert MetricScore.objects.count() == count
    assert ScoringJob.objects.filter(metric="rouge", status=JobStatus.DONE).count() == 2


def test_score_without_sync_submits_to_the_queue_and_waits(frank_subset):
    # Eager Celery (the test default) stands in for the workers; the command polls the job rows.
    output = run_score("--campaign", frank_subset, "--metrics", "bleu", "--poll-interval", "0.05")
    job = ScoringJob.objects.get()
    assert f"submitted scoring job {job.pk} (bleu, queue cpu" in output and job.status == JobStatus.DONE


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--campaign", "nope", "--metrics", "rouge"], "no campaign with slug 'nope'"),
        (["--campaign", "frank-mini", "--metrics", "rouge,nosuch"], "nosuch: unknown metric 'nosuch'"),
        (["--campaign", "frank-mini", "--metrics", " , "], "--metrics is empty"),
        (["--campaign", "frank-mini", "--metrics", "rouge", "--coco-mask", "sent"], "options given for metric(s) not requested: coco"),
        (["--campaign", "frank-mini", "--metrics", "coco", "--coco-mask", "words"], "unknown CoCo mask strategy 'words'"),
        (["--campaign", "frank-mini", "--metrics", "rouge", "--config", "rouge"], "expected METRIC.OPTION=VALUE"),
        (["--campaign", "frank-mini", "--metrics", "rouge", "--chunk-size", "0"], "chunk_size must be an integer between 1"),
    ],
)
def test_score_refuses_bad_arguments_clearly(frank_subset, args, message):
    with pytest.raises(CommandError) as excinfo:
        run_score(*args, "--sync")
    assert message in str(excinfo.value)
    assert ScoringJob.objects.count() == 0  # every metric is validated before any job is submitted


def test_score_with_coco_on_a_tiny_model(frank_subset, tiny_seq2seq_dir):  # noqa: F811
    ids = list(Summary.objects.filter(document__campaign__slug=frank_subset).values_list("id", flat=True))[:6]
    Summary.objects.filter(document__campaign__slug=frank_subset).exclude(id__in=ids).delete()
    run_score(
        "--campaign", frank_subset, "--metrics", "coco", "--coco-mask", "sent,doc",
        "--config", f"coco.model={tiny_seq2seq_dir}", "--config", "coco.batch_size=4", "--sync",
    )
    job = ScoringJob.objects.get()
    assert job.status == JobStatus.DONE and job.queue == "gpu" and job.config["masks"] == ["sent", "doc"]
    for name in ("coco_sent", "coco_doc"):
        assert set(MetricScore.objects.filter(metric=name).values_list("summary_id", flat=True)) == set(ids)

