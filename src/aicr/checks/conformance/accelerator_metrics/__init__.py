"""accelerator-metrics: per-GPU metrics on every GPU node, collected, following a real load.

What it proves:
- on **every** GPU node the accelerator metrics exporter (the GPU Operator's
  DCGM exporter: pods labelled ``app=nvidia-dcgm-exporter``, port 9400) has a
  ready pod whose own endpoint serves the Prometheus text format (parsed with
  prometheus_client's parser) with per-GPU series (``gpu`` and ``UUID``
  labels, numeric samples) of utilization and framebuffer memory used and free
  for each of the node's GPUs (allocatable ``nvidia.com/gpu``, or in DRA mode
  the whole GPUs the NVIDIA DRA driver publishes for it); temperature, power
  and interconnect series are recorded when present;
- Prometheus (``prometheusUrl`` of the check's settings, else the
  ``prometheus-operated`` Service of the recipe's kube-prometheus-stack) has
  those series for every GPU scraped, so they are collected, not only exposed;
- a pod that holds one GPU busy (DCGM's load generator) on a GPU node with a
  free GPU (counted as the runner counts them; never a fully allocated node)
  moves that GPU's utilization above what it read before, on the exporter and in
  Prometheus, within two of the exporter's collection intervals (read from its
  pod: ``-c``/``--collect-interval``, else ``DCGM_EXPORTER_INTERVAL``, else
  dcgm-exporter's 30000 ms; ``aicr.checks.dcgm_interval``) plus
  ``collectSeconds``; the load runs at least that long. The pod gets its GPU
  as the recipe advertises whole GPUs: a
  ``nvidia.com/gpu`` limit (device plugin; its GPU is the series the exporter
  attributes to the pod), or a ResourceClaim from a template on the
  ``gpu.nvidia.com`` DeviceClass (DRA; its GPU is the device the claim's
  allocation names, by the ``uuid`` its ResourceSlice publishes, and the
  exporter must attribute that series to the pod).

What it does not: judge the values' accuracy, or metrics of non-NVIDIA
accelerators.

How it fails: a GPU node without a ready exporter pod, a scrape that fails or
is not the text format, metric names only in HELP/TYPE lines, series without
per-GPU labels, fewer GPUs than the node has, series Prometheus lacks, no GPU
node with a free GPU, an exporter interval its pod spec does not say (unless
``exporterIntervalMs`` is given), a load pod that does not run (in DRA mode
with its claim's status) or whose load generator exits (DCGM's refusal to
profile without root, exit 227, named as such), or a utilization
that does not change under load within the bound (named stale when the
samples' explicit timestamps stop advancing: a frozen exporter); in DRA mode
also a claimed GPU the exporter serves no series for, or attributes to no pod
or another one.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aicr.checks import CheckContext, prometheus
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.accelerator_metrics import build
from aicr.checks.conformance.accelerator_metrics.params import Params as Params
from aicr.checks.conformance.accelerator_metrics.params import preflight as preflight
from aicr.checks.dcgm_interval import collect_interval
from aicr.checks.gpu_nodes import free_gpu_nodes
from aicr.checks.steps import Step
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.kube import pod_status
from aicr.kube.gpu_inventory import dra_gpus
from aicr.kube.gpus import (
    GPU_DEVICE_CLASS,
    GPU_RESOURCE,
    allocatable_gpus,
    allocated,
    allocation_results,
    claim_state,
    device_uuid,
    gpu_nodes,
)
from aicr.parsers import dcgm
from aicr.result import CheckResult

if TYPE_CHECKING:
    import httpx

GPU_OPERATOR = "gpu-operator"
POLL_SECONDS = 1.0


def _client(ctx: CheckContext) -> httpx.Client:
    import httpx

    return httpx.Client(timeout=ctx.params.scrape_seconds, trust_env=False)


def _exporters(ctx: CheckContext) -> dict[str, build.Obj]:
    """The ready exporter pod of each node, by node name."""
    ns = ctx.params.exporter_namespace
    if ns is None:
        operator = ctx.recipe.component(GPU_OPERATOR)
        ns = operator.namespace if operator and operator.namespace else None
    pods = ctx.kube.list("Pod", ns, label_selector=ctx.params.exporter_selector)
    out: dict[str, build.Obj] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node and build.is_ready(p) and (p.get("status") or {}).get("podIP"):
            out.setdefault(str(node), p)
    return out


def _endpoint(ctx: CheckContext, pod: build.Obj) -> str:
    return f"http://{pod['status']['podIP']}:{ctx.params.exporter_port}{ctx.params.metrics_path}"


def _scrape(ctx: CheckContext, http: httpx.Client, url: str) -> dcgm.Page:
    r = http.get(url)
    r.raise_for_status()
    return dcgm.parse(r.text)


def _query(http: httpx.Client, base: str, promql: str) -> list[build.Obj]:
    r = http.get(f"{base}/api/v1/query", params={"query": promql})
    r.raise_for_status()
    body: dict[str, Any] = r.json()
    if body.get("status") != "success":
        raise ValueError(f"Prometheus answered {body.get('status')}: {body.get('error')}")
    result: list[build.Obj] = (body.get("data") or {}).get("result") or []
    return result


def _expected(ctx: CheckContext, nodes: list[build.Obj], dra: bool) -> dict[str, int]:
    """The GPUs of each GPU node.

    Allocatable ``nvidia.com/gpu``, or in DRA mode the whole GPUs the NVIDIA DRA
    driver publishes for the node in ResourceSlices.
    """
    names = gpu_nodes(nodes)
    if dra:
        published, _ = dra_gpus(ctx.kube.list("ResourceSlice"), [])
        return {n: published.get(n, 0) for n in names}
    by_name = {n["metadata"]["name"]: n for n in nodes}
    return {n: allocatable_gpus(by_name[n]) for n in names}


def _scrape_nodes(
    ctx: CheckContext, http: httpx.Client, expected: dict[str, int]
) -> dict[str, dcgm.Page]:
    """The page of every GPU node whose exporter passed (a step per node)."""
    import httpx

    exporters = _exporters(ctx)
    pages: dict[str, dcgm.Page] = {}
    for name in expected:
        with ctx.step(f"exporter on {name}") as step:
            pod = exporters.get(name)
            if pod is None:
                step.asked = f"a ready pod ({ctx.params.exporter_selector}) on {name}"
                step.failed(f"no ready exporter pod on {name}")
                continue
            url = _endpoint(ctx, pod)
            step.asked = f"GET {url} (pod {pod['metadata']['namespace']}/{pod['metadata']['name']})"
            try:
                page = _scrape(ctx, http, url)
            except (httpx.HTTPError, ValueError) as e:
                step.failed(f"scrape of {url} failed: {e}")
                continue
            step.answer = build.describe(page)
            problems = build.judge_page(page, expected[name])
            if problems:
                step.failed("; ".join(problems))
            else:
                pages[name] = page
                step.passed("per-GPU utilization and framebuffer series for every GPU")
    return pages


def _collected(
    ctx: CheckContext, http: httpx.Client, base: str, pages: dict[str, dcgm.Page]
) -> bool:
    import httpx

    wanted = {node: set(build.per_gpu(p, build.UTIL)) for node, p in pages.items()}
    with ctx.step("collected by Prometheus") as step:
        step.asked = f"{base}/api/v1/query for " + ", ".join(build.REQUIRED)
        end = time.monotonic() + ctx.params.collect_seconds
        while True:
            try:
                missing = {
                    name: build.judge_collected(wanted, _query(http, base, name))
                    for name in build.REQUIRED
                }
                error = None
            except (httpx.HTTPError, ValueError) as e:
                missing, error = {}, f"query failed: {e}"
            problems = [f"{n}: {p}" for n, ps in missing.items() for p in ps]
            if error is None and not problems:
                step.answer = f"every series for {sum(len(u) for u in wanted.values())} GPUs"
                step.passed("Prometheus has every GPU's series")
                return True
            if time.monotonic() >= end:
                step.answer = error or "; ".join(problems)
                step.failed(
                    error
                    or f"not collected within {ctx.params.collect_seconds:g}s: "
                    + "; ".join(problems)
                )
                return False
            time.sleep(POLL_SECONDS)
    return False  # the step raised: recorded as other


class _LoadFailed(Exception):
    """The load could not be judged: the step's failure message."""


def _load_ended(ctx: CheckContext, pod: build.Obj) -> str | None:
    """Why the load pod's container ended (None while it runs), with its log's last line."""
    if pod_status.terminated(pod) is None:
        return None
    try:
        log = ctx.probes.logs(build.LOAD_POD, build.LOAD_CONTAINER)
    except Exception:  # the reason is the exit code; the log only adds to it
        log = ""
    return build.load_ended(pod, log)


def _start_load(ctx: CheckContext, node: str, dra: bool, image: str, seconds: int) -> build.Obj:
    """Create the load pod (and in DRA mode its claim template); the pod once it runs.

    When it does not run within the bound, the failure says where it got to and,
    in DRA mode, what its claim's status says; when its load generator exits at
    once (DCGM's refusal without root), it says that.
    """
    if dra:
        ctx.probes.create(build.load_claim_template(ctx.workload_labels()))
    ctx.probes.create(build.load_pod(image, node, seconds, dra))
    running = ctx.probes.wait(
        "Pod",
        lambda p: build.is_running(p) or pod_status.finished(p),
        budget=ctx.params.collect_seconds,
    )
    if running.done:
        pod = running.objects.get(build.LOAD_POD) or {}
        ended = _load_ended(ctx, pod)
        if ended:
            raise _LoadFailed(ended)
        return pod
    where = running.pending.get(build.LOAD_POD, "")
    why = f"the load pod did not run within {int(running.seconds)}s: {where}"
    if dra:
        ns, name = ctx.workload_namespace, build.claim_of(running.objects.get(build.LOAD_POD))
        if name is None:
            why += f"; no ResourceClaim was made from template {ns}/{build.LOAD_TEMPLATE}"
        else:
            why += f"; its ResourceClaim {ns}/{name}: "
            why += claim_state(ctx.kube.get("ResourceClaim", name, ns))
    raise _LoadFailed(why)


def _claimed(ctx: CheckContext, pod: build.Obj, node: str) -> build.Claimed:
    """DRA mode: the device the running load pod's claim was allocated, and its GPU's UUID."""
    ns, name = ctx.workload_namespace, build.claim_of(pod)
    if name is None:
        raise _LoadFailed("the running load pod names no generated ResourceClaim")
    claim = ctx.kube.get("ResourceClaim", name, ns)
    problems, device, on = allocated(claim, ctx.kube.list("ResourceSlice"))
    if device is None:
        raise _LoadFailed(f"ResourceClaim {ns}/{name}: " + "; ".join(problems))
    result = allocation_results(claim)[0]
    claimed = build.Claimed(
        f"{ns}/{name}", str(result.get("pool")), str(result.get("device")), device_uuid(device)
    )
    if on != node:
        raise _LoadFailed(f"{claimed} is a device of {on}, not of {node} where the pod runs")
    if not claimed.uuid:
        raise _LoadFailed(f"{claimed}: its ResourceSlice publishes no uuid attribute")
    return claimed


def _load_node(
    ctx: CheckContext, nodes: list[build.Obj], pages: dict[str, dcgm.Page], dra: bool
) -> str:
    """The first GPU node whose exporter passed and that has a free GPU for the load."""
    plan = free_gpu_nodes(ctx.kube, nodes, ctx.workloads, dra=dra)
    free = [t for t in plan.targets if t.node in pages]
    if free:
        return free[0].node
    skipped = [f"{n} (all GPUs in use)" for n in plan.busy if n in pages]
    skipped += [n for n in plan.unschedulable if n.split(" ")[0] in pages]
    raise _LoadFailed(
        "no GPU node with a passing exporter has a free GPU for the load"
        + (": " + ", ".join(skipped) if skipped else "")
    )


def _interval(ctx: CheckContext, exporter: build.Obj) -> tuple[int, str]:
    """The exporter's collection interval (ms) and where it was read; fails closed."""
    read = collect_interval(exporter, ctx.params.exporter_port)
    if read.ms is not None:
        return read.ms, str(read)
    given = ctx.params.exporter_interval_ms
    if given is None:
        raise _LoadFailed(
            f"the exporter's collection interval is unknown: {read}; set "
            "params.exporterIntervalMs to the interval it collects at"
        )
    return given, f"{given} ms (params.exporterIntervalMs; {read})"


def _under_load(
    ctx: CheckContext,
    http: httpx.Client,
    base: str,
    nodes: list[build.Obj],
    pages: dict[str, dcgm.Page],
    dra: bool,
) -> None:
    image = workload_image(build.LOAD_IMAGE, check=ctx.name, config=ctx.config)
    ns = ctx.workload_namespace
    try:
        node: str | None = _load_node(ctx, nodes, pages, dra)
        chosen = None
    except _LoadFailed as e:
        node, chosen = None, str(e)
    with ctx.step(f"utilization under load on {node or 'a GPU node'}") as step:
        if node is None:
            step.asked = "a GPU node with a passing exporter and a free GPU"
            step.failed(chosen or "no node")
            return
        exporter = _exporters(ctx).get(node)
        gpu = f"one {GPU_RESOURCE}"
        if dra:
            gpu = f"a ResourceClaim from template {ns}/{build.LOAD_TEMPLATE} ({GPU_DEVICE_CLASS})"
        try:
            if exporter is None:
                raise _LoadFailed(f"no ready exporter pod on {node} any more")
            interval_ms, where = _interval(ctx, exporter)
            bound = build.rise_bound(interval_ms, ctx.params.collect_seconds)
            seconds = build.load_duration(ctx.params.load_seconds, bound)
            step.asked = (
                f"pod {ns}/{build.LOAD_POD} ({image}) holding one GPU of {node} through "
                f"{gpu} for {seconds}s; its GPU's {build.UTIL} on the exporter and in "
                f"Prometheus, for up to {bound:g}s ({build.WAIT_INTERVALS} collection "
                f"intervals of {where}, and collectSeconds)"
            )
            pod = _start_load(ctx, node, dra, image, seconds)
            claimed = _claimed(ctx, pod, node) if dra else None
        except _LoadFailed as e:
            step.asked = step.asked or f"pod {ns}/{build.LOAD_POD} on {node} through {gpu}"
            step.failed(str(e))
            return
        url = _endpoint(ctx, exporter)
        _judge_load(ctx, http, base, url, pages[node], claimed, step, bound)


def _judge_load(
    ctx: CheckContext,
    http: httpx.Client,
    base: str,
    url: str,
    before: dcgm.Page,
    claimed: build.Claimed | None,
    step: Step,
    bound: float,
) -> None:
    """Scrape until the load's GPU is busier than before, on the exporter and in Prometheus.

    Gives up after ``bound`` seconds, or as soon as the load pod's container ends.
    """
    import httpx

    from aicr.kube.rest import KubeApiError

    ns = ctx.workload_namespace
    end = time.monotonic() + bound
    seen: dcgm.Sample | None = None
    queried: float | None = None
    first: dcgm.Page | None = None  # the load window's first and last pages
    last: dcgm.Page | None = None
    stray: dcgm.Sample | None = None  # DRA: the claimed GPU seen busy, held by another or none
    while time.monotonic() < end:
        try:
            last = _scrape(ctx, http, url)
            first = first or last
            seen = build.load_series(last, ns, claimed)
            if seen is not None:
                promql = f'{build.UTIL}{{UUID="{seen.labels["UUID"]}"}}'
                queried = build.query_value(_query(http, base, promql))
        except (httpx.HTTPError, ValueError):
            pass
        idle = build.per_gpu(before, build.UTIL).get(seen.labels["UUID"]) if seen else None
        baseline = idle.value if idle else 0.0
        busy = seen is not None and seen.value > baseline
        if seen is not None and busy and not build.attributed(seen, ns, build.LOAD_POD):
            stray = seen
        elif seen is not None and busy and queried is not None and queried > baseline:
            which = f"; {claimed}" if claimed else ""
            held = f" ({build.holder(seen)})" if claimed else ""
            step.answer = (
                f"GPU {seen.labels['gpu']} ({seen.labels['UUID']}{which}): "
                f"{baseline:g}% before, {seen.value:g}% on the exporter{held} and "
                f"{queried:g}% in Prometheus under load"
            )
            step.passed("utilization rose under load, on the exporter and in Prometheus")
            return
        try:
            ended = _load_ended(ctx, ctx.kube.get("Pod", build.LOAD_POD, ns) or {})
        except (KubeApiError, httpx.HTTPError):
            ended = None  # the next poll asks again; the bound still holds
        if ended:
            step.answer = build.load_answer(stray or seen, claimed)
            step.failed(ended)
            return
        time.sleep(POLL_SECONDS)
    step.answer = build.load_answer(stray or seen, claimed) + (
        f"; Prometheus: {queried:g}%" if queried is not None else ""
    )
    if claimed and stray is not None:
        step.failed(
            f"GPU {stray.labels['UUID']} ({claimed}) is busy but the exporter attributes "
            f"it to {build.holder(stray)}, not to the load pod {ns}/{build.LOAD_POD} "
            "(dcgm-exporter maps DRA-allocated GPUs to pods only with "
            "KUBERNETES_ENABLE_DRA)"
        )
        return
    why = f"utilization did not rise under load within {bound:g}s"
    frozen = build.stale(first, last) if first and last else None
    if frozen is not None:
        when = datetime.fromtimestamp(frozen, UTC).isoformat(timespec="seconds")
        why += f": the exporter's samples are stale (stamped {when}, not advancing)"
    step.failed(why)


def run(ctx: CheckContext) -> CheckResult:
    """Scrape every GPU node's exporter, ask Prometheus for the series, then a load."""
    dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    nodes = ctx.kube.list("Node")
    expected = _expected(ctx, nodes, dra)
    if not expected:
        return ctx.failed("no node is labelled as having an NVIDIA GPU")
    gpus = list(expected)
    base = prometheus.url(ctx)
    with _client(ctx) as http:
        pages = _scrape_nodes(ctx, http, expected)
        if len(pages) == len(gpus) and _collected(ctx, http, base, pages):
            _under_load(ctx, http, base, nodes, pages, dra)
    result = ctx.conclude("accelerator metrics steps")
    if result.status != Status.PASSED:
        return result
    count = sum(len(build.per_gpu(p, build.UTIL)) for p in pages.values())
    return ctx.passed(
        f"per-GPU metrics exported on {len(pages)} GPU nodes ({count} GPUs), "
        "collected by Prometheus, utilization rose under load"
        + (" on the GPU allocated to its DRA claim" if dra else "")
    )
