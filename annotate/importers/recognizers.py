"""Content recognizers of the generic dataset formats (QAGS, FactLab's JSON lines, AggreFact, LLM-AggreFact):
each says whether a file's sample looks like its format, and why (see :mod:`annotate.importers.sniff`)."""
from __future__ import annotations

from .aggrefact import AGGREFACT_COLUMNS, LLM_AGGREFACT_COLUMNS
from .sniff import Recognition, Sample


def recognize_qags(sample: Sample) -> Recognition | None:
    if sample.shape == "json-lines" and {"article", "summary_sentences"} <= sample.keys:
        return Recognition("JSON lines whose records have 'article' and 'summary_sentences' (QAGS' MTurk files)")
    return None


def recognize_jsonl(sample: Sample) -> Recognition | None:
    if sample.shape == "json-lines" and {"id", "text", "summaries"} <= sample.keys:
        return Recognition("JSON lines whose records have 'id', 'text' and 'summaries' (FactLab's own format)")
    return None


def recognize_aggrefact(sample: Sample) -> Recognition | None:
    if sample.shape == "csv" and set(AGGREFACT_COLUMNS) <= sample.keys:
        return Recognition(f"a CSV file with AggreFact's columns ({', '.join(AGGREFACT_COLUMNS)})")
    return None


def recognize_llm_aggrefact(sample: Sample) -> Recognition | None:
    if sample.shape in ("csv", "json-lines") and set(LLM_AGGREFACT_COLUMNS) <= sample.keys and "summary" not in sample.keys:
        return Recognition(f"document-claim pairs with LLM-AggreFact's fields ({', '.join(LLM_AGGREFACT_COLUMNS)})")
    return None
