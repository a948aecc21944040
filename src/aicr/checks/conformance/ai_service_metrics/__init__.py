"""ai-service-metrics: a workload's request counter is discovered, scraped and counted exactly.

What it proves:
- the platform's monitoring system discovers a workload the way the platform
  says workloads are discovered: a PodMonitor when the recipe deploys
  prometheus-operator (kube-prometheus-stack) or the cluster serves its CRD,
  else the ``prometheus.io/*`` pod annotations (``params.discovery`` chooses);
- Prometheus (``prometheusUrl``, else the recipe's kube-prometheus-stack
  Service) has the workload's endpoint as an active target that is up;
- the counter it collects carries the workload's identity (``namespace`` and
  ``pod`` labels; every other label, such as a platform's ``workload_id``, is
  recorded), and after exactly N requests sent from this check's pod the value
  Prometheus returns rose by exactly N within the bound, and still reads so
  after the next scrape.

What it does not: judge dashboards, alerting, retention, or metrics of a
particular AI framework (the workload is a plain HTTP server, as any
framework's metrics endpoint is to the monitoring system).

How it fails: the operator's CRD missing where the recipe needs it, no target
for the workload within the bound, a target whose scrape fails (Prometheus's
last error), series without identity labels, a count that falls short within
the bound or rises by more than was sent (the workload collected twice).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from aicr.checks import CheckContext, prometheus
from aicr.checks.conformance.ai_service_metrics import build
from aicr.checks.conformance.ai_service_metrics.params import Params as Params
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.result import CheckResult

if TYPE_CHECKING:
    import httpx

POLL_SECONDS = 1.0


def _client(ctx: CheckContext) -> httpx.Client:
    import httpx

    return httpx.Client(timeout=ctx.params.http_seconds, trust_env=False)


def _discovery(ctx: CheckContext) -> build.Discovery | None:
    names = {c.name for c in ctx.recipe.component_refs}
    served = ctx.kube.served(build.MONITORING_GROUP)
    mode = build.discovery(ctx.params.discovery, names, served)
    with ctx.step("discovery") as step:
        auto = ctx.params.discovery == "auto"
        why = "recipe components and the cluster's APIs" if auto else "params.discovery"
        listed = ", ".join(served) if served else "no"
        step.asked = f"how workloads are discovered ({why}); {build.MONITORING_GROUP}: {listed}"
        step.answer = mode
        if mode == "PodMonitor" and "podmonitors" not in (served or []):
            stack = sorted(names & set(build.OPERATOR_COMPONENTS)) or ["params.discovery"]
            step.failed(
                f"{', '.join(stack)} discovers workloads through PodMonitors, but the "
                "API server serves no podmonitors.monitoring.coreos.com "
                "(prometheus-operator's CRDs are not installed)"
            )
            return None
        step.passed(f"workloads are discovered through {mode}")
        return mode
    return None


def _deploy(ctx: CheckContext, mode: build.Discovery) -> build.Obj | None:
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    with ctx.step("workload") as step:
        made = [
            f"pod {ctx.workload_namespace}/{build.POD} ({image}) serving {build.METRIC} on "
            f":{build.PORT}{build.METRICS_PATH}"
        ]
        ctx.probes.create(build.pod(image, ctx.run_id, annotate=mode == "annotations"))
        if mode == "PodMonitor":
            labels = build.monitor_labels(ctx.kube.list("Prometheus"))
            ctx.probes.create(build.pod_monitor(labels))
            made.append(
                f"PodMonitor {ctx.workload_namespace}/{build.POD} (port {build.PORT_NAME}"
                + (f", labels {labels}" if labels else "")
                + ")"
            )
        else:
            made[0] += " annotated prometheus.io/scrape, port and path"
        step.asked = "; ".join(made)
        waited = ctx.probes.wait("Pod", build.is_ready, budget=ctx.params.discover_seconds)
        if not waited.done:
            step.failed(f"the workload pod did not become ready: {waited.pending.get(build.POD)}")
            return None
        pod = waited.objects[build.POD]
        step.answer = f"ready at {pod['status']['podIP']} on {pod['spec'].get('nodeName')}"
        step.passed("the workload serves")
        return pod
    return None


def _target(
    ctx: CheckContext, http: httpx.Client, base: str, address: str, mode: build.Discovery
) -> bool:
    with ctx.step("target up") as step:
        step.asked = f"GET {base}/api/v1/targets?state=active, a target scraping {address}"
        end = time.monotonic() + min(ctx.params.discover_seconds, ctx.deadline.for_waits())
        pool = build.own_pool(mode, ctx.workload_namespace)
        found: list[build.Obj] = []
        while True:
            found = build.targets_of(prometheus.active_targets(http, base), address)
            up = [t for t in found if t.get("health") == "up"]
            if found and len(up) == len(found) and build.from_own(found, pool):
                step.answer = "; ".join(build.describe_target(t) for t in found)
                step.passed(f"Prometheus scrapes the workload ({len(found)} target(s) up)")
                return True
            if time.monotonic() >= end:
                break
            time.sleep(POLL_SECONDS)
        waited = f"{ctx.params.discover_seconds:g}s"
        bad = next((t for t in found if t.get("health") != "up"), None)
        if bad is not None:
            step.answer = "; ".join(build.describe_target(t) for t in found)
            error = bad.get("lastError") or f"health {bad.get('health')}"
            step.failed(f"the scrape of {bad.get('scrapeUrl')} fails after {waited}: {error}")
        else:  # none, or only other jobs' (a catch-all scraping every pod)
            others = "; ".join(build.describe_target(t) for t in found)
            step.answer = f"only other jobs' targets: {others}" if found else "no active target"
            step.failed(
                f"Prometheus has no target for the workload ({address}) after {waited}: "
                f"{build.UNSEEN[mode]}"
            )
    return False


def _collected(
    ctx: CheckContext, http: httpx.Client, base: str, promql: str
) -> list[build.Series] | None:
    """The counter's series once Prometheus has them (the target is up: a few scrapes at most)."""
    with ctx.step("collected before") as step:
        step.asked = f"{base}/api/v1/query?query={promql}"
        end = time.monotonic() + min(ctx.params.count_seconds, ctx.deadline.for_waits())
        while True:
            found = build.series(prometheus.query(http, base, promql))
            if found or time.monotonic() >= end:
                break
            time.sleep(POLL_SECONDS)
        step.answer = build.describe_series(found)
        if not found:
            step.failed(
                f"Prometheus has no {build.METRIC} series of the workload after "
                f"{ctx.params.count_seconds:g}s"
            )
            return None
        step.info(f"the counter reads {build.total(found):g} before the requests")
        return found
    return None


def _identity(ctx: CheckContext, found: list[build.Series], pod: build.Obj) -> bool:
    with ctx.step("workload identity") as step:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        step.asked = f"the series' labels name the workload's namespace {ns} and pod {name}"
        step.answer = build.describe_series(found)
        problems = build.identity_problems(found, ns, name)
        if problems:
            step.failed("the series cannot be attributed to the workload: " + "; ".join(problems))
            return False
        step.passed("every series carries the workload's namespace and pod")
        return True
    return False


def _send(ctx: CheckContext, http: httpx.Client, address: str) -> bool:
    import httpx

    n = ctx.params.requests
    with ctx.step("requests sent") as step:
        step.asked = f"{n} x GET http://{address}/ from the check's pod"
        codes: dict[str, int] = {}
        for _ in range(n):
            try:
                code = str(http.get(f"http://{address}/").status_code)
            except httpx.HTTPError as e:
                code = type(e).__name__
            codes[code] = codes.get(code, 0) + 1
        step.answer = ", ".join(f"{c}: {k}" for c, k in sorted(codes.items()))
        if codes.get("200") != n:
            step.failed(f"{codes.get('200', 0)} of {n} requests answered 200 ({step.answer})")
            return False
        step.passed(f"{n} of {n} requests answered 200")
        return True
    return False


def _counted(
    ctx: CheckContext, http: httpx.Client, base: str, promql: str, address: str, before: float
) -> float | None:
    """Seconds until Prometheus counted exactly N, confirmed after the next scrape; else None."""
    n, bound = ctx.params.requests, ctx.params.count_seconds
    with ctx.step("requests counted") as step:
        step.asked = (
            f"{base}/api/v1/query?query={promql} until it rose by {n} from "
            f"{before:g} within {bound:g}s; again after the next scrape"
        )
        start = time.monotonic()
        end = start + min(bound, ctx.deadline.for_waits())
        found: list[build.Series] = []
        while True:
            found = build.series(prometheus.query(http, base, promql))
            wrong = build.judge_rise(before, found, n)
            rise = build.total(found) - before
            if rise >= n or time.monotonic() >= end:
                break
            time.sleep(POLL_SECONDS)
        took = time.monotonic() - start
        readings = [f"{build.total(found):g} after {took:.1f}s ({build.describe_series(found)})"]
        if wrong is None:
            _scraped_again(http, base, address, end)
            found = build.series(prometheus.query(http, base, promql))
            wrong = build.judge_rise(before, found, n)
            readings.append(f"{build.total(found):g} after the next scrape")
        step.answer = "; ".join(readings)
        if wrong is not None:
            step.failed(wrong + (f" within {bound:g}s" if rise < n else ""))
            return None
        step.passed(f"Prometheus counted exactly {n} of {n} requests in {took:.1f}s")
        return took
    return None


def _last_scrape(http: httpx.Client, base: str, address: str) -> float | None:
    """When the last of the workload's targets was scraped least recently (Prometheus's clock)."""
    found = build.targets_of(prometheus.active_targets(http, base), address)
    stamps = [
        datetime.fromisoformat(str(t["lastScrape"])).timestamp()
        for t in found
        if t.get("lastScrape")
    ]
    return min(stamps) if stamps else None


def _scraped_again(http: httpx.Client, base: str, address: str, end: float) -> None:
    """Wait (until ``end``) for every target of ``address`` to be scraped once more."""
    first = _last_scrape(http, base, address)
    while time.monotonic() < end:
        time.sleep(POLL_SECONDS)
        now = _last_scrape(http, base, address)
        if first is None or (now is not None and now > first):
            return


def run(ctx: CheckContext) -> CheckResult:
    """Deploy the counting workload and its discovery, wait for the target, count N requests."""
    mode = _discovery(ctx)
    pod = _deploy(ctx, mode) if mode else None
    took = None
    if mode and pod:
        base = prometheus.url(ctx)
        address = f"{pod['status']['podIP']}:{build.PORT}"
        promql = f'{build.METRIC}{{{build.RUN_LABEL}="{ctx.run_id}"}}'
        with _client(ctx) as http:
            found = (
                _collected(ctx, http, base, promql)
                if _target(ctx, http, base, address, mode)
                else None
            )
            if found and _identity(ctx, found, pod) and _send(ctx, http, address):
                took = _counted(ctx, http, base, promql, address, build.total(found))
    result = ctx.conclude("service metrics steps")
    if result.status != Status.PASSED or took is None:
        return result
    n = ctx.params.requests
    return ctx.passed(
        f"Prometheus discovered the workload through {mode}, scraped it and "
        f"counted exactly {n} of {n} requests in {took:.1f}s"
    )
