"""pod-autoscaling: an HPA scales GPU pods on a custom metric, up and back down.

What it proves: the cluster serves the custom metrics API
(``custom.metrics.k8s.io``; the APIService is named in evidence), and an
``autoscaling/v2`` HPA of type ``Pods`` on a per-pod metric it serves scales a
GPU workload: a Deployment whose pods take one GPU each (``nvidia.com/gpu``, or
in DRA mode a claim for one GPU) and serve a gauge whose value the check sets.
The check raises it above the HPA's target: replicas rise and the new pod runs
on a GPU node; it lowers it: replicas fall, after the stabilization window set
on the HPA itself (``behavior.scaleDown.stabilizationWindowSeconds``). The
metric reaches the HPA as on a real platform: the metrics pipeline (e.g.
Prometheus scraping the pods, prometheus-adapter serving the series) carries it.

What it does not: resource (CPU/memory) or external metrics, scaling past two
replicas, or the metrics pipeline's latency.

How it fails: no APIService serves the custom metrics API (nothing is
created); the pods do not start; the HPA cannot read the metric within the
bound (its own condition, e.g. ``FailedGetPodsMetric``); no scale-up, or the
new pod does not run on a GPU node, within ``scaleUpSeconds``; no scale-down
within the window plus ``scaleDownSeconds``. Each failure quotes the HPA's
conditions.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from aicr.checks import CheckContext
from aicr.checks.allocation import AllocationMode, prepared_mode
from aicr.checks.conformance.pod_autoscaling import build
from aicr.checks.conformance.pod_autoscaling.params import Params as Params
from aicr.checks.conformance.pod_autoscaling.params import preflight as preflight
from aicr.checks.steps import Step, now_iso
from aicr.checks.workload_images import workload_image
from aicr.kube.gpus import GPU_RESOURCE, gpu_nodes
from aicr.result import CheckResult

HPA_KIND = "HorizontalPodAutoscaler"
SET_SECONDS = 5.0  # one PUT of the load to a pod


def set_load(pod: build.Obj, value: float) -> None:
    """PUT the load on one pod's server (from inside the cluster: the check's own pod)."""
    import httpx

    url = f"http://{pod['status']['podIP']}:{build.PORT}/load"
    with httpx.Client(timeout=SET_SECONDS, trust_env=False) as http:
        http.put(url, content=f"{value:g}").raise_for_status()


class Run:
    """One run's state: the workload's selector, and the HPA readings seen so far."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.metric: str = ctx.params.metric
        self.selector = ",".join(
            f"{k}={v}"
            for k, v in sorted({**ctx.workload_labels(), build.APP_LABEL: build.NAME}.items())
        )
        self.readings: list[build.Reading] = []
        self.hpa: build.Obj = {}

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

    def load(self, step: Step, value: float) -> bool:
        """Set the load on every serving pod; False (the step failed) if one refused."""
        import httpx

        pods = [
            p
            for p in self.ctx.kube.list("Pod", self.ctx.workload_namespace, self.selector)
            if build.is_serving(p)
        ]
        for p in pods:
            try:
                set_load(p, value)
            except httpx.HTTPError as e:
                step.failed(
                    f"could not set the load on pod {p['metadata']['name']} "
                    f"({p['status']['podIP']}): {e}"
                )
                return False
        if not pods:
            step.failed(f"no pod serves {self.metric} to set it on")
            return False
        names = ", ".join(str(p["metadata"]["name"]) for p in pods)
        self.note(f"set {self.metric} to {value:g} on {names}")
        return True

    def state(self) -> str:
        """The HPA's replicas and conditions as last seen."""
        desired, current = build.replicas(self.hpa)
        return f"desired {desired}, current {current}; {build.conditions_text(self.hpa)}"


def _custom_metrics_api(ctx: CheckContext) -> bool:
    with ctx.step("custom metrics API") as step:
        step.asked = f"APIServices for {build.CUSTOM_METRICS_GROUP}"
        api = build.custom_metrics_api(ctx.kube.list("APIService"))
        if api is None:
            step.answer = "none"
            step.failed(
                f"no APIService serves {build.CUSTOM_METRICS_GROUP}: the cluster has no "
                "custom metrics API (nothing was created)"
            )
            return False
        step.answer = build.describe_apiservice(api)
        step.info("the HPA reads the pods' metric through it")
        return True
    return False  # the step raised: recorded as other


def _start(ctx: CheckContext, run: Run, dra: bool) -> list[build.Obj]:
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    with ctx.step("workload") as step:
        step.asked = (
            f"Deployment {ctx.workload_namespace}/{build.NAME} ({image}): 1 replica, "
            f"one GPU each ({'DRA claim' if dra else GPU_RESOURCE}), serving the "
            f"gauge {run.metric} on :{build.PORT}/metrics"
        )
        if dra:
            ctx.probes.create(build.claim_template())
        ctx.probes.create(build.deployment(image, run.metric, ctx.workload_labels(), dra))
        pods, pending = run.serving(1, ctx.params.start_seconds)
        if not pods:
            where = "; ".join(f"{n}: {w}" for n, w in pending.items()) or "no pod was created"
            step.failed(f"the pod did not serve within {ctx.params.start_seconds:g}s: {where}")
            return []
        p = pods[0]
        step.answer = (
            f"pod {p['metadata']['name']} on {p['spec'].get('nodeName')} "
            f"({p['status']['podIP']}) serves {run.metric}"
        )
        step.passed("one GPU pod serves the metric")
        return pods
    return []


def _readable(ctx: CheckContext, run: Run) -> bool:
    stabilization = ctx.params.stabilization_seconds
    with ctx.step("metric read by the HPA") as step:
        step.asked = (
            f"HPA {build.NAME} (autoscaling/v2): type Pods, {run.metric} average "
            f"{build.TARGET} per pod, {build.MIN_REPLICAS}-{build.MAX_REPLICAS} "
            f"replicas, scale-down stabilization {stabilization}s"
        )
        ctx.probes.create(build.hpa(run.metric, stabilization))
        run.note("HPA created")
        if not run.watch_hpa(lambda h: build.readable(h, run.metric), ctx.params.metric_seconds):
            step.answer = run.state()
            step.failed(
                f"the HPA could not read {run.metric} within "
                f"{ctx.params.metric_seconds:g}s: {build.conditions_text(run.hpa)}"
            )
            return False
        value = build.observed(run.hpa, run.metric)
        step.answer = f"{run.metric} = {value:g} per pod; {run.state()}"
        step.passed("the HPA reads the pods' metric through the custom metrics API")
        return True
    return False


def _scale_up(ctx: CheckContext, run: Run, first: build.Obj) -> bool:
    bound = ctx.params.scale_up_seconds
    with ctx.step("scale up") as step:
        step.asked = (
            f"{run.metric} raised to {build.HIGH} (target {build.TARGET}): the HPA "
            f"must ask for {build.MAX_REPLICAS} replicas and the new pod run on a GPU "
            f"node within {bound:g}s"
        )
        end = time.monotonic() + bound
        if not run.load(step, build.HIGH):
            return False
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
                f"not serve within {bound:g}s: {where}"
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
            "new pod serving: "
            + ", ".join(f"{p['metadata']['name']} on {p['spec']['nodeName']}" for p in new)
        )
        step.passed(f"replicas rose to {build.MAX_REPLICAS}; the new pod runs on a GPU node")
        return True
    return False


def _scale_down(ctx: CheckContext, run: Run) -> None:
    window = ctx.params.stabilization_seconds
    bound = window + ctx.params.scale_down_seconds
    with ctx.step("scale down") as step:
        step.asked = (
            f"{run.metric} lowered to {build.LOW}: the HPA must return to "
            f"{build.MIN_REPLICAS} replica after its {window}s stabilization window, "
            f"within {bound:g}s"
        )
        if not run.load(step, build.LOW):
            return
        began = time.monotonic()
        if not run.watch_hpa(lambda h: build.replicas(h)[0] == build.MIN_REPLICAS, bound):
            step.answer = run.state()
            step.failed(f"no scale-down within {bound:g}s: {run.state()}")
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
        step.answer = f"desired {build.MIN_REPLICAS} {took:.0f}s after the metric fell; "
        step.answer += run.state()
        step.passed(f"replicas fell to {build.MIN_REPLICAS} after the stabilization window")


def _remove(ctx: CheckContext, run: Run) -> None:
    """Delete the HPA and the Deployment now and wait until its pods are gone (GPUs free)."""
    for kind in (HPA_KIND, "Deployment"):
        ctx.kube.delete(kind, build.NAME, ctx.workload_namespace)
    ctx.probes.wait("Pod", lambda p: False, budget=ctx.params.start_seconds, selector=run.selector)


def run(ctx: CheckContext) -> CheckResult:
    """Find the custom metrics API, start the GPU workload and its HPA, raise, then lower."""
    if not _custom_metrics_api(ctx):
        return ctx.conclude("autoscaling steps")
    dra = prepared_mode(ctx.prepared, ctx.recipe) == AllocationMode.DRA
    run = Run(ctx)
    try:
        pods = _start(ctx, run, dra)
        if pods and _readable(ctx, run) and _scale_up(ctx, run, pods[0]):
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
