"""A CPU OpenAI-compatible server: the sim's model of a vLLM / Dynamo frontend.

Run as `python -m simcluster.serving.server --port 8000 --model NAME ...`. It
serves `GET /health`, `GET /v1/models`, `POST /v1/completions` and
`POST /v1/chat/completions`, streamed as server-sent events when the request
says `"stream": true`. A completion ends at the model's EOS, as vLLM's does: here
each token after the first is EOS with probability `EOS_CHANCE` (`finish_reason`
"stop"), never before vLLM's `min_tokens`; it runs to `max_tokens` (or
`max_completion_tokens`, default 16; `finish_reason` "length") only when the request
sets vLLM's `ignore_eos`, or when no EOS came first. The first token comes after
`--first-token-ms`, the rest at `--tokens-per-second` per request, so the
aggregate output rate grows with concurrency as a batching server's does.
`usage` is reported (on the last chunk when `stream_options.include_usage`).
`GET /metrics` serves vLLM v0.11.0's Prometheus names for what the requests did
(simcluster.serving.metrics).

Failure modes (`--mode`): `ready` (default); `never-ready`, whose health and
API answer 503 forever (a model that never loads: the pod is never Ready);
`slow-health`, whose `/health` answers at once while completions answer 503
for `--health-delay` seconds after start (a frontend up before its workers have
loaded the model).
Standard library only: it runs with the host's interpreter.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from simcluster.serving.metrics import Metrics

DEFAULT_MAX_TOKENS = 16
EOS_CHANCE = 1 / 64  # the stand-in model's: a mean completion of about 64 tokens
WORD = "tok"  # every output token is this word and a space


class Behaviour:
    """What the server plays: its model, speed and failure mode."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.model = str(args.model)
        self.rate = float(args.tokens_per_second)
        self.first_token = float(args.first_token_ms) / 1000.0
        self.mode = str(args.mode)
        self.rng = random.Random()
        self.ready_at = time.monotonic() + (
            float(args.health_delay) if self.mode == "slow-health" else 0.0
        )
        self.metrics = Metrics(self.model, int(args.max_model_len), int(args.kv_cache_tokens))

    def loading(self) -> bool:
        """True while the model is not (yet) serving completions."""
        return self.mode == "never-ready" or time.monotonic() < self.ready_at

    def healthy(self) -> bool:
        """True when `/health` answers 200 (a slow-health frontend is up before its model)."""
        return self.mode != "never-ready"


def _prompt_tokens(body: dict[str, Any]) -> int:
    if isinstance(body.get("messages"), list):
        text = " ".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
    else:
        prompt = body.get("prompt", "")
        text = " ".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)
    return len(text.split())


def _max_tokens(body: dict[str, Any]) -> int:
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def _ignore_eos(body: dict[str, Any]) -> bool:
    """vLLM's `ignore_eos` sampling parameter (its pydantic model takes "true" too)."""
    return body.get("ignore_eos") in (True, "true", "True", 1)


def output_tokens(body: dict[str, Any], rng: random.Random) -> tuple[int, str]:
    """How many tokens the completion gets, and its finish reason."""
    most = _max_tokens(body)
    if _ignore_eos(body):
        return most, "length"
    least = body.get("min_tokens") if isinstance(body.get("min_tokens"), int) else 0
    for n in range(1, most):
        if n >= least and rng.random() < EOS_CHANCE:
            return n, "stop"
    return most, "length"


class Handler(BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 keep-alive, chunked bodies for streams."""

    protocol_version = "HTTP/1.1"
    behaviour: Behaviour  # set on the subclass `serve` makes

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the load generator's requests would flood the pod log."""

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _loading(self, serving: bool = True) -> bool:
        """Answer 503 while the model (with `serving` False: the process) is not up."""
        down = self.behaviour.loading() if serving else not self.behaviour.healthy()
        if down:
            error = {"message": "model is loading", "type": "unavailable"}
            self._send_json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": error})
            return True
        return False

    def do_GET(self) -> None:
        """Health and the model list."""
        if self.path.split("?")[0] == "/health":
            if not self._loading(serving=False):
                self._send_json(HTTPStatus.OK, {"status": "ok"})
        elif self.path.split("?")[0] == "/metrics":
            data = self.behaviour.metrics.render().encode()
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path.split("?")[0] == "/v1/models":
            if not self._loading():
                model = {"id": self.behaviour.model, "object": "model", "owned_by": "aicr-sim"}
                self._send_json(HTTPStatus.OK, {"object": "list", "data": [model]})
        else:
            self._send_json(HTTPStatus.NOT_FOUND, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        """Completions, streamed or whole."""
        route = self.path.split("?")[0]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send_json(HTTPStatus.BAD_REQUEST, {"error": {"message": "body is not JSON"}})
            return
        if route not in ("/v1/completions", "/v1/chat/completions"):
            self._send_json(HTTPStatus.NOT_FOUND, {"error": {"message": "not found"}})
            return
        if self._loading():
            return
        if body.get("model") not in (None, self.behaviour.model):
            self._send_json(
                HTTPStatus.NOT_FOUND,
                {"error": {"message": f"the model `{body.get('model')}` does not exist"}},
            )
            return
        chat = route.endswith("chat/completions")
        tokens, finish = output_tokens(body, self.behaviour.rng)
        reply = Reply(self.behaviour, chat, _prompt_tokens(body), tokens, finish)
        metrics = self.behaviour.metrics
        metrics.started(id(reply), reply.prompt_tokens)
        reason = "abort"  # unless the answer is sent whole
        try:
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(reply, include_usage)
            else:
                reply.wait_all()
                for i in range(reply.tokens):
                    metrics.token(id(reply), reply.gap(i), first=i == 0)
                self._send_json(HTTPStatus.OK, reply.whole())
            reason = reply.finish
        finally:
            metrics.finished(id(reply), reply.prompt_tokens, reply.tokens, reason, reply.elapsed())

    def _stream(self, reply: Reply, include_usage: bool) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(reply.tokens):
            reply.wait_token(i)
            self.behaviour.metrics.token(id(reply), reply.gap(i), first=i == 0)
            self._event(reply.chunk(i))
        if include_usage:
            self._event(reply.usage_chunk())
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _event(self, data: Any) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        payload = f"data: {text}\n\n".encode()
        self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
        self.wfile.flush()


class Reply:
    """One request's answer: its tokens and when each is due."""

    def __init__(
        self, behaviour: Behaviour, chat: bool, prompt_tokens: int, tokens: int, finish: str
    ) -> None:
        self.b, self.chat, self.tokens, self.finish = behaviour, chat, tokens, finish
        self.prompt_tokens = prompt_tokens
        self.id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        self.created = int(time.time())
        self.start = time.monotonic()

    def due(self, i: int) -> float:
        """When token ``i`` (from 0) is produced."""
        return self.start + self.b.first_token + (i / self.b.rate if self.b.rate > 0 else 0.0)

    def gap(self, i: int) -> float:
        """Seconds between token ``i`` and the one before it (the request's arrival for 0)."""
        return self.due(i) - (self.due(i - 1) if i > 0 else self.start)

    def elapsed(self) -> float:
        """Seconds since the request arrived."""
        return time.monotonic() - self.start

    def wait_token(self, i: int) -> None:
        """Sleep until token ``i`` is due."""
        delay = self.due(i) - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def wait_all(self) -> None:
        """Sleep until the last token is due."""
        self.wait_token(self.tokens - 1)

    def _base(self) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self.chat else "text_completion"
        return {"id": self.id, "object": kind, "created": self.created, "model": self.b.model}

    def usage(self) -> dict[str, int]:
        """The OpenAI usage block."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.tokens,
            "total_tokens": self.prompt_tokens + self.tokens,
        }

    def chunk(self, i: int) -> dict[str, Any]:
        """Streamed chunk ``i``; the last carries the finish reason."""
        finish = self.finish if i == self.tokens - 1 else None
        if self.chat:
            delta: dict[str, Any] = {"content": WORD + " "}
            if i == 0:
                delta["role"] = "assistant"
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": WORD + " ", "finish_reason": finish}
        return {**self._base(), "choices": [choice]}

    def usage_chunk(self) -> dict[str, Any]:
        """The final chunk with no choices and the usage, as `include_usage` asks."""
        return {**self._base(), "choices": [], "usage": self.usage()}

    def whole(self) -> dict[str, Any]:
        """The non-streamed answer."""
        text = (WORD + " ") * self.tokens
        base = self._base()
        if self.chat:
            base["object"] = "chat.completion"
            message = {"role": "assistant", "content": text}
            choice: dict[str, Any] = {"index": 0, "finish_reason": self.finish, "message": message}
        else:
            choice = {"index": 0, "finish_reason": self.finish, "text": text}
        return {**base, "choices": [choice], "usage": self.usage()}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The server's flags."""
    p = argparse.ArgumentParser(prog="simcluster.serving.server", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--model", default="Qwen/Qwen3-0.6B")
    p.add_argument(
        "--tokens-per-second",
        type=float,
        default=200.0,
        help="output tokens per second of each request",
    )
    p.add_argument("--first-token-ms", type=float, default=20.0)
    p.add_argument("--mode", choices=("ready", "never-ready", "slow-health"), default="ready")
    p.add_argument(
        "--health-delay",
        type=float,
        default=30.0,
        help="seconds of 503 after start in slow-health mode",
    )
    p.add_argument(
        "--max-model-len",
        type=int,
        default=4096,
        help="the token histograms' largest bucket (vLLM's --max-model-len)",
    )
    p.add_argument(
        "--kv-cache-tokens",
        type=int,
        default=65536,
        help="tokens the KV cache holds (vllm:kv_cache_usage_perc is running tokens over it)",
    )
    return p.parse_args(argv)


def make_server(args: argparse.Namespace) -> ThreadingHTTPServer:
    """The bound server (``--port 0`` picks a free port: ``server.server_port``)."""
    handler = type("BoundHandler", (Handler,), {"behaviour": Behaviour(args)})
    server = ThreadingHTTPServer((args.host, args.port), handler)
    server.daemon_threads = True
    return server


def serve(args: argparse.Namespace) -> None:
    """Serve until killed."""
    server = make_server(args)
    print(
        f"serving {args.model} on {args.host}:{server.server_port} ({args.mode}, "
        f"{args.tokens_per_second} tok/s per request, first token {args.first_token_ms} ms)",
        flush=True,
    )
    server.serve_forever()


if __name__ == "__main__":
    serve(parse_args())
