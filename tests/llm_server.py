"""A small OpenAI-compatible server for the LLM-judge tests, backed by a HuggingFace causal LM.

Serves ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions`` over real HTTP
(stdlib ``ThreadingHTTPServer``), decoding greedily with the model and returning ``logprobs`` /
``top_logprobs`` when asked. Like vLLM it supports constrained decoding:

* ``structured_outputs: {"choice": [...]}`` (or ``guided_choice``): the answer is the choice the model
  scores highest; the reported log-probabilities of the first token are renormalised over the allowed
  first tokens (vLLM's "processed" log-probabilities);
* ``response_format: {"type": "json_schema", ...}`` for schemas made of objects, ``anyOf`` branches told
  apart by a ``const`` first property, booleans, enums and arrays of enums with ``minItems`` / ``maxItems``:
  every choice point is decided by the model's score of each allowed continuation.

Test switches on the :class:`LLMServer` object: ``fail_next`` (answer that many requests with HTTP 503),
``ignore_response_format`` / ``ignore_choice`` (free decoding, as a server without constrained decoding),
``no_logprobs``; ``requests`` records every request body received.

Run by hand: ``python -m tests.llm_server MODEL_DIR --port 8001``.
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


class TinyCausalLM:
    """Greedy decoding and continuation scoring with a causal LM (prompt cut to the model's window)."""

    def __init__(self, directory: str | Path):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(directory)
        self.model = AutoModelForCausalLM.from_pretrained(directory).eval()
        self.window = int(getattr(self.model.config, "n_positions", 512))
        self.lock = threading.Lock()

    @staticmethod
    def render(messages: list[dict[str, str]]) -> str:
        """The chat template: one ``role: content`` line per message, then ``assistant:``."""
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _fit(self, ids: list[int], room: int) -> list[int]:
        return ids[-(self.window - room):]

    def next_logprobs(self, ids: list[int]):
        import torch

        with self.lock, torch.no_grad():
            logits = self.model(torch.tensor([self._fit(ids, 1)])).logits[0, -1]
        return torch.log_softmax(logits.double(), -1)

    def continuation_logprob(self, ids: list[int], continuation: list[int]) -> float:
        import torch

        full = self._fit(ids + continuation, 0)
        with self.lock, torch.no_grad():
            logprobs = torch.log_softmax(self.model(torch.tensor([full])).logits[0].double(), -1)
        start = len(full) - len(continuation)
        return float(sum(logprobs[start - 1 + k, tok] for k, tok in enumerate(continuation)))

    def choose(self, ids: list[int], candidates: list[str]) -> str:
        scores = [self.continuation_logprob(ids, self.encode(c)) for c in candidates]
        return candidates[max(range(len(candidates)), key=scores.__getitem__)]

    def token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id])


class SchemaDecoder:
    """Decodes JSON following a (small) JSON schema, each choice decided by the model's scores."""

    def __init__(self, lm: TinyCausalLM, prompt_ids: list[int]):
        self.lm, self.prompt_ids, self.text = lm, prompt_ids, ""

    def emit(self, piece: str) -> None:
        self.text += piece

    def pick(self, candidates: list[str]) -> str:
        choice = candidates[0] if len(candidates) == 1 else self.lm.choose(self.prompt_ids + self.lm.encode(self.text), candidates)
        self.emit(choice)
        return choice

    def value(self, schema: dict[str, Any]) -> None:
        if "anyOf" in schema or "oneOf" in schema:
            self.branches(schema.get("anyOf") or schema["oneOf"])
        elif "const" in schema:
            self.emit(json.dumps(schema["const"]))
        elif "enum" in schema:
            self.pick([json.dumps(v) for v in schema["enum"]])
        elif schema.get("type") == "boolean":
            self.pick(["true", "false"])
        elif schema.get("type") == "object":
            self.object(schema, list(schema.get("properties", {})))
        elif schema.get("type") == "array":
            self.array(schema)
        else:
            raise ValueError(f"schema not supported by the test server: {schema}")

    def object(self, schema: dict[str, Any], keys: list[str], opened: bool = False) -> None:
        if not opened:
            self.emit("{")
        for n, key in enumerate(keys):
            if n or opened:
                self.emit(", ")
            self.emit(f"{json.dumps(key)}: ")
            self.value(schema["properties"][key])
        self.emit("}")

    def branches(self, branches: list[dict[str, Any]]) -> None:
        key = next(iter(branches[0]["properties"]))
        by_value = {json.dumps(b["properties"][key]["const"]): b for b in branches}
        self.emit("{" + f"{json.dumps(key)}: ")
        chosen = by_value[self.pick(list(by_value))]
        self.object(chosen, [k for k in chosen["properties"] if k != key], opened=True)

    def array(self, schema: dict[str, Any]) -> None:
        items = [json.dumps(v) for v in schema.get("items", {}).get("enum", [])]
        low, high = int(schema.get("minItems", 0)), int(schema.get("maxItems", len(items)))
        self.emit("[")
        used: list[str] = []
        while True:
            options = ["]"] if len(used) >= low else []
            if len(used) < high:
                options += [(", " if used else "") + item for item in items if item not in used]
            choice = self.pick(options or ["]"])
            if choice == "]":
                return
            used.append(choice.removeprefix(", "))


class LLMServer:
    """The server and its test switches; ``base_url`` ends in ``/v1``."""

    def __init__(self, model_dir: str | Path, host: str = "127.0.0.1", port: int = 0, model_name: str = "tiny-gpt2"):
        self.lm = TinyCausalLM(model_dir)
        self.model_name = model_name
        self.fail_next = 0
        self.ignore_response_format = False
        self.ignore_choice = False
        self.no_logprobs = False
        self.requests: list[dict[str, Any]] = []
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.base_url = f"http://{host}:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> LLMServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- endpoints ------------------------------------------------------------------------------
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt_ids = self.lm.encode(self.lm.render(body["messages"]))
        choices = (body.get("structured_outputs") or {}).get("choice") or body.get("guided_choice")
        response_format = body.get("response_format") or {}
        want_logprobs = bool(body.get("logprobs")) and not self.no_logprobs
        top_k = int(body.get("top_logprobs") or 0)
        logprobs = None
        if choices and not self.ignore_choice:
            text = self.lm.choose(prompt_ids, list(choices))
            if want_logprobs:
                logprobs = self._choice_logprobs(prompt_ids, list(choices), text, top_k)
        elif response_format.get("type") == "json_schema" and not self.ignore_response_format:
            decoder = SchemaDecoder(self.lm, prompt_ids)
            decoder.value(response_format["json_schema"]["schema"])
            text = decoder.text
        else:
            text, logprobs = self._greedy(prompt_ids, int(body.get("max_tokens") or 16), want_logprobs, top_k)
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()), "model": self.model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": {"content": logprobs} if logprobs is not None else None}],
            "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": len(self.lm.encode(text)), "total_tokens": 0},
        }

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt_ids = self.lm.encode(str(body["prompt"]))
        k = int(body.get("logprobs") or 0)
        text, entries = self._greedy(prompt_ids, int(body.get("max_tokens") or 16), k > 0, k)
        logprobs = None
        if entries is not None:
            logprobs = {"tokens": [e["token"] for e in entries], "token_logprobs": [e["logprob"] for e in entries],
                        "top_logprobs": [{t["token"]: t["logprob"] for t in e["top_logprobs"]} for e in entries], "text_offset": []}
        return {"id": "cmpl-0", "object": "text_completion", "created": int(time.time()), "model": self.model_name,
                "choices": [{"index": 0, "text": text, "finish_reason": "length", "logprobs": logprobs}]}

    def _entry(self, logprobs, token_id: int, top_k: int) -> dict[str, Any]:
        import torch

        values, ids = torch.topk(logprobs, min(top_k, logprobs.shape[0])) if top_k else (torch.zeros(0), torch.zeros(0, dtype=torch.long))
        return {"token": self.lm.token_text(token_id), "logprob": float(logprobs[token_id]), "bytes": None,
                "top_logprobs": [{"token": self.lm.token_text(int(i)), "logprob": float(v), "bytes": None} for v, i in zip(values, ids)]}

    def _greedy(self, prompt_ids: list[int], max_tokens: int, want_logprobs: bool, top_k: int) -> tuple[str, list | None]:
        import torch

        max_tokens = max(0, min(max_tokens, self.lm.window // 2))
        generated, entries = [], []
        with self.lm.lock, torch.no_grad():  # incremental decoding with the key/value cache
            out = self.lm.model(torch.tensor([self.lm._fit(prompt_ids, max_tokens)]), use_cache=True)
            for _ in range(max_tokens):
                logprobs = torch.log_softmax(out.logits[0, -1].double(), -1)
                token = int(logprobs.argmax())
                if token == self.lm.tokenizer.eos_token_id:
                    break
                entries.append(self._entry(logprobs, token, top_k))
                generated.append(token)
                out = self.lm.model(torch.tensor([[token]]), past_key_values=out.past_key_values, use_cache=True)
        return self.lm.tokenizer.decode(generated), (entries if want_logprobs else None)

    def _choice_logprobs(self, prompt_ids: list[int], choices: list[str], text: str, top_k: int) -> list[dict[str, Any]]:
        import torch

        raw = self.lm.next_logprobs(prompt_ids)
        firsts = sorted({self.lm.encode(c)[0] for c in choices})
        processed = torch.full_like(raw, float("-inf"))
        processed[firsts] = torch.log_softmax(raw[firsts], -1)
        return [self._entry(processed, self.lm.encode(text)[0], min(top_k, len(firsts)))]


def _handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet in tests
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": server.model_name, "object": "model", "owned_by": "factlab-tests"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            server.requests.append(body)
            if server.fail_next > 0:
                server.fail_next -= 1
                self._send(503, {"error": {"message": "overloaded (test switch)", "type": "server_error"}})
                return
            if body.get("model") != server.model_name:
                self._send(404, {"error": {"message": f"model {body.get('model')!r} is not served", "type": "not_found"}})
                return
            routes = {"/v1/chat/completions": server.chat, "/v1/completions": server.completion}
            route = routes.get(self.path.rstrip("/"))
            if route is None:
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                self._send(200, route(body))
            except (KeyError, ValueError, TypeError) as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})

    return Handler


@pytest.fixture(scope="session")
def llm_server(tiny_causal_lm_dir):
    """The server on a free local port, for the whole test session (import ``tiny_causal_lm_dir`` too)."""
    server = LLMServer(tiny_causal_lm_dir).start()
    yield server
    server.stop()


def _reset(server: LLMServer) -> None:
    server.fail_next = 0
    server.ignore_response_format = server.ignore_choice = server.no_logprobs = False


@pytest.fixture
def llm_env(llm_server, tmp_path, monkeypatch):
    """The server as the configured endpoint (``FACTLAB_LLM_*``), its switches reset, and a fresh response cache."""
    monkeypatch.setenv("FACTLAB_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("FACTLAB_LLM_MODEL", llm_server.model_name)
    monkeypatch.setenv("FACTLAB_LLM_CACHE", str(tmp_path / "llm-cache.sqlite3"))
    from metrics_service.scoring import registry

    registry._SCORER_CACHE.clear()  # scorers of earlier tests hold clients bound to their own cache files
    _reset(llm_server)
    yield llm_server
    _reset(llm_server)
    registry._SCORER_CACHE.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--name", default="tiny-gpt2")
    args = parser.parse_args()
    server = LLMServer(args.model_dir, args.host, args.port, args.name)
    print(f"serving {args.model_dir} as {args.name!r} on {server.base_url}", flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
