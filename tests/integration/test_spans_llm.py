"""An LLM as a span annotator: it answers under the span JSON schema (a real OpenAI-compatible server with a tiny
model and constrained decoding), its answer passes the worker's submit check, is stored by a marked model
worker, and the report sets its span F1 and alpha against the human majority beside the human-human figures."""
from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from annotate.services.errors import InvalidSubmission
from annotate.services.imports import import_dataset
from annotate.spans import llm
from annotate.spans.llm import annotate_campaign, model_answer, response_format, to_payload
from annotate.spans.models import SpanAnswer
from annotate.spans.report import span_report
from annotate.spans.words import words
from metrics_service.llm_annotation import llm_worker
from metrics_service.scorers.llm import LLMClient, LLMEndpoint, ResponseCache
from tests.factories import make_campaign
from tests.llm_server import llm_env, llm_server  # noqa: F401 (fixtures)
from tests.tiny_models import tiny_causal_lm_dir  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[2] / "annotate" / "spans" / "testdata"
WORDS = ["The", "museum", "reopened", "on", "Friday", "."]


def test_a_model_answer_is_checked_like_a_workers():
    assert doctest.testmod(llm).failed == 0
    answer = {"verdict": "errors", "type": "extrinsic_np", "words": ["4:Friday"]}
    assert to_payload(answer, WORDS)["spans"] == [{"start": 4, "end": 5, "type": "extrinsic_np"}]
    with pytest.raises(InvalidSubmission, match="words must list words of the summary"):
        to_payload({**answer, "words": ["4:Monday"]}, WORDS)
    with pytest.raises(InvalidSubmission, match="verdict must be"):
        to_payload({"verdict": "maybe"}, WORDS)
    errors = response_format(WORDS)["json_schema"]["schema"]["anyOf"][1]["properties"]
    assert errors["words"]["items"]["enum"] == [f"{i}:{w}" for i, w in enumerate(WORDS)] and errors["words"]["minItems"] == 1


@pytest.mark.slow
def test_an_llm_annotates_spans_through_the_protocol_and_stands_beside_the_humans(llm_env, tmp_path):  # noqa: F811
    campaign = make_campaign(kind="spans", redundancy=5)
    import_dataset("span_records", [SAMPLES / "goyal_style.json", SAMPLES / "cliff_style.jsonl"], campaign_slug=campaign.slug)
    endpoint = LLMEndpoint.resolve()
    client = LLMClient(endpoint, ResponseCache(str(tmp_path / "cache.sqlite3")), concurrency=1)

    def ask(messages, response_format):
        return client.chat(messages, response_format=response_format, temperature=0.0, max_tokens=400)[0]["text"]

    worker = llm_worker(endpoint.model)
    assert annotate_campaign(campaign, worker, ask) == 5
    stored = SpanAnswer.objects.filter(source="model")
    assert stored.count() == 5 and {a.worker_id for a in stored} == {worker.pk} and all(a.assignment_id is None for a in stored)
    assert worker.provider == "llm"
    # Every stored answer is a valid answer of its summary: spans within its words, types of the taxonomy.
    for answer in stored:
        n = len(words(answer.summary.text))
        assert all(0 <= s < e <= n for s, e, _ in answer.spans)
    # An answer outside the schema (as from a server without constrained decoding) is refused by name.
    summary = stored.first().summary
    with pytest.raises(InvalidSubmission):
        model_answer(lambda m, f: "The summary looks fine to me.", summary)

    section = span_report(campaign, n_resamples=50)
    model = section["agreement"]["models"][f"model:{worker.pk}"]
    assert set(model) == {"span_f1", "token_alpha"} and model["span_f1"]["pairs"] == 5
    assert section["agreement"]["human"]["span_f1"]["pairs"] > 0
    assert section["answers"] == SpanAnswer.objects.exclude(source="model").count()  # the model is not among the humans
    # Its marked words are measured as a detector's against the human spans.
    assert section["detectors"][f"model:{worker.pk}"]["any_error"]["n_error_words"] > 0
