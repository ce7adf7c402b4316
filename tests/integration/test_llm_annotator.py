"""The LLM as a FRANK annotator against a real local OpenAI-compatible server (constrained JSON decoding with a
tiny causal LM): validated judgements stored by a marked pseudo-worker, kept out of human aggregates, the
report's agreement with the humans (checked against a hand computation), the command and the API action."""
from __future__ import annotations

import io
import itertools
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotate.models import JudgementSource, SentenceJudgement, Summary
from taxonomies.frank import CODES
from tests.llm_server import llm_env, llm_server  # noqa: F401 (fixtures)
from tests.test_api_fixtures import admin_client, admin_user  # noqa: F401 (fixtures)
from tests.tiny_models import tiny_causal_lm_dir  # noqa: F401 (fixture)


# -- answer validation (no server) -------------------------------------------------------------------------
@pytest.mark.parametrize("text,error", [
    ("yes it is", "not valid JSON"),
    ('["factual"]', "expected a JSON object"),
    ('{"factual": "yes", "categories": []}', "'factual' must be true or false"),
    ('{"factual": false, "categories": ["Typo"]}', "unknown categories \\['Typo'\\]"),
    ('{"factual": true, "categories": ["EntE"]}', "a factual sentence has no error category"),
    ('{"factual": false, "categories": []}', "needs at least one error category"),
    ('{"factual": false, "categories": ["EntE", "RelE", "OutE"]}', "at most 2 error categories"),
])
def test_bad_answers_get_clear_errors(text, error):
    from metrics_service.scorers.llm import LLMAnswerError
    from metrics_service.scorers.llm_judge import validate_frank_answer

    with pytest.raises(LLMAnswerError, match=error):
        validate_frank_answer({"text": text}, CODES)


def test_good_answers_are_read():
    from metrics_service.scorers.llm_judge import validate_frank_answer

    assert validate_frank_answer({"text": '{"factual": true, "categories": []}'}, CODES) == (True, ())
    fenced = '```json\n{"factual": false, "categories": ["OutE", "EntE", "OutE"]}\n```'
    assert validate_frank_answer({"text": fenced}, CODES) == (False, ("OutE", "EntE"))


# -- against the server -----------------------------------------------------------------------------------
def _campaign_with_humans():
    """Three documents judged by three human workers with a fixed pattern."""
    from tests.factories import make_judged_campaign

    return make_judged_campaign(3)


def _cohen(a: list[bool], b: list[bool]) -> float:
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return (po - pe) / (1 - pe)


@pytest.mark.django_db
def test_llm_annotator_stores_marked_judgements_and_the_report_compares_them(llm_env):  # noqa: F811
    from metrics_service import selectors
    from metrics_service.llm_annotation import submit_llm_annotation
    from metrics_service.report import (
        build_report,
        llm_annotator_section,
        load_analysis_data,
    )

    campaign, humans, units = _campaign_with_humans()
    before = len(llm_env.requests)
    job = submit_llm_annotation(campaign=campaign, chunk_size=2, sync=True)
    assert job.status == "done", job.error
    assert job.queue == "cpu" and job.metric == "llm_frank"
    sent = llm_env.requests[before:]
    assert len(sent) == len(units)  # one request per sentence, every answer valid at once
    assert all(r["response_format"]["type"] == "json_schema" for r in sent)
    model = SentenceJudgement.objects.filter(source=JudgementSource.MODEL)
    assert sorted(model.values_list("summary_id", "sentence_index")) == sorted(units)
    worker = model.first().worker
    assert worker.provider == "llm" and str(worker) == "llm:tiny-gpt2" and not worker.user.has_usable_password()
    for j in model:
        assert (j.factual and j.categories == []) or (not j.factual and j.categories and set(j.categories) <= set(CODES))
    assert len({j.factual for j in model}) >= 1

    # human aggregates never see the model's labels
    data = load_analysis_data(campaign)
    assert set(data.judgements["worker_id"]) == {h.pk for h in humans}
    assert len(selectors.judgements_frame(campaign, selectors.Filters(), include_models=True)) == len(units) * 4
    counts = selectors.campaign_counts(campaign)
    assert (counts["workers"], counts["judgements"], counts["model_judgements"]) == (3, len(units) * 3, len(units))
    # exports and the API hold people's judgements unless the model's are asked for
    from annotate.exporters.tabular import ExportFilters, campaign_judgements

    assert set(campaign_judgements(campaign).values_list("worker_id", flat=True)) == {h.pk for h in humans}
    assert set(campaign_judgements(campaign, ExportFilters(annotators="model")).values_list("worker_id", flat=True)) == {worker.pk}
    assert campaign_judgements(campaign, ExportFilters(annotators="all")).count() == len(units) * 4
    api = Client()
    api.force_login(get_user_model().objects.create_superuser("llm-admin", password="pw-llm-admin-1"))
    url = f"/api/campaigns/{campaign.slug}/judgements/?page_size=200"
    assert len(api.get(url).json()["results"]) == len(units) * 3
    assert len(api.get(url + "&annotators=model").json()["results"]) == len(units)
    assert len(api.get(url + "&annotators=all").json()["results"]) == len(units) * 4
    assert api.get(url + "&annotators=robots").status_code == 400
    frank_export = api.get(f"/api/campaigns/{campaign.slug}/export/?format=jsonl&rows=judgements")
    exported = [json.loads(line) for line in b"".join(frank_export.streaming_content).decode().splitlines() if line]
    judgement_rows = [row for row in exported if row["record_type"] == "judgement"]
    assert len(judgement_rows) == len(units) * 3 and {row["source"] for row in judgement_rows} == {"imported"}

    # the report section, against a hand computation
    section = llm_annotator_section(campaign, data)
    labels = {(j.summary_id, j.sentence_index, j.worker_id): j.factual for j in SentenceJudgement.objects.all()}
    majority = [sum(labels[(s, i, h.pk)] for h in humans) >= 1.5 for s, i in units]
    llm = [labels[(s, i, worker.pk)] for s, i in units]
    entry = section["models"][0]
    assert entry["name"] == "llm:tiny-gpt2" and entry["n_sentences"] == len(units)
    if len(set(llm)) > 1 or len(set(majority)) > 1:
        assert entry["kappa_vs_majority"] == pytest.approx(_cohen(llm, majority), abs=1e-9)
    human_kappas = []
    for h in humans:
        others = [w for w in humans if w != h]
        loo = [sum(labels[(s, i, w.pk)] for w in others) >= 1 for s, i in units]  # 2 others: ties factual
        own = [labels[(s, i, h.pk)] for s, i in units]
        human_kappas.append(_cohen(own, loo))
    assert section["human_kappa_vs_others"]["mean"] == pytest.approx(sum(human_kappas) / 3, abs=1e-9)
    pairwise = [_cohen([labels[(s, i, a.pk)] for s, i in units], [labels[(s, i, b.pk)] for s, i in units])
                for a, b in itertools.combinations(humans, 2)]
    assert section["human_pairwise_kappa"]["mean"] == pytest.approx(sum(pairwise) / 3, abs=1e-9)
    if entry["kappa_vs_majority"] is not None:
        assert entry["rank_among_humans"] == 1 + sum(k > entry["kappa_vs_majority"] for k in human_kappas)
    assert build_report(campaign)["llm_annotators"]["models"][0]["name"] == "llm:tiny-gpt2"

    # a rerun asks nothing (response cache) and replaces, never duplicates, the judgements
    again = submit_llm_annotation(campaign=campaign, chunk_size=4, sync=True)
    assert again.status == "done" and len(llm_env.requests) == before + len(units)
    assert SentenceJudgement.objects.filter(source=JudgementSource.MODEL).count() == len(units)


@pytest.mark.django_db
def test_invalid_json_fails_the_chunk_clearly_and_stores_nothing(llm_env):  # noqa: F811
    from metrics_service.llm_annotation import submit_llm_annotation
    from tests.factories import make_campaign, make_document

    campaign = make_campaign()
    make_document(campaign, summaries=[["Helen Carter opposed the budget.", "The vote was unanimous."]])
    units = [0, 1]
    llm_env.ignore_response_format = True  # a server without constrained decoding: a random model's free text
    before = len(llm_env.requests)
    job = submit_llm_annotation(campaign=campaign, config={"attempts": 2, "concurrency": 1}, chunk_size=100, sync=True)
    assert job.status == "failed"
    assert "unusable answers" in job.error and "FRANK judgement" in job.error
    assert len(llm_env.requests) - before == 2 * len(units)  # each sentence asked twice (the retry)
    assert not SentenceJudgement.objects.filter(source=JudgementSource.MODEL).exists()


@pytest.mark.django_db
def test_command_and_api_action(llm_env, admin_client, admin_user, django_capture_on_commit_callbacks):  # noqa: F811
    from tests.factories import make_campaign

    campaign, _, units = _campaign_with_humans()
    out = io.StringIO()
    call_command("llm_annotate", "--campaign", campaign.slug, "--sync", "--config", "concurrency=2", stdout=out)
    assert "llm_frank (FACTLAB_LLM_MODEL): done" in out.getvalue()
    assert SentenceJudgement.objects.filter(source=JudgementSource.MODEL).count() == len(units)
    from django.core.cache import cache
    from django.test import Client

    cache.clear()
    browser = Client()
    browser.force_login(admin_user)
    html = browser.get(f"/campaigns/{campaign.slug}/dashboard/").content.decode()
    assert "LLM annotators beside the humans" in html and "llm:tiny-gpt2" in html
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command("llm_annotate", "--campaign", "nope", "--sync")

    bump = make_campaign(kind="bump_taxonomy")
    url = f"/api/campaigns/{campaign.slug}/scoring-jobs/llm-annotation/"
    with django_capture_on_commit_callbacks(execute=True):
        created = admin_client.post(url, {"model": "tiny-gpt2", "chunk_size": 3}, format="json")
    assert created.status_code == 201, created.content
    progress = admin_client.get(f"/api/campaigns/{campaign.slug}/scoring-jobs/{created.json()['id']}/").json()
    assert progress["status"] == "done" and progress["metric"] == "llm_frank" and progress["total"] == len(make_summaries(campaign))
    refused = admin_client.post(f"/api/campaigns/{bump.slug}/scoring-jobs/llm-annotation/", {}, format="json")
    assert refused.status_code == 400 and "the LLM annotator does the FRANK task" in refused.json()["detail"]
    # as a plain metric on a BUMP campaign the chunk fails at once, storing nothing
    from metrics_service.scoring.jobs import submit_scoring_job
    from tests.factories import make_bump_document

    make_bump_document(bump)
    plain = submit_scoring_job(metric="llm_frank", campaign=bump, sync=True)
    assert plain.status == "failed" and "the LLM annotator does the FRANK task" in plain.error
    bad_host = admin_client.post(url, {"config": {"base_url": "http://10.0.0.1/v1"}}, format="json")
    assert bad_host.status_code == 400 and "not an allowed LLM endpoint" in bad_host.json()["detail"]
    assert admin_client.post(url, {"chunk_size": 0}, format="json").status_code == 400


def make_summaries(campaign) -> list[int]:
    return list(Summary.objects.filter(document__campaign=campaign, is_reference=False).values_list("id", flat=True))
