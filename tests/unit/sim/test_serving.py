"""The sim's inference stand-in: the OpenAI-compatible server, and how the runtime plays images."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from simcluster.cluster import paths
from simcluster.runtime import images
from simcluster.serving import server


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start a server on a free loopback port with the given flags; stop it afterwards."""
    started: list[Any] = []

    def start(*flags: str) -> int:
        srv = server.make_server(server.parse_args(["--port", "0", "--model", "org/m", *flags]))
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        started.append(srv)
        return int(srv.server_port)

    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, json.dumps(body) if body is not None else None,
                 {"Content-Type": "application/json"})  # fmt: skip
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, text


CHAT = {"model": "org/m", "messages": [{"role": "user", "content": "a b c"}], "max_tokens": 5,
        "ignore_eos": True}  # fmt: skip


def test_a_streamed_chat_sends_each_token_then_usage_then_done(serve: Any) -> None:
    port = serve("--tokens-per-second", "100", "--first-token-ms", "50")
    start = time.monotonic()
    status, text = call(
        port,
        "POST",
        "/v1/chat/completions",
        {**CHAT, "stream": True, "stream_options": {"include_usage": True}},
    )
    took = time.monotonic() - start
    events = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
    assert status == 200 and events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert [c["choices"][0]["delta"]["content"] for c in chunks[:5]] == ["tok "] * 5
    assert chunks[4]["choices"][0]["finish_reason"] == "length"
    assert chunks[5]["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    # first token after 50 ms, then 100 tokens/s: never sooner; the upper bound only says
    # it did not hang (a loaded machine may delay the answer, never hurry it)
    assert 0.05 + 4 / 100 <= took < 10.0


def test_whole_answers_and_the_model_list(serve: Any) -> None:
    port = serve()
    status, text = call(
        port,
        "POST",
        "/v1/completions",
        {"model": "org/m", "prompt": "x y", "max_tokens": 3, "ignore_eos": True},
    )
    answer = json.loads(text)
    assert status == 200 and answer["choices"][0]["text"] == "tok tok tok "
    assert answer["usage"]["completion_tokens"] == 3
    assert json.loads(call(port, "GET", "/v1/models")[1])["data"][0]["id"] == "org/m"
    assert call(port, "POST", "/v1/chat/completions", {**CHAT, "model": "other"})[0] == 404


def test_a_completion_ends_at_eos_unless_ignore_eos() -> None:
    rng = random.Random(7)
    body = {"max_tokens": 128}
    ended = [server.output_tokens(body, rng) for _ in range(200)]
    assert sum(n for n, _ in ended) / len(ended) < 100  # EOS about every 64 tokens
    assert {f for n, f in ended if n < 128} == {"stop"}
    assert {server.output_tokens({**body, "ignore_eos": True}, rng) for _ in range(20)} == {
        (128, "length")}  # fmt: skip
    assert min(server.output_tokens({**body, "min_tokens": 100}, rng)[0] for _ in range(50)) >= 100


def test_never_ready_answers_503_to_health(serve: Any) -> None:
    port = serve("--mode", "never-ready")
    assert call(port, "GET", "/health")[0] == 503
    assert call(port, "POST", "/v1/chat/completions", CHAT)[0] == 503


def test_slow_health_is_up_before_it_serves(serve: Any) -> None:
    port = serve("--mode", "slow-health", "--health-delay", "0.3")
    assert call(port, "GET", "/health")[0] == 200
    assert call(port, "POST", "/v1/chat/completions", CHAT)[0] == 503
    time.sleep(0.35)
    assert call(port, "POST", "/v1/chat/completions", CHAT)[0] == 200


def node(*faults: str) -> dict[str, Any]:
    return {"metadata": {"name": "g", "annotations": {"sim.aicr.dev/gpu-fault": ",".join(faults)}}}


VLLM = {"image": "docker.io/vllm/vllm-openai:v0.11.0"}


@pytest.mark.parametrize(
    ("faults", "rate", "first", "mode"),
    [((), "200.0", "20.0", None), (("inference-slow",), "50.0", "20.0", None),
     (("inference-slow-first-token",), "200.0", "1500.0", None),
     (("model-loading",), "200.0", "20.0", "slow-health")],
    ids=["healthy", "slow", "slow-first-token", "model-loading"],
)  # fmt: skip
def test_vllm_serve_becomes_the_stand_in_at_the_nodes_speed(
    faults: tuple[str, ...], rate: str, first: str, mode: str | None
) -> None:
    argv = ["vllm", "serve", "org/m", "--port", "8001", "--served-model-name", "served"]
    played = images.play(VLLM, argv, {"PATH": "/bin"}, node(*faults), "/py")
    assert played.argv[:3] == ["/py", "-m", "simcluster.serving.server"]
    flags = dict(zip(played.argv[3::2], played.argv[4::2], strict=False))
    assert (flags["--port"], flags["--model"], flags["--host"]) == ("8001", "served", "0.0.0.0")
    assert (flags["--tokens-per-second"], flags["--first-token-ms"]) == (rate, first)
    assert flags.get("--mode") == mode
    assert played.env["PYTHONPATH"] == str(paths.SIM_ROOT) and played.problem is None


def test_the_load_generator_runs_from_the_sim_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_SIM_CACHE", str(tmp_path))
    aiperf = {"image": "ghcr.io/aicr-dev/aicr-aiperf:0.13.0"}
    argv = ["sh", "-c", "aiperf profile"]
    missing = images.play(aiperf, argv, {"PATH": "/bin"}, node())
    assert missing.problem is not None and "run hack/sim/loadgen.sh" in missing.problem
    home = images.loadgen_dir()
    assert home.parent == tmp_path and home.name.startswith("aiperf-0.13.0_")
    home.mkdir()
    (home / "complete").touch()
    played = images.play(aiperf, argv, {"PATH": "/bin"}, node())
    assert (played.argv, played.problem) == (argv, None)
    assert played.env == {"PATH": f"{home}/venv/bin:/bin", "HF_HOME": f"{home}/hf"}
    assert images.plays(aiperf) and images.plays(VLLM) and not images.plays({"image": "busybox"})


def test_the_requirements_pin_the_pinned_aiperf() -> None:
    pins = paths.read_pins()["AIPERF_VERSION"]
    lines = (paths.SIM_ROOT / "loadgen-requirements.txt").read_text().splitlines()
    assert f"aiperf=={pins}" in lines
    assert all("==" in line for line in lines if line and not line.startswith("#"))


# ---- /metrics: vLLM v0.11.0's names -------------------------------------------------------
# vllm-project/vllm v0.11.0, vllm/v1/metrics/loggers.py (PrometheusStatLogger): what a
# default `vllm serve` registers (the families the stand-in plays), as exposed.
V0_11_0 = {
    "vllm:num_requests_running": ("gauge", "Number of requests in model execution batches."),
    "vllm:num_requests_waiting": ("gauge", "Number of requests waiting to be processed."),
    "vllm:kv_cache_usage_perc": ("gauge", "KV-cache usage. 1 means 100 percent usage."),
    "vllm:prompt_tokens": ("counter", "Number of prefill tokens processed."),
    "vllm:generation_tokens": ("counter", "Number of generation tokens processed."),
    "vllm:request_success": ("counter", "Count of successfully processed requests."),
    "vllm:request_prompt_tokens": ("histogram", "Number of prefill tokens processed."),
    "vllm:request_generation_tokens": ("histogram", "Number of generation tokens processed."),
    "vllm:time_to_first_token_seconds": ("histogram",
                                         "Histogram of time to first token in seconds."),
    "vllm:time_per_output_token_seconds": (
        "histogram", "Histogram of time per output token in seconds.DEPRECATED: Use "
        "vllm:inter_token_latency_seconds instead."),
    "vllm:inter_token_latency_seconds": ("histogram",
                                         "Histogram of inter-token latency in seconds."),
    "vllm:e2e_request_latency_seconds": ("histogram",
                                         "Histogram of e2e request latency in seconds."),
}  # fmt: skip


def _families(port: int) -> dict[str, Any]:
    from prometheus_client.parser import text_string_to_metric_families

    status, text = call(port, "GET", "/metrics")
    assert status == 200
    return {f.name: f for f in text_string_to_metric_families(text)}


def _value(family: Any, suffix: str = "", **labels: str) -> float:
    return next(s.value for s in family.samples if s.name == family.name + suffix
                and all(s.labels.get(k) == v for k, v in labels.items()))  # fmt: skip


def test_metrics_are_vllm_0_11_names_types_and_help(serve: Any) -> None:
    families = _families(serve())
    assert {n: (f.type, f.documentation) for n, f in families.items()} == V0_11_0
    # hidden by default in 0.11 (--show-hidden-metrics-for-version=0.10 shows them)
    assert "vllm:gpu_cache_usage_perc" not in families
    for f in families.values():
        assert all(s.labels["model_name"] == "org/m" and s.labels["engine"] == "0"
                   for s in f.samples)  # fmt: skip
    ttft = [s.labels["le"] for s in families["vllm:time_to_first_token_seconds"].samples
            if s.name.endswith("_bucket")]  # fmt: skip
    assert ttft[:3] == ["0.001", "0.005", "0.01"] and ttft[-2:] == ["2560.0", "+Inf"]
    tokens = [s.labels["le"] for s in families["vllm:request_prompt_tokens"].samples
              if s.name.endswith("_bucket")]  # fmt: skip
    assert tokens[:4] == ["1.0", "2.0", "5.0", "10.0"] and tokens[-2:] == ["2000.0", "+Inf"]


def _settled(port: int) -> dict[str, Any]:
    """The metrics once no request is running.

    The server records a request's end after its last byte is sent, as vLLM does: its
    output handler pushes a request's outputs to the API server's queue before it records
    that iteration's stats (vllm/v1/engine/async_llm.py, `_run_output_handler`). A client
    can thus hold the whole answer before the counters move; read them once the running
    gauge, updated under the same lock as the counters, says every request has ended.
    """
    deadline = time.monotonic() + 10
    while (families := _families(port)) and _value(families["vllm:num_requests_running"]):
        assert time.monotonic() < deadline, "requests still running 10 s after their answers"
        time.sleep(0.01)
    return families


def test_metrics_count_what_the_requests_did(serve: Any) -> None:
    port = serve("--tokens-per-second", "1000", "--first-token-ms", "30")
    call(port, "POST", "/v1/chat/completions", {**CHAT, "stream": True})
    call(port, "POST", "/v1/chat/completions", CHAT)
    families = _settled(port)
    assert _value(families["vllm:generation_tokens"], "_total") == 10
    assert _value(families["vllm:prompt_tokens"], "_total") == 6
    assert _value(families["vllm:request_success"], "_total", finished_reason="length") == 2
    assert _value(families["vllm:request_success"], "_total", finished_reason="stop") == 0
    assert _value(families["vllm:time_to_first_token_seconds"], "_count") == 2
    assert _value(families["vllm:time_to_first_token_seconds"], "_bucket", le="0.02") == 0
    assert _value(families["vllm:time_to_first_token_seconds"], "_bucket", le="0.04") == 2
    assert _value(families["vllm:inter_token_latency_seconds"], "_count") == 8
    assert _value(families["vllm:e2e_request_latency_seconds"], "_count") == 2
    assert _value(families["vllm:num_requests_running"]) == 0
    assert _value(families["vllm:kv_cache_usage_perc"]) == 0
