"""accelerator-metrics: per-GPU metrics on every GPU node, collected, following a real load.

What it proves:
- on **every** GPU node the accelerator metrics exporter (the GPU Operator's
  DCGM exporter: pods labelled ``app=nvidia-dcgm-exporter``, port 9400) has a
  ready pod whose own endpoint serves the Prometheus text format (parsed with
  prometheus_client's parser) with per-GPU series (``gpu`` and ``UUID``
  labels, numeric samples) of utilization and framebuffer memory used and free
  for each of the node's GPUs; temperature, power and interconnect series are
  recorded when present;
- Prometheus (``prometheusUrl`` of the check's settings, else the
  ``prometheus-operated`` Service of the recipe's kube-prometheus-stack) has
  those series for every GPU scraped, so they are collected, not only exposed;
- a pod that holds one GPU busy (DCGM's load generator) on one GPU node moves
  that GPU's utilization above what it read before, on the exporter (the
  series attributed to the pod) and in Prometheus.

What it does not: judge the values' accuracy, or metrics of non-NVIDIA
accelerators.

How it fails: a GPU node without a ready exporter pod, a scrape that fails or
is not the text format, metric names only in HELP/TYPE lines, series without
per-GPU labels, fewer GPUs than the node has, series Prometheus lacks, or a
utilization that does not change under load within the bound (named stale when
the samples' explicit timestamps stop advancing: a frozen exporter).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import Field

from aicr.checks import CheckContext, CheckParams, prometheus
from aicr.checks.conformance.accelerator_metrics import build
from aicr.checks.gpu import allocatable_gpus, gpu_nodes
from aicr.checks.images import workload_image
from aicr.ctrf import Status
from aicr.result import CheckResult

GPU_OPERATOR = "gpu-operator"
POLL_SECONDS = 1.0


class Params(CheckParams):
    """``spec.validate.checks.accelerator-metrics.params``."""

    exporter_namespace: str | None = Field(
        default=None, min_length=1,
        description="Namespace of the exporter pods (default: the recipe's gpu-operator "
        "component's, else every namespace).",
    )  # fmt: skip
    exporter_selector: str = Field(
        default="app=nvidia-dcgm-exporter", min_length=1,
        description="Label selector of the exporter pods.",
    )  # fmt: skip
    exporter_port: int = Field(default=9400, gt=0, lt=65536, description="The exporter's port.")
    metrics_path: str = Field(default="/metrics", pattern=r"^/", description="The metrics path.")
    scrape_seconds: float = Field(default=10, gt=0, description="Timeout of one HTTP request.")
    image: str | None = Field(
        default=None, min_length=1,
        description="Replaces the pinned DCGM image of the load pod (used as given).",
    )  # fmt: skip
    load_seconds: int = Field(default=60, gt=0, description="How long the load pod runs.")
    collect_seconds: float = Field(
        default=90, gt=0,
        description="How long Prometheus may take to have the series, and utilization to rise.",
    )  # fmt: skip


def _client(ctx: CheckContext) -> httpx.Client:
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


def _scrape(ctx: CheckContext, http: httpx.Client, url: str) -> build.Page:
    r = http.get(url)
    r.raise_for_status()
    return build.parse(r.text)


def _query(http: httpx.Client, base: str, promql: str) -> list[build.Obj]:
    r = http.get(f"{base}/api/v1/query", params={"query": promql})
    r.raise_for_status()
    body: dict[str, Any] = r.json()
    if body.get("status") != "success":
        raise ValueError(f"Prometheus answered {body.get('status')}: {body.get('error')}")
    result: list[build.Obj] = (body.get("data") or {}).get("result") or []
    return result


def _scrape_nodes(ctx: CheckContext, http: httpx.Client, nodes: dict[str, build.Obj],
                  gpus: list[str]) -> dict[str, build.Page]:  # fmt: skip
    """The page of every GPU node whose exporter passed (a step per node)."""
    exporters = _exporters(ctx)
    pages: dict[str, build.Page] = {}
    for name in gpus:
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
            problems = build.judge_page(page, allocatable_gpus(nodes[name]))
            if problems:
                step.failed("; ".join(problems))
            else:
                pages[name] = page
                step.passed("per-GPU utilization and framebuffer series for every GPU")
    return pages


def _collected(ctx: CheckContext, http: httpx.Client, base: str,
               pages: dict[str, build.Page]) -> bool:  # fmt: skip
    wanted = {node: set(build.per_gpu(p, build.UTIL)) for node, p in pages.items()}
    with ctx.step("collected by Prometheus") as step:
        step.asked = f"{base}/api/v1/query for " + ", ".join(build.REQUIRED)
        end = time.monotonic() + ctx.params.collect_seconds
        while True:
            try:
                missing = {name: build.judge_collected(wanted, _query(http, base, name))
                           for name in build.REQUIRED}  # fmt: skip
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
                step.failed(error or f"not collected within {ctx.params.collect_seconds:g}s: "
                            + "; ".join(problems))  # fmt: skip
                return False
            time.sleep(POLL_SECONDS)
    return False  # the step raised: recorded as other


def _under_load(ctx: CheckContext, http: httpx.Client, base: str, node: str,
                before: build.Page) -> None:  # fmt: skip
    image = workload_image(build.LOAD_IMAGE, check=ctx.name, config=ctx.config)
    exporter = _exporters(ctx).get(node)
    with ctx.step(f"utilization under load on {node}") as step:
        pod = build.load_pod(image, node, ctx.params.load_seconds)
        step.asked = (f"pod {ctx.workload_namespace}/{build.LOAD_POD} ({image}) holding one GPU "
                      f"of {node} for {ctx.params.load_seconds}s; its GPU's {build.UTIL} on the "
                      "exporter and in Prometheus")  # fmt: skip
        ctx.probes.create(pod)
        running = ctx.probes.wait("Pod", build.is_running, budget=ctx.params.collect_seconds)
        if not running.done or exporter is None:
            where = running.pending.get(build.LOAD_POD, "its exporter pod is gone")
            step.failed(f"the load pod did not run: {where}")
            return
        end = time.monotonic() + ctx.params.collect_seconds
        seen: build.Series | None = None
        queried: float | None = None
        first: build.Page | None = None  # the load window's first and last pages
        last: build.Page | None = None
        while time.monotonic() < end:
            try:
                last = _scrape(ctx, http, _endpoint(ctx, exporter))
                first = first or last
                seen = build.held_by(last, build.LOAD_POD)
                if seen is not None:
                    uuid = seen.labels["UUID"]
                    promql = f'{build.UTIL}{{UUID="{uuid}"}}'
                    queried = build.query_value(_query(http, base, promql))
            except (httpx.HTTPError, ValueError):
                pass
            idle = build.per_gpu(before, build.UTIL).get(seen.labels["UUID"]) if seen else None
            baseline = idle.value if idle else 0.0
            if seen and seen.value > baseline and queried is not None and queried > baseline:
                step.answer = (f"GPU {seen.labels['gpu']} ({seen.labels['UUID']}): {baseline:g}% "
                               f"before, {seen.value:g}% on the exporter and {queried:g}% in "
                               "Prometheus under load")  # fmt: skip
                step.passed("utilization rose under load, on the exporter and in Prometheus")
                return
            time.sleep(POLL_SECONDS)
        step.answer = (f"exporter: {seen.value:g}% for the load pod's GPU" if seen else
                       "the exporter attributes no GPU to the load pod") + (
            f"; Prometheus: {queried:g}%" if queried is not None else "")  # fmt: skip
        why = f"utilization did not rise under load within {ctx.params.collect_seconds:g}s"
        frozen = build.stale(first, last) if first and last else None
        if frozen is not None:
            when = datetime.fromtimestamp(frozen, UTC).isoformat(timespec="seconds")
            why += f": the exporter's samples are stale (stamped {when}, not advancing)"
        step.failed(why)


def run(ctx: CheckContext) -> CheckResult:
    """Scrape every GPU node's exporter, ask Prometheus for the series, then a load."""
    nodes = {n["metadata"]["name"]: n for n in ctx.kube.list("Node")}
    gpus = gpu_nodes(list(nodes.values()))
    if not gpus:
        return ctx.failed("no node is labelled as having an NVIDIA GPU")
    base = prometheus.url(ctx)
    with _client(ctx) as http:
        pages = _scrape_nodes(ctx, http, nodes, gpus)
        if len(pages) == len(gpus) and _collected(ctx, http, base, pages):
            _under_load(ctx, http, base, gpus[0], pages[gpus[0]])
    result = ctx.conclude("accelerator metrics steps")
    if result.status != Status.PASSED:
        return result
    count = sum(len(build.per_gpu(p, build.UTIL)) for p in pages.values())
    return ctx.passed(f"per-GPU metrics exported on {len(pages)} GPU nodes ({count} GPUs), "
                      "collected by Prometheus, utilization rose under load")  # fmt: skip
