"""inference-perf: AIPerf's real summary, the gates, the serving stacks, on fakes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube, deployment

from aicr.catalog import load_catalog
from aicr.checks import RunInputs, entrypoint
from aicr.checks.performance import inference_perf as check
from aicr.checks.performance.inference_perf import aiperf, knobs, stack
from aicr.checks.performance.inference_perf import params as inputs
from aicr.config import EMPTY_CONFIG, parse_config
from aicr.ctrf import Status
from aicr.errors import InputError
from aicr.kube import names
from aicr.parsers import ParseError
from aicr.parsers.aiperf import parse as parse_summary
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
DATA = Path(__file__).parents[2] / "data" / "inference"
SUMMARY = (DATA / "aiperf-0.13.0-profile_export_aiperf.json").read_text()
RUN = "r0123abcd"
WNS = names.workload_namespace(RUN, "inference-perf")
IP = "10.244.1.7"


def config(params: str = "") -> Any:
    return parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
        f"    checks:\n      inference-perf:\n        params: {{concurrency: 8{params}}}\n"
    )


CONFIG = config()
SHORT = config(", workloadReadyTimeout: 1s")  # the stack's wait ends after a second


BOTH = ("[{name: inference-throughput, value: '>= 500'}, "
        "{name: inference-ttft-p99, value: '<= 2000'}]")


def recipe(gates: str = BOTH, components: str = "[]") -> str:
    return (f"componentRefs: {components}\n"
            f"validation:\n  performance:\n    checks: [inference-perf]\n"
            f"    constraints: {gates}\n")  # fmt: skip


def endpoints(namespace: str, service: str, ready: bool = True) -> Obj:
    return {"kind": "EndpointSlice",
            "metadata": {"name": f"{service}-x1", "namespace": namespace,
                         "labels": {"kubernetes.io/service-name": service}},
            "ports": [{"name": "http", "port": 8000}],
            "endpoints": [{"addresses": [IP], "conditions": {"ready": ready}}]}  # fmt: skip


def finished(pod: Obj, init_exit: int = 0, exit_code: int = 0) -> list[Obj]:
    init = [{"name": aiperf.HEALTH_CONTAINER, "state": {"terminated": {"exitCode": init_exit}}}]
    main = [{"name": aiperf.CONTAINER, "state": {"terminated": {"exitCode": exit_code}}}]
    phase = "Succeeded" if init_exit == exit_code == 0 else "Failed"
    return [{**pod, "status": {"phase": phase, "initContainerStatuses": init,
                               "containerStatuses": main if init_exit == 0 else []}}]  # fmt: skip


def log(summary: str = SUMMARY) -> str:
    return f"INFO AIPerf System is PROFILING\n{aiperf.SENTINEL}\n{summary}\n{aiperf.SENTINEL}\n"


def fake(objects: list[Obj] | None = None, ready: bool = True, summary: str | None = SUMMARY,
         init_exit: int = 0, exit_code: int = 0) -> FakeKube:  # fmt: skip
    kube = FakeKube([endpoints(WNS, stack.NAME)] if objects is None else objects)
    state = deployment(WNS, stack.NAME, 1, 1 if ready else 0)
    kube.script["Deployment"] = lambda d: [{**d, **state, "metadata": d["metadata"]}]
    kube.script["Pod"] = lambda p: finished(p, init_exit, exit_code)
    kube.logs_of[(aiperf.POD, aiperf.CONTAINER)] = log(summary) if summary is not None else (
        "ERROR All 8 inference request(s) failed\n" + aiperf.SENTINEL + "\n\n" + aiperf.SENTINEL)
    kube.logs_of[(aiperf.POD, aiperf.HEALTH_CONTAINER)] = (
        f"http://{IP}:8000 did not serve a completion within 300s; last answer: HTTPError: "
        "HTTP Error 503: Service Unavailable")  # fmt: skip
    return kube


def run(kube: FakeKube, text: str | None = None, cfg: Any = CONFIG) -> CheckResult:
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe(text or recipe()), cfg,
                       prepared={"inference-perf": {"env": {}}})  # fmt: skip
    return entrypoint.run_check("inference-perf", inputs, kube=kube)


def steps(result: CheckResult) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


ASKED: list[str] = []  # the model-source URLs the check asked, this test


@pytest.fixture(autouse=True)
def _source_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model source answers 200 (no test dials out); tests that need more patch again."""
    ASKED.clear()
    monkeypatch.setattr(check, "_probe", lambda url: ASKED.append(url) or 200)


# ---- AIPerf's output ------------------------------------------------------------------------
def test_the_real_summary_parses() -> None:
    s = parse_summary(SUMMARY)
    assert (s.version, s.request_count, s.errors) == ("0.13.0", 64, 0)
    assert round(s.output_token_throughput, 2) == 692.78
    assert (round(s.ttft.p50, 2), round(s.ttft.p99, 2)) == (51.14, 57.72)
    assert str(s.itl) == "avg 10.03, p50 10.01, p90 10.05, p99 10.36 ms"
    assert str(s.request_latency) == "avg 362.56, p50 361.70, p90 364.18, p99 372.24 ms"
    assert "output token throughput: 692.78 tok/s" in aiperf.evidence(s)


def _without(path: str) -> str:
    data = json.loads(SUMMARY)
    metric, stat = path.split(".")
    del data[metric][stat]
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "the AIPerf summary is not JSON"),
        ("[1]", "the AIPerf summary is not a JSON object"),
        (_without("time_to_first_token.p99"),
         "the summary has no number at time_to_first_token.p99"),
        (_without("output_token_throughput.avg"),
         "the summary has no number at output_token_throughput.avg"),
        (json.dumps({**json.loads(SUMMARY), "was_cancelled": True}),
         "AIPerf reports the benchmark cancelled or incomplete"),
    ],
    ids=["not-json", "not-object", "no-ttft-p99", "no-throughput", "cancelled"],
)  # fmt: skip
def test_a_bad_summary_is_refused(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=f"^{message}"):
        parse_summary(text)


def test_the_summary_sits_between_the_sentinels() -> None:
    assert json.loads(aiperf.summary_text(log()))["aiperf_version"] == "0.13.0"
    with pytest.raises(ParseError, match="has no AIPerf summary"):
        aiperf.summary_text("aiperf crashed\n")
    with pytest.raises(ParseError, match="wrote no summary file"):
        aiperf.summary_text(f"x\n{aiperf.SENTINEL}\n\n{aiperf.SENTINEL}\n")


def test_request_errors_are_counted() -> None:
    data = {**json.loads(SUMMARY), "error_request_count": {"unit": "requests", "avg": 3.0},
            "error_summary": [{"error_details": {"code": 503, "message": "Service Unavailable"},
                               "count": 3}]}  # fmt: skip
    s = parse_summary(json.dumps(data))
    assert (s.errors, s.error_summary) == (3, "3x Service Unavailable")


def test_the_generator_runs_offline_on_server_token_counts() -> None:
    load = aiperf.Load("m/x", "m/x", 8, 64, 8, 128, 128)
    pod = aiperf.pod("reg/aiperf:1", load, [f"http://{IP}:8000", "http://10.244.2.9:8000"], 300)
    main, init = pod["spec"]["containers"][0], pod["spec"]["initContainers"][0]
    args = main["command"][4:]
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in main["env"]
    assert "--streaming" in args
    assert "--use-server-token-count" in args
    # every request runs to --output-tokens-mean: the server is asked not to stop at EOS
    extra = args.index("--extra-inputs")
    assert args[extra + 1 : extra + 3] == ["temperature:0", "ignore_eos:true"]
    assert args[args.index("--tokenizer") + 1] == "m/x"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--url"] == [
        f"http://{IP}:8000", "http://10.244.2.9:8000"]  # fmt: skip
    assert args[-2:] == ["--url-strategy", "round_robin"]
    assert init["command"][3:] == [f"http://{IP}:8000", "m/x", "300"]
    assert main["securityContext"] == init["securityContext"]
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"]}


# ---- gates ------------------------------------------------------------------------------------
def stack_pod(ready: bool) -> Obj:
    """A pod of the check's vLLM Deployment: it carries the run's labels, and runs on."""
    return {"kind": "Pod", "metadata": {
        "name": "aicr-inference-5d9f-abcde", "namespace": WNS,
        "labels": {**names.check_labels(RUN, "inference-perf", "performance"),
                   stack.APP_LABEL: stack.NAME}},
        "spec": {"nodeName": "gpu-1"}, "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": str(ready)}]}}  # fmt: skip


def test_both_gates_met_passes_and_cleans_up() -> None:
    kube = fake()
    kube.objects.append(stack_pod(ready=True))  # never ends: the benchmark must not wait for it
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert result.message == (
        "output token throughput 692.78 tok/s meets inference-throughput >= 500; TTFT p99 57.72 "
        f"ms meets inference-ttft-p99 <= 2000 (vLLM Deployment {WNS}/aicr-inference, Service "
        "aicr-inference (deployed by the check))")  # fmt: skip
    assert steps(result) == [("serving stack", "informational"), ("benchmark", "informational"),
                             ("inference-throughput", "passed"), ("inference-ttft-p99", "passed"),
                             ("workloads", "passed")]  # fmt: skip
    bench = next(s for s in result.evidence if s.title == "benchmark")
    assert "inter-token latency: avg 10.03" in bench.answer
    assert "request latency: avg 362.56" in bench.answer
    made = [c[1:] for c in kube.calls if c[0] == "create"]
    assert made == [("Service", WNS, "aicr-inference"), ("Deployment", WNS, "aicr-inference"),
                    ("Pod", WNS, aiperf.POD)]  # fmt: skip
    assert {c[1:] for c in kube.calls if c[0] == "delete"} == set(made)


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ("[{name: inference-throughput, value: '>= 692.79'}]",
         "1/1 gates failed: inference-throughput: output token throughput 692.78 tok/s misses "
         "inference-throughput >= 692.79"),
        ("[{name: inference-throughput, value: '>= 100'}, {name: inference-ttft-p99, "
         "value: '< 57.7'}]",
         "1/2 gates failed: inference-ttft-p99: TTFT p99 57.72 ms misses "
         "inference-ttft-p99 < 57.7"),
    ],
    ids=["throughput-just-below", "ttft-above"],
)  # fmt: skip
def test_a_missed_gate_fails_with_both_numbers(gates: str, message: str) -> None:
    result = run(fake(), recipe(gates))
    assert (result.status, result.message) == (Status.FAILED, message)


def test_failed_requests_fail_the_check() -> None:
    data = {**json.loads(SUMMARY), "error_request_count": {"unit": "requests", "avg": 2.0},
            "error_summary": [{"error_details": {"message": "Internal Server Error"}, "count": 2}]}
    result = run(fake(summary=json.dumps(data)))
    assert result.status == Status.FAILED
    assert result.message.startswith("1/3 gates failed: requests: 2 of 64 requests failed")


def test_aiperf_exiting_non_zero_fails_even_with_a_summary() -> None:
    kube = fake(exit_code=1)
    result = run(kube)
    assert result.status == Status.FAILED
    bench = next(s for s in result.evidence if s.title == "benchmark")
    assert bench.status.value == "failed"
    assert bench.verdict == "AIPerf exited 1: INFO AIPerf System is PROFILING"


def test_without_gates_it_is_skipped_and_creates_nothing() -> None:
    kube = fake()
    result = run(kube, recipe("[{name: nccl-all-reduce-bw, value: '>= 100'}]"))
    assert (result.status, result.message) == (Status.SKIPPED, (
        "not applicable: the recipe sets neither inference-throughput nor inference-ttft-p99 in "
        "validation.performance.constraints"))  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_gate_that_is_not_a_number_exits_2_before_any_job() -> None:
    text = recipe("[{name: inference-ttft-p99, value: '<= fast'}]")
    with pytest.raises(InputError) as err:
        check.preflight(parse_recipe(text), None, "recipe.yaml")
    assert str(err.value) == (
        "recipe.yaml: validation.performance.constraints[0].value: expression '<= fast' does not "
        "compare with a number (a comparison with a number, e.g. '>= 50000')")  # fmt: skip


# ---- the stack's own failures are other -----------------------------------------------------
def test_a_stack_that_never_becomes_ready_is_other_with_its_status() -> None:
    kube = fake(ready=False)
    kube.objects.append(stack_pod(ready=False))
    result = run(kube, cfg=SHORT)
    assert result.status == Status.OTHER
    assert result.message.startswith(
        "1/1 steps could not be judged: serving stack: the serving stack did not become ready "
        f"within 1s: Deployment {WNS}/aicr-inference: 0/1 replicas available")  # fmt: skip
    assert "pod aicr-inference-5d9f-abcde: Running on gpu-1" in result.message
    assert not [c for c in kube.calls if c[0] == "create" and c[1] == "Pod"]


def test_an_endpoint_that_never_serves_is_other() -> None:
    result = run(fake(init_exit=aiperf.HEALTH_FAILED))
    assert result.status == Status.OTHER
    assert result.message == (
        "1/1 steps could not be judged: benchmark: the endpoint never served a completion: "
        f"http://{IP}:8000 did not serve a completion within 300s; last answer: HTTPError: HTTP "
        "Error 503: Service Unavailable")  # fmt: skip


def test_a_health_probe_that_crashes_is_other_with_its_last_line() -> None:
    kube = fake(init_exit=1)
    kube.logs_of[(aiperf.POD, aiperf.HEALTH_CONTAINER)] = "Traceback\nSyntaxError: bad\n"
    result = run(kube)
    assert (result.status, result.message) == (Status.OTHER, (
        "1/1 steps could not be judged: benchmark: the health probe failed: SyntaxError: bad"))


def test_a_benchmark_without_summary_is_other_with_aiperfs_words() -> None:
    result = run(fake(summary=None))
    assert result.status == Status.OTHER
    assert result.message == (
        "1/1 steps could not be judged: benchmark: AIPerf wrote no summary file (see the log's "
        "last lines); AIPerf said: ERROR All 8 inference request(s) failed")  # fmt: skip


def test_a_service_without_ready_endpoints_is_other() -> None:
    result = run(fake([endpoints(WNS, stack.NAME, ready=False)]), cfg=SHORT)
    assert result.status == Status.OTHER
    assert result.message == ("1/1 steps could not be judged: serving stack: Service "
                              f"{WNS}/aicr-inference has no ready endpoint")  # fmt: skip


# ---- which stack ------------------------------------------------------------------------------
DYNAMO = "[{name: dynamo-platform, namespace: dynamo-system}]"
CRD = {"kind": "CustomResourceDefinition", "metadata": {"name": stack.DYNAMO_CRD}}


def test_dynamo_without_its_crd_fails() -> None:
    result = run(fake(), recipe(components=DYNAMO))
    assert (result.status, result.message) == (Status.FAILED, (
        "1/1 steps failed: serving stack: the recipe deploys dynamo-platform, but the cluster "
        "does not serve DynamoGraphDeployment (no CRD dynamographdeployments.nvidia.com)"))


def _graph(state: str, ready: str) -> Any:
    def play(graph: Obj) -> list[Obj]:
        return [{**graph, "status": {"state": state, "conditions": [
            {"type": "Ready", "status": ready, "reason": "Reconciling",
             "message": "VllmDecodeWorker: 0/1 ready"}]}}]  # fmt: skip

    return play


def test_a_dynamo_graph_is_deployed_and_reached_through_its_frontend() -> None:
    kube = fake([CRD, endpoints(WNS, f"{stack.NAME}-frontend")])
    kube.script["DynamoGraphDeployment"] = _graph("successful", "True")
    result = run(kube, recipe(components=DYNAMO))
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith(f"(Dynamo graph DynamoGraphDeployment {WNS}/aicr-inference, "
                                   "Service aicr-inference-frontend (deployed by the check))")
    graph = next(o for o in kube.calls if o[0] == "create" and o[1] == "DynamoGraphDeployment")
    assert graph[2:] == (WNS, "aicr-inference")


def test_a_dynamo_graph_that_never_gets_ready_reports_its_state() -> None:
    kube = fake([CRD, endpoints(WNS, f"{stack.NAME}-frontend")])
    kube.script["DynamoGraphDeployment"] = _graph("pending", "False")
    result = run(kube, recipe(components=DYNAMO), cfg=SHORT)
    assert result.status == Status.OTHER
    assert (f"DynamoGraphDeployment {WNS}/aicr-inference: state pending, Ready=False "
            "(Reconciling: VllmDecodeWorker: 0/1 ready)") in result.message


def test_the_dynamo_graph_follows_the_published_schema() -> None:
    serving = stack.Serving("Qwen/Qwen3-8B", "nvcr.io/x:1", {"aicr.dev/run-id": RUN})
    graph = stack.dynamo(WNS, serving).objects[0]
    assert (graph["apiVersion"], graph["kind"]) == ("nvidia.com/v1alpha1", "DynamoGraphDeployment")
    services = graph["spec"]["services"]
    assert {n: s["componentType"] for n, s in services.items()} == {
        "Frontend": "frontend", "VllmDecodeWorker": "worker"}
    assert services["VllmDecodeWorker"]["resources"] == {"limits": {"gpu": "1"}}
    worker = services["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"]
    assert worker["command"][-2:] == ["--model", "Qwen/Qwen3-8B"]
    assert stack.graph_ready({"status": {"state": "successful"}})
    assert not stack.graph_ready({"status": {"state": "failed", "conditions": [
        {"type": "Ready", "status": "False"}]}})  # fmt: skip


VLLM = ("[{name: vllm, namespace: serving, expectedResources: [{kind: Deployment, name: llm}, "
        "{kind: Service, name: llm}]}]")  # fmt: skip


def test_the_recipes_own_vllm_stack_is_found_not_deployed() -> None:
    kube = fake([deployment("serving", "llm"), endpoints("serving", "llm")])
    result = run(kube, recipe(components=VLLM))
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith(
        "(vLLM Deployment serving/llm, Service llm (as the recipe deployed it))")
    assert [c[1] for c in kube.calls if c[0] == "create"] == ["Pod"]


def test_the_recipes_own_vllm_stack_not_ready_is_other() -> None:
    kube = fake([deployment("serving", "llm", 2, 1), endpoints("serving", "llm")])
    result = run(kube, recipe(components=VLLM))
    assert result.status == Status.OTHER
    assert result.message.startswith(
        "1/1 steps could not be judged: serving stack: the recipe's serving stack is not ready: "
        "Deployment serving/llm: 1/2 replicas available")


def test_the_deployed_vllm_takes_the_model_and_a_cache_of_the_storage_class() -> None:
    serving = stack.Serving("org/m", "docker.io/vllm/vllm-openai:v0.11.0",
                            {"aicr.dev/run-id": RUN}, "premium-ssd", "50Gi")  # fmt: skip
    claim, service, dep = stack.vllm(WNS, serving).objects
    assert claim["spec"]["storageClassName"] == "premium-ssd"
    assert claim["spec"]["resources"]["requests"]["storage"] == "50Gi"
    pod = dep["spec"]["template"]
    assert pod["metadata"]["labels"]["aicr.dev/run-id"] == RUN  # run cleanup finds the pods
    container = pod["spec"]["containers"][0]
    assert container["command"][:3] == ["vllm", "serve", "org/m"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim["metadata"][
        "name"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_the_recipes_inference_model_wins() -> None:
    kube = fake()
    bodies: list[Obj] = []
    create = kube.create
    kube.create = lambda obj: bodies.append(obj) or create(obj)  # type: ignore[method-assign]
    run(kube, recipe("[{name: inference-model, value: Qwen/Qwen3-0.6B}, "
                     "{name: inference-ttft-p99, value: '<= 2000'}]"))  # fmt: skip
    dep, pod = (next(b for b in bodies if b["kind"] == k) for k in ("Deployment", "Pod"))
    assert dep["spec"]["template"]["spec"]["containers"][0]["command"][2] == "Qwen/Qwen3-0.6B"
    args = pod["spec"]["containers"][0]["command"]
    assert args[args.index("--model") + 1] == args[args.index("--tokenizer") + 1] == (
        "Qwen/Qwen3-0.6B")


# ---- knobs --------------------------------------------------------------------------------
def test_environment_knobs_win_over_params_over_defaults() -> None:
    env = inputs.from_environment({inputs.READY_ENV: "20m", inputs.STORAGE_CLASS_ENV: " fast "})
    assert env == {"workloadReadyTimeout": 1200.0, "modelCacheStorageClass": "fast"}
    params = check.Params.model_validate({"healthTimeout": "90s", "workloadReadyTimeout": "5m"})
    k = knobs.Knobs.resolve(env, params)
    assert (k.ready_seconds, k.health_seconds, k.storage_class) == (1200.0, 90.0, "fast")
    assert str(k) == ("workload ready timeout 20m ($AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT), "
                      "health timeout 1m30s (params.healthTimeout), model cache StorageClass fast "
                      "($AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS)")  # fmt: skip
    defaults = knobs.Knobs.resolve({}, check.Params())
    assert (defaults.ready_seconds, defaults.health_seconds, defaults.storage_class) == (
        900.0, 300.0, None)


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        (inputs.READY_ENV, "ten minutes", "$AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT: invalid "
         "duration 'ten minutes' (expected e.g. 90s, 5m, 1h30m)"),
        (inputs.HEALTH_ENV, "0s", "$AICR_INFERENCE_PERF_HEALTH_TIMEOUT: duration '0s' must be "
         "above zero"),
    ],
)  # fmt: skip
def test_a_malformed_knob_is_refused_naming_it(var: str, value: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        inputs.from_environment({var: value})
    assert str(err.value) == message


def test_the_preflight_passes_the_environments_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(inputs.HEALTH_ENV, "10m")
    monkeypatch.delenv(inputs.READY_ENV, raising=False)
    monkeypatch.delenv(inputs.STORAGE_CLASS_ENV, raising=False)
    assert check.preflight(parse_recipe(recipe()), None, "r.yaml") == {
        "env": {"healthTimeout": 600.0}}


def test_the_catalog_entry_grants_only_what_the_check_uses() -> None:
    spec = load_catalog().get("inference-perf")
    assert spec is not None
    crd = next(r for r in spec.access if r.resources == ["customresourcedefinitions"])
    assert (crd.verbs, crd.resource_names) == (["get"], [stack.DYNAMO_CRD])
    assert all("*" not in r.verbs and "*" not in r.resources
               for r in spec.access + spec.workload_access)  # fmt: skip
    assert EMPTY_CONFIG is not None


# ---- the model source ---------------------------------------------------------------------
def _recording(kube: FakeKube) -> list[Obj]:
    """Every object the check creates (they are deleted at its end)."""
    bodies: list[Obj] = []
    create = kube.create
    kube.create = lambda obj: bodies.append(obj) or create(obj)  # type: ignore[method-assign]
    return bodies


def _deployed_env(bodies: list[Obj]) -> list[Obj]:
    dep = next(o for o in bodies if o["kind"] == "Deployment")
    env: list[Obj] = dep["spec"]["template"]["spec"]["containers"][0]["env"]
    return env


def test_the_hub_is_asked_for_the_model_before_deploying() -> None:
    kube = fake()
    bodies = _recording(kube)
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert ASKED == ["https://huggingface.co/api/models/Qwen/Qwen3-8B"]
    assert [e["name"] for e in _deployed_env(bodies)] == ["HF_HOME"]
    assert "model Qwen/Qwen3-8B from the Hugging Face hub https://huggingface.co" in (
        result.evidence[0].asked)


def test_an_unreachable_source_is_said_before_anything_is_deployed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    def refused(url: str) -> int:
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(check, "_probe", refused)
    kube = fake()
    result = run(kube)
    assert (result.status, result.message) == (Status.OTHER, (
        "1/1 steps could not be judged: serving stack: the model source is not reachable from "
        "the cluster: GET https://huggingface.co/api/models/Qwen/Qwen3-8B: ConnectError: [Errno "
        "-3] Temporary failure in name resolution; nothing was deployed (set "
        "params.modelSource: mirror:URL or offline)"))  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_mirror_without_the_model_is_said_and_a_mirror_is_the_stacks_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = config(", modelSource: 'mirror:http://hf-mirror.models.svc:8080/'")
    monkeypatch.setattr(check, "_probe", lambda url: (ASKED.append(url), 404)[1])
    kube = fake()
    result = run(kube, cfg=cfg)
    assert result.status == Status.OTHER
    assert "answered GET http://hf-mirror.models.svc:8080/api/models/Qwen/Qwen3-8B with HTTP " \
           "404: it has no model Qwen/Qwen3-8B; nothing was deployed" in result.message
    monkeypatch.setattr(check, "_probe", lambda url: 200)
    kube = fake()
    bodies = _recording(kube)
    assert run(kube, cfg=cfg).status == Status.PASSED
    assert {"name": "HF_ENDPOINT", "value": "http://hf-mirror.models.svc:8080"} in (
        _deployed_env(bodies))


def test_offline_asks_no_source_and_the_stack_downloads_nothing() -> None:
    kube = fake()
    bodies = _recording(kube)
    result = run(kube, cfg=config(", modelSource: offline"))
    assert result.status == Status.PASSED, result.message
    assert ASKED == []
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in _deployed_env(bodies)
    graph = stack.dynamo(WNS, stack.Serving("m", "img", {}, env=[
        {"name": "HF_HUB_OFFLINE", "value": "1"}])).objects[-1]  # fmt: skip
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in graph["spec"]["envs"]


def test_the_recipes_own_stack_is_not_asked_about_its_model() -> None:
    kube = fake([deployment("serving", "llm"), endpoints("serving", "llm")])
    assert run(kube, recipe(components=VLLM)).status == Status.PASSED
    assert ASKED == []


@pytest.mark.parametrize("value", ["s3://bucket/m", "mirror:", "mirror:ftp://x", "Hub"])
def test_a_malformed_model_source_is_refused_naming_the_forms(value: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="is not one of hub, mirror:URL \\(http or "
                                              "https\\) or offline"):  # fmt: skip
        check.Params.model_validate({"modelSource": value})
