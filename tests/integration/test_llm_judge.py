"""The LLM judge as a metric, against a real OpenAI-compatible HTTP server (tests/llm_server.py) backed by a
tiny causal LM built offline: probabilities from logprobs, parsed answers, retries, the response cache and
the chunked scoring jobs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.llm_server import llm_env, llm_server  # noqa: F401 (fixtures)
from tests.tiny_models import tiny_causal_lm_dir  # noqa: F401 (fixture)

DOCS = [
    "The cat sat on the mat. The dog slept in the garden all afternoon.",
    "Police arrested two men after the robbery at the bank on Main Street.",
    "The company reported record profits of 12 million dollars in the first quarter.",
]
SUMMARIES = ["The cat sat on the mat.", "Two women robbed a bank.", "Profits fell sharply."]


@pytest.fixture
def server(llm_env):  # noqa: F811
    return llm_env


def _judge(server, tmp_path, **config):
    from metrics_service.scorers import get_scorer

    return get_scorer("llm_judge", base_url=server.base_url, model="tiny-gpt2", **config)


def _yes_no_by_hand(model_dir, document: str, summary: str) -> float:
    """P(Yes) / (P(Yes) + P(No)) for the next token after the rendered prompt, from the model directly."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from metrics_service.scorers.llm_judge import judge_messages
    from tests.llm_server import TinyCausalLM

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = tok(TinyCausalLM.render(judge_messages(document, summary)), add_special_tokens=False)["input_ids"][-511:]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    pair = torch.softmax(logits[[tok.convert_tokens_to_ids("Yes"), tok.convert_tokens_to_ids("No")]], -1)
    return float(pair[0])


def test_probability_from_logprobs_matches_the_model(server, tmp_path, tiny_causal_lm_dir):  # noqa: F811
    scorer = _judge(server, tmp_path, concurrency=3)
    before = len(server.requests)
    got = scorer.score(DOCS, SUMMARIES)["llm_judge"]
    expected = [_yes_no_by_hand(tiny_causal_lm_dir, d, s) for d, s in zip(DOCS, SUMMARIES)]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert all(0.0 < v < 1.0 for v in got) and len(set(np.round(got, 6))) == 3
    sent = server.requests[before:]
    assert len(sent) == 3
    assert all(r["logprobs"] is True and r["max_tokens"] == 1 and r["structured_outputs"] == {"choice": ["Yes", "No"]} for r in sent)
    # a rerun (new scorer, same cache file) sends nothing and gives the same scores
    again = _judge(server, tmp_path).score(DOCS, SUMMARIES)["llm_judge"]
    assert again == got and len(server.requests) == before + 3


def test_parsed_answer_without_logprobs_and_retries(server, tmp_path, tiny_causal_lm_dir):  # noqa: F811
    server.no_logprobs = True
    server.fail_next = 2  # two HTTP 503s: the client retries with backoff
    before = len(server.requests)
    got = _judge(server, tmp_path, constraint="guided", concurrency=1).score(DOCS, SUMMARIES)["llm_judge"]
    expected = [1.0 if _yes_no_by_hand(tiny_causal_lm_dir, d, s) > 0.5 else 0.0 for d, s in zip(DOCS, SUMMARIES)]
    assert got == expected
    assert len(server.requests) == before + 3 + 2
    assert all(r.get("guided_choice") == ["Yes", "No"] for r in server.requests[before:])


def test_unusable_answers_are_retried_then_left_unscored(server, tmp_path):
    server.no_logprobs = server.ignore_choice = True  # free decoding by a random model: never yes/no
    before = len(server.requests)
    got = _judge(server, tmp_path, attempts=2).score(DOCS[:1], SUMMARIES[:1])["llm_judge"]
    assert math.isnan(got[0])
    asked = server.requests[before:]
    assert len(asked) == 2 and "previous answer was unusable" in asked[1]["messages"][-1]["content"]
    # nothing unusable was cached: the next run asks again
    _judge(server, tmp_path, attempts=1).score(DOCS[:1], SUMMARIES[:1])
    assert len(server.requests) == before + 3


def test_endpoint_errors_are_clear(server, tmp_path, monkeypatch):
    from metrics_service.scorers import ScorerError, get_scorer
    from metrics_service.scoring.registry import build_scorer

    with pytest.raises(ValueError, match="unknown constraint style 'regex'"):
        build_scorer("llm_judge", {"constraint": "regex"})
    # a job configuration cannot point the client at another host
    with pytest.raises(ValueError, match="base_url 'http://169.254.169.254/v1' is not an allowed LLM endpoint"):
        build_scorer("llm_judge", {"base_url": "http://169.254.169.254/v1"})
    monkeypatch.setenv("FACTLAB_LLM_BASE_URLS", "http://169.254.169.254/v1")
    assert build_scorer("llm_judge", {"base_url": "http://169.254.169.254/v1"}).endpoint.base_url == "http://169.254.169.254/v1"
    monkeypatch.delenv("FACTLAB_LLM_BASE_URL")
    with pytest.raises(ValueError, match="set FACTLAB_LLM_BASE_URL"):
        build_scorer("llm_judge", {})
    monkeypatch.setenv("FACTLAB_LLM_BASE_URL", server.base_url)
    scorer = get_scorer("llm_judge", model="no-such-model", max_retries=0)
    with pytest.raises(ScorerError, match="failed for model 'no-such-model'.*is not served"):
        scorer.score(DOCS[:1], SUMMARIES[:1])


@pytest.mark.django_db
def test_llm_judge_runs_as_a_resumable_scoring_job(server, tmp_path, tiny_causal_lm_dir):  # noqa: F811
    from annotate.models import MetricScore
    from metrics_service.scoring.jobs import submit_scoring_job
    from tests.factories import make_campaign, make_document

    campaign = make_campaign()
    for doc, summ in zip(DOCS, SUMMARIES):
        make_document(campaign, article=[doc], summaries=[[summ]], item=False)
    config = {"model": "tiny-gpt2", "concurrency": 2}
    before = len(server.requests)
    job = submit_scoring_job(metric="llm_judge", config=config, campaign=campaign, chunk_size=2, sync=True)
    assert job.status == "done" and job.done == 3 and job.queue == "cpu"
    stored = dict(MetricScore.objects.filter(metric="llm_judge", config_key=job.config_key).values_list("summary__text", "value"))
    for doc, summ in zip(DOCS, SUMMARIES):
        assert stored[summ] == pytest.approx(_yes_no_by_hand(tiny_causal_lm_dir, doc, summ), abs=1e-6)
    assert len(server.requests) == before + 3
    rerun = submit_scoring_job(metric="llm_judge", config=config, campaign=campaign, chunk_size=2, sync=True)
    assert rerun.status == "done" and rerun.config_key == job.config_key
    assert len(server.requests) == before + 3  # every answer came from the cache
