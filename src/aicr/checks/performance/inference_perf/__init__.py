"""inference-perf: the recipe's serving stack meets its throughput and time-to-first-token gates.

What it proves: the serving stack the recipe declares (a Dynamo graph the
check deploys when the recipe has ``dynamo-platform``, the recipe's own vLLM
Service, or else a plain vLLM Deployment the check deploys) becomes ready,
serves completions, and under a streaming load from NVIDIA AIPerf (run as a
pod, tokenizer from its own cache, never downloaded) delivers the output
token throughput ``inference-throughput`` and the TTFT p99
``inference-ttft-p99`` ask, each compared with its own operator and no
tolerance. ITL and request-latency percentiles are recorded.

What it does not: it measures one configuration (concurrency, lengths) and
says nothing about other models, longer contexts, or multi-node serving.

How it fails: a gate missed (both numbers named), or requests that failed,
fail it; a stack that never becomes ready, an endpoint that never serves, or
a benchmark that leaves no summary end ``other`` with the stack's own status;
AIPerf exiting non-zero fails it, summary or not.
Without either gate it is skipped.
"""

from __future__ import annotations

from typing import Any

from aicr.checks import CheckContext
from aicr.checks.performance.inference_perf import aiperf, knobs, source, stack
from aicr.checks.performance.inference_perf import params as inputs
from aicr.checks.performance.inference_perf.params import Params as Params
from aicr.checks.performance.inference_perf.params import preflight as preflight
from aicr.checks.workload_images import workload_image
from aicr.kube import pod_status as pods
from aicr.parsers import ParseError
from aicr.parsers.aiperf import Summary
from aicr.parsers.aiperf import parse as parse_summary
from aicr.result import CheckResult, StepStatus

DEFAULT_MODEL = "Qwen/Qwen3-8B"  # AICR's default benchmark model
IMAGES = {"dynamo": "dynamo-vllm", "vllm": "vllm"}  # in aicr/checks/images.yaml
LOADGEN_IMAGE = "aiperf"
ENDPOINT_SECONDS = 60.0  # a ready workload's Service gets its endpoints within seconds
SOURCE_SECONDS = 10.0  # one request to the model source


def _load(ctx: CheckContext, model: str) -> aiperf.Load:
    p = ctx.params
    return aiperf.Load(
        model=model,
        tokenizer=p.tokenizer or model,
        concurrency=p.concurrency,
        requests=p.requests or max(1000, 8 * p.concurrency),
        warmup=p.concurrency if p.warmup_requests is None else p.warmup_requests,
        input_tokens=p.input_tokens,
        output_tokens=p.output_tokens,
    )


def _resolve(ctx: CheckContext, model: str, knob: knobs.Knobs) -> stack.Stack | str:
    """The stack to drive, or why there is none."""
    if not stack.wants_dynamo(ctx.recipe):
        component = stack.vllm_component(ctx.recipe)
        if component is not None:
            return stack.found(component)
    flavour = "dynamo" if stack.wants_dynamo(ctx.recipe) else "vllm"
    if flavour == "dynamo" and ctx.kube.get("CustomResourceDefinition", stack.DYNAMO_CRD) is None:
        return (
            f"the recipe deploys {stack.DYNAMO_COMPONENT}, but the cluster does not serve "
            f"DynamoGraphDeployment (no CRD {stack.DYNAMO_CRD})"
        )
    serving = stack.Serving(
        model=model,
        image=workload_image(IMAGES[flavour], check=ctx.name, config=ctx.config),
        labels=ctx.workload_labels(),
        cache_storage_class=knob.storage_class,
        cache_size=ctx.params.model_cache_size,
        env=source.parse(ctx.params.model_source).env,
    )
    build = stack.dynamo if flavour == "dynamo" else stack.vllm
    return build(ctx.workload_namespace, serving)


def _probe(url: str) -> int:
    """The HTTP status the model source answers ``url`` with (httpx errors raise)."""
    import httpx

    with httpx.Client(timeout=SOURCE_SECONDS, trust_env=False) as http:
        return http.get(url).status_code


def _unreachable(src: source.Source, model: str) -> str | None:
    """Why the stack could not get ``model`` from ``src``, asked before deploying (None: ok)."""
    import httpx

    url = src.model_url(model)
    if url is None:
        return None
    try:
        status = _probe(url)
    except httpx.HTTPError as e:
        why = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return f"the model source is not reachable from the cluster: GET {url}: {why}"
    if status == 200:
        return None
    what = {
        404: f"it has no model {model}",
        401: f"{model} needs a token (gated or private)",
        403: f"{model} needs a token (gated or private)",
    }.get(status, "")
    return f"the model source answered GET {url} with HTTP {status}" + (f": {what}" if what else "")


def _stack_pods(ctx: CheckContext, s: stack.Stack) -> list[dict[str, Any]]:
    selector = ",".join(f"{k}={v}" for k, v in sorted(ctx.workload_labels().items()))
    return ctx.kube.list("Pod", s.namespace, selector) if s.deployed else []


def _ready(ctx: CheckContext, s: stack.Stack, knob: knobs.Knobs) -> str | None:
    """Wait for the stack to be ready; None, or why it is not (its own status)."""
    if s.deployed:
        for made in s.objects:
            ctx.probes.create(made)
        waited = ctx.probes.wait(
            s.workload_kind, lambda o: stack.ready(s, o), budget=knob.ready_seconds
        )
        if waited.done:
            return None
        return (
            f"the serving stack did not become ready within {waited.seconds:.0f}s: "
            + stack.status_of(s, waited.objects.get(s.workload), _stack_pods(ctx, s))
        )
    if s.workload_kind == "Service":
        return None
    current = ctx.kube.get(s.workload_kind, s.workload, s.namespace)
    if current is not None and stack.ready(s, current):
        return None
    return "the recipe's serving stack is not ready: " + stack.status_of(s, current, [])


def _urls(ctx: CheckContext, s: stack.Stack, knob: knobs.Knobs) -> list[str]:
    selector = f"kubernetes.io/service-name={s.service}"
    if s.deployed:
        budget = min(ENDPOINT_SECONDS, knob.ready_seconds)
        waited = ctx.probes.wait(
            "EndpointSlice",
            lambda o: bool(stack.endpoint_urls([o])),
            budget=budget,
            selector=selector,
        )
        return stack.endpoint_urls(list(waited.objects.values()))
    return stack.endpoint_urls(ctx.kube.list("EndpointSlice", s.namespace, selector))


def _benchmark(
    ctx: CheckContext, load: aiperf.Load, urls: list[str], knob: knobs.Knobs
) -> Summary | None:
    """Run the load generator pod; its summary, or None after recording why there is none."""
    image = workload_image(LOADGEN_IMAGE, check=ctx.name, config=ctx.config)
    with ctx.step("benchmark") as step:
        step.asked = (
            f"pod {ctx.workload_namespace}/{aiperf.POD} ({image}): aiperf profile "
            f"against {', '.join(urls)}, concurrency {load.concurrency}, "
            f"{load.requests} requests (+{load.warmup} warm-up), "
            f"{load.input_tokens} in / {load.output_tokens} out tokens"
        )
        ctx.probes.create(aiperf.pod(image, load, urls, knob.health_seconds))
        # only the generator's pod: the stack's pods carry the run's labels too
        waited = ctx.probes.wait(
            "Pod",
            lambda p: pods.terminated(p) is not None or pods.finished(p),
            selector=f"{ctx.probes.selector},{aiperf.ROLE_LABEL}={aiperf.POD}",
        )
        pod = waited.objects.get(aiperf.POD)
        if aiperf.POD in waited.pending or pod is None:
            step.other(
                f"the load generator did not finish within {waited.seconds:.0f}s: "
                f"{waited.pending.get(aiperf.POD) or pods.where(pod)}"
            )
            return None
        init = _init_exit(pod)
        if init is not None and init != 0:
            said = ctx.probes.logs(aiperf.POD, aiperf.HEALTH_CONTAINER).strip().splitlines()
            why = said[-1] if said else f"exited {init}"
            step.other(
                f"the endpoint never served a completion: {why}"
                if init == aiperf.HEALTH_FAILED
                else f"the health probe failed: {why}"
            )
            return None
        log = ctx.probes.logs(aiperf.POD, aiperf.CONTAINER)
        code = (pods.terminated(pod) or {}).get("exitCode")
        if code != 0:  # a summary AIPerf wrote before failing is not a measurement
            step.failed(f"AIPerf exited {code}: {aiperf.tail(log) or 'no output'}")
            return None
        try:
            summary = parse_summary(aiperf.summary_text(log))
        except ParseError as exc:
            step.other(f"{exc}; AIPerf said: {aiperf.tail(log)}")
            return None
        step.answer = aiperf.evidence(summary)
        step.info(f"{summary.request_count} requests measured")
        return summary


def _init_exit(pod: dict[str, Any]) -> int | None:
    for cs in (pod.get("status") or {}).get("initContainerStatuses") or []:
        state = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get(
            "terminated"
        )
        if state is not None and state.get("exitCode") not in (None, 0):
            return int(state["exitCode"])
    return None


def run(ctx: CheckContext) -> CheckResult:
    """Find or deploy the stack, wait for it, drive it with AIPerf, judge the gates."""
    wanted = inputs.gates(ctx.recipe, "recipe")
    if not wanted:
        return ctx.skipped(
            f"not applicable: the recipe sets neither {inputs.THROUGHPUT} nor "
            f"{inputs.TTFT_P99} in validation.performance.constraints"
        )
    knob = knobs.Knobs.resolve((ctx.prepared or {}).get("env") or {}, ctx.params)
    model = inputs.model(ctx.recipe) or ctx.params.model or DEFAULT_MODEL
    urls: list[str] = []
    serving: stack.Stack | None = None
    with ctx.step("serving stack") as step:
        src = source.parse(ctx.params.model_source)
        step.asked = f"the recipe's serving stack, model {model} from {src}; {knob}"
        resolved = _resolve(ctx, model, knob)
        if isinstance(resolved, str):
            step.failed(resolved)
        else:
            step.answer = str(resolved)
            problem = _unreachable(src, model) if resolved.deployed else None
            if problem is not None:
                problem += "; nothing was deployed (set params.modelSource: mirror:URL or offline)"
            else:
                problem = _ready(ctx, resolved, knob)
            if problem is None:
                urls = _urls(ctx, resolved, knob)
                if not urls:
                    service = f"{resolved.namespace}/{resolved.service}"
                    problem = f"Service {service} has no ready endpoint"
            if problem:
                step.other(problem)
            else:
                serving = resolved
                step.info(f"ready at {', '.join(urls)}")
    if serving is None:  # the step above says why
        return ctx.conclude("steps")
    summary = _benchmark(ctx, _load(ctx, model), urls, knob)
    if summary is None:
        return ctx.conclude("steps")
    if summary.errors:
        ctx.record(
            "requests",
            "requests that failed",
            summary.error_summary or "(no details)",
            f"{summary.errors} of {summary.request_count} requests failed",
            status=StepStatus.FAILED,
        )
    verdicts = []
    for g in wanted:
        measured = (
            summary.output_token_throughput
            if g.constraint == inputs.THROUGHPUT
            else summary.ttft_p99_ms
        )
        holds, why = g.judge(measured)
        verdicts.append(why)
        ctx.record(
            g.constraint,
            f"{g.figure} against {g.constraint} {g.gate}",
            f"{measured:.2f} {g.unit}",
            why,
            status=StepStatus.PASSED if holds else StepStatus.FAILED,
        )
    return ctx.conclude("gates", "; ".join(verdicts) + f" ({serving})")
