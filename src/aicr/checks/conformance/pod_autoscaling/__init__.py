"""pod-autoscaling: an HPA scales GPU pods on their GPU utilization, up and back down.

What it proves: the cluster serves the custom metrics API
(``custom.metrics.k8s.io``; the APIService is named in evidence) with a per-pod
GPU metric, and an ``autoscaling/v2`` HPA of type ``Pods`` on it scales a GPU
workload: a Deployment whose pods take one GPU each (``nvidia.com/gpu``, or in
DRA mode a claim for one GPU) and load it with DCGM's ``dcgmproftester12``
until a set moment, then hold it idle. The metric is the one the platform
serves, not one the check makes up: the first of ``params.metrics`` the custom
metrics API answers for the check's pod (by default the names the
prometheus-adapter values of AICR's recipes give DCGM_FI_DEV_GPU_UTIL:
``workload_gpu_utilization``, then ``gpu_utilization``). Under load the
utilization is above the HPA's target (50 % per pod): replicas rise and the
new pod runs on a GPU node. Once the load ends, replicas fall, after the
stabilization window set on the HPA itself
(``behavior.scaleDown.stabilizationWindowSeconds``). The metric reaches the
HPA as on any platform: DCGM exporter, Prometheus, prometheus-adapter.

What it does not: resource (CPU/memory) or external metrics, scaling past two
replicas, or the metrics pipeline's latency.

The metric has a window to reach the HPA, counted from the loaded pod's start
(``window``): one DCGM exporter collection, one Prometheus scrape of the
exporter, one prometheus-adapter relist and one HPA sync, each read where the
cluster states it (the exporter pods; for the Prometheus the adapter's
``--prometheus-url`` reaches, the ServiceMonitor/PodMonitor selecting them or its
Prometheus object, or for a Prometheus not managed by prometheus-operator its
loaded configuration over HTTP, ``/api/v1/status/config``; the adapter
Deployment's args, kube-controller-manager's pod) and otherwise the component's
documented default, named as such, plus a 30 s margin; ``metricSeconds``
replaces it.

How it fails: no APIService serves the custom metrics API (nothing is
created); the pods do not start, or their load generator refuses to run
without root (DCGM's exit 227, named); the custom metrics API serves none of the
metrics for the pod within the window (its pieces named, what it said per metric,
and whether its discovery lists them at all); the HPA cannot read it within the
rest of the window (its own condition, e.g. ``FailedGetPodsMetric``); no
scale-up, or the new pod does not run on a GPU node, within
``scaleUpSeconds`` (nor before the load ends); no scale-down within the
stop's reach (the kubelet's sync), the window and ``scaleDownSeconds`` after the
check ends the load. Each failure quotes the
HPA's conditions.

The load ends as soon as the scale-up is seen: the check creates the ConfigMap its
pods mount as an optional volume, and they stop loading once its key appears
(the kubelet's volume sync, within its 60 s sync period); ``loadSeconds`` is only
the latest end, so a quick cluster is not held for it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aicr.checks import CheckContext, dcgm_load
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.pod_autoscaling import build, scrape_config, window
from aicr.checks.conformance.pod_autoscaling.params import Params as Params
from aicr.checks.conformance.pod_autoscaling.params import preflight as preflight
from aicr.checks.steps import now_iso
from aicr.checks.workload_images import workload_image
from aicr.kube.gpus import GPU_RESOURCE, gpu_nodes
from aicr.kube.selectors import matches
from aicr.result import CheckResult

if TYPE_CHECKING:
    import httpx

HPA_KIND = "HorizontalPodAutoscaler"
POLL_SECONDS = 5.0  # between two reads of the custom metrics API
# One GET of a plain Prometheus' loaded configuration: a server that answers its API at
# all answers this at once (it marshals the config it holds), so a short bound.
CONFIG_SECONDS = 10.0
# Larger than any configuration a Prometheus would load by hand (kube-prometheus-stack's
# generated one is tens of KiB); a bigger answer is not read.
CONFIG_MAX_BYTES = 8 << 20


class Run:
    """One run's state: the workload's selector, the metric used, the HPA readings seen."""

    def __init__(self, ctx: CheckContext, api_version: str) -> None:
        self.ctx = ctx
        self.api_version = (
            api_version  # of the custom metrics API, e.g. custom.metrics.k8s.io/v1beta1
        )
        self.metric: str = ctx.params.metrics[0]
        self.selector = ",".join(
            f"{k}={v}"
            for k, v in sorted({**ctx.workload_labels(), build.APP_LABEL: build.NAME}.items())
        )
        self.readings: list[build.Reading] = []
        self.hpa: build.Obj = {}
        self.load_until = 0  # epoch seconds the pods' load ends
        self.window = window.Window(())  # how long the metric may take to reach the HPA
        self.window_end = 0.0  # monotonic seconds: the window's end, once the pod runs

    def note(self, text: str) -> None:
        """A moment of the timeline: what the check did."""
        self.readings.append(build.Reading(now_iso(), None, None, None, note=text))

    def watch_hpa(self, until: Callable[[build.Obj], bool], budget: float) -> bool:
        """Watch the HPA until ``until`` holds, recording every change it shows."""

        def seen(obj: build.Obj) -> bool:
            self.hpa = obj
            new = build.reading(obj, self.metric, now_iso())
            if build.changed(self.readings, new):
                self.readings.append(new)
            return until(obj)

        return self.ctx.probes.wait(HPA_KIND, seen, budget=budget).done

    def serving(self, expect: int, budget: float) -> tuple[list[build.Obj], dict[str, str]]:
        """Wait until ``expect`` pods serve; those that do, and where the others got to."""
        waited = self.ctx.probes.wait(
            "Pod", build.is_serving, budget=budget, selector=self.selector, expect=expect
        )
        pods = [p for p in waited.objects.values() if build.is_serving(p)]
        return sorted(pods, key=lambda p: str(p["metadata"]["name"])), waited.pending

    def load_left(self) -> float:
        """Seconds until the pods' load ends (0 once it has)."""
        return max(0.0, self.load_until - time.time())

    def state(self) -> str:
        """The HPA's replicas and conditions as last seen."""
        desired, current = build.replicas(self.hpa)
        return f"desired {desired}, current {current}; {build.conditions_text(self.hpa)}"


def _listed(ctx: CheckContext, version: str) -> list[str] | str:
    """The per-pod metrics the API's discovery lists, or why it could not be read."""
    import httpx

    from aicr.kube.rest import KubeApiError

    try:
        return build.pod_metrics(ctx.kube.served(version))
    except (KubeApiError, httpx.HTTPError) as e:  # e.g. 503: the adapter is not reached
        return f"not listed ({e})"


def _custom_metrics_api(ctx: CheckContext) -> tuple[str, build.Obj] | None:
    """The custom metrics API's group/version and APIService, or None (the step failed)."""
    with ctx.step("custom metrics API") as step:
        step.asked = f"APIServices for {build.CUSTOM_METRICS_GROUP}"
        api = build.custom_metrics_api(ctx.kube.list("APIService"))
        if api is None:
            step.answer = "none"
            step.failed(
                f"no APIService serves {build.CUSTOM_METRICS_GROUP}: the cluster has no "
                "custom metrics API (nothing was created)"
            )
            return None
        version = f"{build.CUSTOM_METRICS_GROUP}/{(api.get('spec') or {}).get('version')}"
        step.answer = build.describe_apiservice(api)
        ok, _ = build.available(api)
        listed = _listed(ctx, version) if ok else []
        shown = listed if isinstance(listed, str) else ", ".join(listed)
        step.answer += "; per-pod metrics: " + (shown or "none yet")
        step.info("the HPA reads the pods' metric through it")
        return version, api
    return None  # the step raised: recorded as other


def _read(
    ctx: CheckContext, kind: str, namespace: str | None = None, selector: str | None = None
) -> window.Listed:
    """Objects of ``kind``, or why they could not be read (the window then takes a default)."""
    import httpx

    from aicr.kube.rest import KubeApiError

    try:
        return ctx.kube.list(kind, namespace, label_selector=selector)
    except (KubeApiError, httpx.HTTPError) as e:  # e.g. 403: a piece of the window unread
        return f"{kind} list: {e}"


def _services(ctx: CheckContext, pods: window.Listed) -> window.Listed:
    """The Services of the exporter pods' namespaces (those a ServiceMonitor may select)."""
    if isinstance(pods, str):
        return pods
    found: list[build.Obj] = []
    for ns in sorted({str((p.get("metadata") or {}).get("namespace")) for p in pods}):
        got = _read(ctx, "Service", ns)
        if isinstance(got, str):
            return got
        found += got
    return found


def _backend(ctx: CheckContext, api: build.Obj) -> tuple[str, build.Obj | str | None]:
    """The APIService's Service as ``namespace/name`` ("" for none), and the Service read."""
    import httpx

    from aicr.kube.rest import KubeApiError

    svc = (api.get("spec") or {}).get("service") or {}
    if not svc.get("name"):
        return "", None
    backend = f"{svc.get('namespace')}/{svc.get('name')}"
    try:
        return backend, ctx.kube.get("Service", str(svc["name"]), svc.get("namespace"))
    except (KubeApiError, httpx.HTTPError) as e:
        return backend, f"Service get: {e}"


def _client(ctx: CheckContext) -> httpx.Client:
    import httpx

    return httpx.Client(timeout=CONFIG_SECONDS, trust_env=False)


def _pods_behind(ctx: CheckContext, host: tuple[str, str] | str) -> tuple[str, window.Listed] | str:
    """What the adapter's URL host reaches (a Service, a pod) and its pods; else why none."""
    import httpx

    from aicr.kube.rest import KubeApiError

    if isinstance(host, tuple):
        ns, name = host
        try:
            svc = ctx.kube.get("Service", name, ns)
        except (KubeApiError, httpx.HTTPError) as e:
            return f"Service {ns}/{name} could not be read (Service get: {e})"
        if svc is None:
            return f"there is no Service {ns}/{name}"
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector:
            return f"Service {ns}/{name} has no selector"
        labels = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return f"Service {ns}/{name}", _read(ctx, "Pod", ns, labels)
    candidates = _read(ctx, "Pod", selector=window.PROMETHEUS_PODS)
    if isinstance(candidates, str):
        return f"address {host}", candidates
    pods = [p for p in candidates if (p.get("status") or {}).get("podIP") == host]
    if pods:
        return f"pod address {host}", pods
    for ns in sorted({str((p.get("metadata") or {}).get("namespace")) for p in candidates}):
        services = _read(ctx, "Service", ns)
        for svc in services if not isinstance(services, str) else []:
            spec = svc.get("spec") or {}
            if spec.get("clusterIP") == host and (selector := spec.get("selector")):
                chosen = [
                    p
                    for p in candidates
                    if (p.get("metadata") or {}).get("namespace") == ns
                    and matches(
                        {"matchLabels": selector}, (p.get("metadata") or {}).get("labels") or {}
                    )
                ]
                return f"Service {ns}/{(svc.get('metadata') or {}).get('name')}", chosen
    return (
        f"no pod labelled {window.PROMETHEUS_PODS} nor its namespaces' Services has address {host}"
    )


def _queried(
    ctx: CheckContext, url: str | None, where: str, namespace: str, prometheuses: window.Listed
) -> window.Queried:
    """The Prometheus the adapter's ``--prometheus-url`` reaches, as far as it can be told."""
    if url is None:
        return window.Queried(f"its {window.PROMETHEUS_URL_FLAG} is not known: {where}")
    host = window.address(url, namespace)
    if host is None:
        return window.Queried(f"{where}: its host is no Service name or address in the cluster")
    found = _pods_behind(ctx, host)
    if isinstance(found, str):
        return window.Queried(f"{where}: {found}")
    reached, pods = found
    return window.behind(where, reached, pods, prometheuses)


def _config(ctx: CheckContext, url: str | None, where: str) -> window.ConfigRead:
    """GET the loaded configuration of the Prometheus at prometheusUrl, else at ``url``."""
    import httpx

    if ctx.settings.prometheus_url:
        url, where = ctx.settings.prometheus_url, "prometheusUrl of the check's settings"
    if url is None:
        return window.ConfigRead(None, where)
    try:
        parts = urlsplit(url)
        base = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
    except ValueError as e:
        return window.ConfigRead(url, where, error=f"not a URL ({e})")
    try:
        with _client(ctx) as http, http.stream("GET", base + scrape_config.API_PATH) as r:
            if r.status_code != 200:
                return window.ConfigRead(
                    base, where, error=f"HTTP {r.status_code} {r.reason_phrase}"
                )
            chunks, size = [], 0
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > CONFIG_MAX_BYTES:
                    too_big = f"the answer is larger than {CONFIG_MAX_BYTES >> 20} MiB"
                    return window.ConfigRead(base, where, error=too_big)
                chunks.append(chunk)
    except (httpx.HTTPError, httpx.InvalidURL) as e:
        return window.ConfigRead(base, where, error=f"{type(e).__name__}: {e}")
    return window.ConfigRead(base, where, body=b"".join(chunks).decode("utf-8", "replace"))


def _window(ctx: CheckContext, run: Run, api: build.Obj) -> bool:
    """The window for the loaded pod's metric to reach the HPA, each piece read and recorded.

    False when the step raised (recorded as other): nothing is created without a window.
    """
    with ctx.step("metric window") as step:
        step.asked = (
            "how long the loaded pod's GPU metric may take to reach the HPA: one DCGM "
            "exporter collection, one Prometheus scrape, one prometheus-adapter relist and "
            "one HPA sync, each where the cluster states it (else its documented default), "
            f"plus a {window.seconds_text(window.MARGIN_SECONDS)} margin"
        )
        pods = _read(ctx, "Pod", selector=window.EXPORTER_SELECTOR)
        backend, service = _backend(ctx, api)
        namespace = backend.partition("/")[0] or None
        deployments = _read(ctx, "Deployment", namespace) if namespace else []
        managers = _read(
            ctx,
            "Pod",
            window.CONTROLLER_MANAGER_NAMESPACE,
            window.CONTROLLER_MANAGER_SELECTOR,
        )
        prometheuses = _read(ctx, "Prometheus")
        url, where = window.adapter_url(window.adapter_containers(backend, service, deployments))
        queried = _queried(ctx, url, where, namespace or "", prometheuses)
        config = _config(ctx, url, where) if window.is_plain(queried, prometheuses) else None
        pieces = (
            window.exporter_piece(pods),
            window.scrape_piece(
                pods,
                _services(ctx, pods),
                _read(ctx, "ServiceMonitor"),
                _read(ctx, "PodMonitor"),
                prometheuses,
                queried,
                config,
            ),
            window.relist_piece(backend, service, deployments),
            window.sync_piece(managers),
        )
        run.window = window.Window(pieces, override=ctx.params.metric_seconds)
        lines = [p.line for p in pieces]
        lines.append(f"margin: {window.seconds_text(window.MARGIN_SECONDS)}")
        if ctx.params.metric_seconds is not None:
            lines.append(f"params.metricSeconds: {window.seconds_text(ctx.params.metric_seconds)}")
        step.answer = "\n".join(lines)
        step.info(f"the metric window: {run.window.summary}")
        return True
    return False


def _refused(ctx: CheckContext, run: Run) -> str | None:
    """DCGM's refusal to load without root (exit 227) as a pod's last exit, named; else None."""
    for pod in ctx.kube.list("Pod", ctx.workload_namespace, label_selector=run.selector):
        if dcgm_load.last_exit(pod) == dcgm_load.REQUIRES_ROOT_EXIT:
            name = (pod.get("metadata") or {}).get("name")
            return f"pod {name}: " + dcgm_load.exit_reason(dcgm_load.REQUIRES_ROOT_EXIT)
    return None


def _start(ctx: CheckContext, run: Run, dra: bool) -> list[build.Obj]:
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    with ctx.step("workload") as step:
        run.load_until = math.ceil(time.time() + ctx.params.load_seconds)
        step.asked = (
            f"Deployment {ctx.workload_namespace}/{build.NAME} ({image}): 1 replica, one GPU "
            f"each ({'DRA claim' if dra else GPU_RESOURCE}), loaded by dcgmproftester12 for "
            f"{ctx.params.load_seconds}s from now, then idle"
        )
        if dra:
            ctx.probes.create(build.claim_template())
        ctx.probes.create(build.deployment(image, run.load_until, ctx.workload_labels(), dra))
        pods, pending = run.serving(1, ctx.params.start_seconds)
        refused = _refused(ctx, run)
        if refused:  # its load exits at once and the container restarts: never a load
            step.failed(refused)
            return []
        if not pods:
            where = "; ".join(f"{n}: {w}" for n, w in pending.items()) or "no pod was created"
            step.failed(f"the pod did not run within {ctx.params.start_seconds:g}s: {where}")
            return []
        p = pods[0]
        step.answer = f"pod {p['metadata']['name']} on {p['spec'].get('nodeName')} loads its GPU"
        step.passed("one GPU pod runs its load")
        run.note(f"pod {p['metadata']['name']} running, loading its GPU")
        return pods
    return []


def _metric(ctx: CheckContext, run: Run, pod: build.Obj) -> bool:
    """Find the first of ``params.metrics`` the custom metrics API serves for ``pod``."""
    import httpx

    from aicr.kube.rest import KubeApiError

    name = str(pod["metadata"]["name"])
    wanted = list(ctx.params.metrics)
    run.window_end = time.monotonic() + run.window.seconds
    budget = min(run.window.seconds, run.load_left())
    within = build.within(budget, run.window, load_first=run.load_left() < run.window.seconds)
    with ctx.step("metric for the pod") as step:
        step.asked = (
            f"{run.api_version}: {', '.join(wanted)} (first served) for pod "
            f"{ctx.workload_namespace}/{name}, {within}"
        )
        end = time.monotonic() + budget
        said: dict[str, str] = {}
        while True:
            for metric in wanted:
                try:
                    values = ctx.kube.pod_metric(
                        run.api_version, ctx.workload_namespace, name, metric
                    )
                except (KubeApiError, httpx.HTTPError) as e:
                    said[metric] = str(e)
                    continue
                value = build.metric_value(values, name)
                if value is None:
                    said[metric] = "not served for this pod"
                    continue
                run.metric = metric
                step.answer = f"{metric} = {value:g} for pod {name}"
                step.passed(f"the custom metrics API serves {metric} for the loaded GPU pod")
                return True
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(POLL_SECONDS, left))
        listed = _listed(ctx, run.api_version)
        step.answer = "; ".join(f"{m}: {w}" for m, w in said.items())
        step.failed(
            f"the custom metrics API served none of {', '.join(wanted)} for pod {name} "
            f"{within} ({step.answer}); {build.listing(wanted, listed)}"
        )
        return False
    return False


def _readable(ctx: CheckContext, run: Run) -> bool:
    stabilization = ctx.params.stabilization_seconds
    left = max(0.0, run.window_end - time.monotonic())
    budget = min(left, run.load_left())
    within = build.within(budget, run.window, load_first=run.load_left() < left, rest=True)
    with ctx.step("metric read by the HPA") as step:
        step.asked = (
            f"HPA {build.NAME} (autoscaling/v2): type Pods, {run.metric} average "
            f"{build.TARGET} per pod, {build.MIN_REPLICAS}-{build.MAX_REPLICAS} "
            f"replicas, scale-down stabilization {stabilization}s"
        )
        ctx.probes.create(build.hpa(run.metric, stabilization))
        run.note("HPA created")
        if not run.watch_hpa(lambda h: build.readable(h, run.metric), budget):
            step.answer = run.state()
            step.failed(
                f"the HPA could not read {run.metric} {within}: {build.conditions_text(run.hpa)}"
            )
            return False
        value = build.observed(run.hpa, run.metric)
        step.answer = f"{run.metric} = {value:g} per pod; {run.state()}"
        step.passed("the HPA reads the pods' metric through the custom metrics API")
        return True
    return False


def _scale_up(ctx: CheckContext, run: Run, first: build.Obj) -> bool:
    bound = min(ctx.params.scale_up_seconds, run.load_left())
    with ctx.step("scale up") as step:
        step.asked = (
            f"{run.metric} under load (target {build.TARGET}): the HPA must ask for "
            f"{build.MAX_REPLICAS} replicas and the new pod run on a GPU node within {bound:g}s"
            " (before the load ends)"
        )
        end = time.monotonic() + bound
        if not run.watch_hpa(lambda h: (build.replicas(h)[0] or 0) >= build.MAX_REPLICAS, bound):
            step.answer = run.state()
            step.failed(f"no scale-up within {bound:g}s: {run.state()}")
            return False
        pods, pending = run.serving(build.MAX_REPLICAS, max(0.0, end - time.monotonic()))
        new = [p for p in pods if p["metadata"]["name"] != first["metadata"]["name"]]
        if len(pods) < build.MAX_REPLICAS or not new:
            where = "; ".join(f"{n}: {w}" for n, w in pending.items()) or "not created"
            step.answer = run.state()
            step.failed(
                f"the HPA asked for {build.MAX_REPLICAS} replicas but the new pod did "
                f"not run within {bound:g}s: {where}"
            )
            return False
        nodes = {n["metadata"]["name"]: n for n in ctx.kube.list("Node")}
        wrong = build.off_gpu(new, set(gpu_nodes(list(nodes.values()))))
        step.answer = (
            "new pod "
            + ", ".join(f"{p['metadata']['name']} on {p['spec'].get('nodeName')}" for p in new)
            + f"; {run.state()}"
        )
        if wrong:
            step.failed("the new pod is not on a GPU node: " + ", ".join(wrong))
            return False
        run.note(
            "new pod running: "
            + ", ".join(f"{p['metadata']['name']} on {p['spec']['nodeName']}" for p in new)
        )
        step.passed(f"replicas rose to {build.MAX_REPLICAS}; the new pod runs on a GPU node")
        return True
    return False


def _scale_down(ctx: CheckContext, run: Run) -> None:
    """End the load (the stop ConfigMap) and watch the HPA return to one replica.

    The pods see the stop at their kubelet's next volume sync, and at the latest their load
    ends at ``load_until``: the bound counts from the earlier of the two.
    """
    window = ctx.params.stabilization_seconds
    reach = min(float(build.VOLUME_SYNC_SECONDS), run.load_left())
    bound = reach + window + ctx.params.scale_down_seconds
    with ctx.step("scale down") as step:
        step.asked = (
            f"the check ends the load now (ConfigMap {build.STOP}, which the pods see within "
            f"the kubelet's {build.VOLUME_SYNC_SECONDS}s volume sync; their load ends in "
            f"{run.load_left():.0f}s at the latest): the HPA must return to "
            f"{build.MIN_REPLICAS} replica after its {window}s stabilization window, "
            f"within {bound:g}s"
        )
        ctx.probes.create(build.stop())
        run.note(f"the check ended the load: {run.metric} falls")
        began = time.monotonic()
        if not run.watch_hpa(lambda h: build.replicas(h)[0] == build.MIN_REPLICAS, bound):
            step.answer = run.state()
            step.failed(f"no scale-down within {bound:g}s of ending the load: {run.state()}")
            return
        took = time.monotonic() - began
        left = ctx.probes.wait("Deployment", build.scaled_down, budget=max(0.0, bound - took))
        if not left.done:
            step.answer = run.state()
            step.failed(
                f"the HPA asked for {build.MIN_REPLICAS} replica but the Deployment "
                f"still has {left.pending.get(build.NAME, 'more')} within {bound:g}s"
            )
            return
        step.answer = f"desired {build.MIN_REPLICAS} {took:.0f}s after the check ended the load; "
        step.answer += run.state()
        step.passed(f"replicas fell to {build.MIN_REPLICAS} after the stabilization window")


def _remove(ctx: CheckContext, run: Run) -> None:
    """Delete the HPA and the Deployment now and wait until its pods are gone (GPUs free)."""
    for kind in (HPA_KIND, "Deployment"):
        ctx.kube.delete(kind, build.NAME, ctx.workload_namespace)
    ctx.probes.wait("Pod", lambda p: False, budget=ctx.params.start_seconds, selector=run.selector)


def run(ctx: CheckContext) -> CheckResult:
    """Find the custom metrics API, start the loaded GPU workload, its metric and HPA."""
    found = _custom_metrics_api(ctx)
    if found is None:
        return ctx.conclude("autoscaling steps")
    version, api = found
    dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    run = Run(ctx, version)
    if not _window(ctx, run, api):
        return ctx.conclude("autoscaling steps")
    try:
        pods = _start(ctx, run, dra)
        if (
            pods
            and _metric(ctx, run, pods[0])
            and _readable(ctx, run)
            and _scale_up(ctx, run, pods[0])
        ):
            _scale_down(ctx, run)
    finally:
        if run.readings:
            ctx.record(
                "HPA timeline",
                f"HPA {build.NAME}: {run.metric} per pod, desired and "
                "current replicas at each change seen",
                "\n".join(r.line() for r in run.readings),
                "what the HPA showed",
            )
        _remove(ctx, run)
    return ctx.conclude(
        "autoscaling steps",
        f"HPA on {run.metric} (custom metrics API) scaled "
        f"GPU pods {build.MIN_REPLICAS} -> {build.MAX_REPLICAS} -> "
        f"{build.MIN_REPLICAS} ({'DRA' if dra else 'device plugin'})",
    )
