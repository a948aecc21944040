"""Executor overhead and parallel speed-up on the simulated cluster.

Runs synthetic checks of known duration (any catalog check with the
``aicrDelaySeconds`` param: it sleeps, then runs) through the real Job path and prints:

- overhead per check: from the Job's creation to the result being recorded,
  minus the check's own run time (the span it reports in its result), as the
  issue defines it; and, separately, the per-check setup before the Job (its
  ServiceAccount, RBAC, result ConfigMap and workload namespace);
- wall time of 8 independent 10-second checks, serial and with --parallel 4,
  and their ratio;
- a line per real check (the deployment checks and platform-health, one at a
  time, on the healthy simulated cluster: a GPU Operator stand-in, device-plugin
  mode): its status, own time, overhead and the start-up stage, so a real check
  that gets slow to start (a heavy import) shows.

Targets (issue 5): overhead <= 1.5 s per check; parallel/serial <= 0.35.

    AICR_SIM_DIR=... PATH=.venv/bin:$PATH python bench/executor_overhead.py [--seconds 10]

Uses the running simulated cluster (hack/sim/sim up), or starts one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "hack" / "sim"), str(ROOT / "tests" / "cluster"), str(ROOT / "tests")]

from gpu_operator import CRD, install_operator, wait_available  # noqa: E402
from harness import SimCluster  # noqa: E402
from kubernetes import client  # noqa: E402
from runhelp import make_ctx, planned  # noqa: E402
from simcluster.cluster.sim import Sim  # noqa: E402

from aicr.catalog import load_catalog  # noqa: E402
from aicr.catalog.params import preflight  # noqa: E402
from aicr.checks import entrypoint  # noqa: E402
from aicr.config import parse_config  # noqa: E402
from aicr.kube import names, pod_status  # noqa: E402
from aicr.phases import PHASE_ORDER, Phase  # noqa: E402
from aicr.plan import PhasePlan, Plan  # noqa: E402
from aicr.recipe.load import parse_recipe  # noqa: E402
from aicr.result import CheckResult  # noqa: E402
from aicr.runner import job as job_module  # noqa: E402
from aicr.runner.context import RunContext  # noqa: E402
from aicr.runner.job import JobExecutor  # noqa: E402
from aicr.runner.orchestrate import run_plan  # noqa: E402

# Eight catalog checks that take no exclusive GPUs, so all may overlap.
CHECKS = ["operator-health", "expected-resources", "gpu-operator-version", "gpu-allocation-policy",
          "inference-gateway", "robust-controller", "driver-runtime-management",
          "workload-sandboxing"]  # fmt: skip


def config(seconds: float) -> object:
    checks = ", ".join(f"{c}: {{params: {{aicrDelaySeconds: {seconds}}}}}" for c in CHECKS)
    return parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {{{checks}}}}}}}\n"
    )


class Timing(JobExecutor):
    """JobExecutor recording when each check began (its objects, Job last, ms apart) and ended."""

    def __init__(self) -> None:
        super().__init__()
        self.began: dict[str, float] = {}
        self.ended: dict[str, float] = {}
        self.running: dict[str, float] = {}  # the pod watch first showed the container running
        self.terminated: dict[str, float] = {}  # ... and first showed it terminated
        self._tlock = threading.Lock()

    job_created: dict[str, float] = {}
    _create = staticmethod(job_module.apply_check_objects)

    @staticmethod
    def apply_check_objects(api, objects):  # type: ignore[no-untyped-def]
        """Record when each Job is created (the last object of a check)."""
        for obj in objects:
            if obj["kind"] == "Job":
                Timing.job_created[obj["metadata"]["name"]] = time.time()
        return Timing._create(api, objects)

    def _take(self, f, event) -> None:  # type: ignore[no-untyped-def]
        super()._take(f, event)
        if event.source == "pod" and event.obj:
            state = (pod_status.container_status(event.obj) or {}).get("state") or {}
            with self._tlock:
                for key, seen in (("running", self.running), ("terminated", self.terminated)):
                    if key in state:
                        seen.setdefault(f.check.name, time.time())

    def run(self, check, ctx: RunContext) -> CheckResult:  # type: ignore[no-untyped-def]
        with self._tlock:
            self.began[check.name] = time.time()
        result = super().run(check, ctx)
        with self._tlock:
            self.ended[check.name] = time.time()
        return result


job_module.apply_check_objects = Timing.apply_check_objects


# Where the overhead goes, stage by stage (each from the pod watch and the check's span).
STAGES = (
    "Job created -> container running",
    "container running -> check's span begins (interpreter, imports, inputs)",
    "check's span ends -> container seen terminated (result write, exit, status)",
    "container seen terminated -> result recorded (result read, logs)",
)


@dataclass
class Measure:
    """One plan's figures, in seconds."""

    wall: float
    overheads: list[float] = field(default_factory=list)
    setups: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STAGES})


def run(cluster: SimCluster, parallel: int, seconds: float) -> Measure:
    """Run the eight synthetic checks with ``parallel`` at a time and measure them."""
    # One phase holds all eight: a failing synthetic check must not stop the others.
    plan = Plan(phases=[PhasePlan(Phase.CONFORMANCE, [planned(name) for name in CHECKS])])
    measure, _ = measured(plan, make_ctx(cluster, config=config(seconds), events=[]), parallel)
    return measure


def measured(plan: Plan, ctx: RunContext, parallel: int) -> tuple[Measure, dict[str, CheckResult]]:
    """Run ``plan`` through the timed Job executor; its figures and each check's result."""
    executor = Timing()
    executor.start(ctx)
    try:
        start = time.monotonic()
        results = run_plan(plan, executor, ctx, parallel=parallel)
        measure = Measure(time.monotonic() - start)
    finally:
        executor.finish(ctx)
    for check, result in results.results:
        own = (result.stop_ms - result.start_ms) / 1000  # the check's own span, delay included
        created = Timing.job_created[names.check_name(ctx.run_id, check.name)]
        measure.overheads.append(executor.ended[check.name] - created - own)
        measure.setups.append(created - executor.began[check.name])
        marks = (created, executor.running[check.name], result.start_ms / 1000,
                 result.stop_ms / 1000, executor.terminated[check.name],
                 executor.ended[check.name])  # fmt: skip
        spans = [marks[1] - marks[0], marks[2] - marks[1], marks[4] - marks[3], marks[5] - marks[4]]
        for stage, span in zip(STAGES, spans, strict=True):
            measure.stages[stage].append(span)
    return measure, {check.name: result for check, result in results.results}


OPERATOR_NS = "gpu-operator"


def healthy_recipe() -> str:
    """Every implemented deployment check and platform-health, against the operator stand-in."""
    deployment = [c.name for c in load_catalog().ordered
                  if c.phase == Phase.DEPLOYMENT and entrypoint.find(c)]  # fmt: skip
    return (
        "componentRefs:\n"
        f"  - name: gpu-operator\n    namespace: {OPERATOR_NS}\n"
        "    overrides: {devicePlugin: {enabled: true}}\n"
        "    expectedResources:\n"
        f"      - {{kind: Deployment, name: gpu-operator, namespace: {OPERATOR_NS}}}\n"
        "validation:\n  deployment:\n"
        "    constraints: [{name: Deployment.gpu-operator.version, value: '>= v25.0.0'}]\n"
        f"    checks: [{', '.join(deployment)}]\n"
        "  conformance:\n    checks: [platform-health]\n"
    )


def real_checks(cluster: SimCluster) -> tuple[Measure, list[tuple[str, CheckResult]]]:
    """Each real check alone on the healthy cluster: figures and results in plan order."""
    cluster.set_mode("device-plugin")
    cluster.apply(CRD)
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NS}})
    install_operator(cluster, OPERATOR_NS)
    wait_available(cluster, OPERATOR_NS, ["gpu-operator"])
    recipe = parse_recipe(healthy_recipe())
    checks = [planned(name) for phase in PHASE_ORDER for name in recipe.checks(phase) or []]
    prepared = {c.name: preflight(c.name, recipe, None, "recipe") for c in checks}
    ctx = make_ctx(cluster, healthy_recipe(), events=[],
                   check_inputs={k: v for k, v in prepared.items() if v is not None})
    try:
        measure, results = measured(Plan(phases=[PhasePlan(Phase.CONFORMANCE, checks)]), ctx, 1)
    finally:  # the CRD's removal takes the ClusterPolicy with it
        cluster.delete_namespace(OPERATOR_NS, wait=False)
        client.ApiextensionsV1Api(cluster.api()).delete_custom_resource_definition(
            CRD["metadata"]["name"])
    return measure, [(c.name, results[c.name]) for c in checks]


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each check")
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()
    sim = Sim()
    started = not sim.is_up()
    if started:
        sim.up()
    else:
        sim.enter()  # the cluster's network namespace
    cluster = SimCluster(sim)
    try:
        serial = run(cluster, 1, args.seconds)
        parallel = run(cluster, args.parallel, args.seconds)
        real, real_results = real_checks(cluster)
    finally:
        if started:
            sim.down()
    both = serial.overheads + parallel.overheads
    print(f"checks: {len(CHECKS)} x {args.seconds:g} s (synthetic, through the Job path)")
    print(
        f"overhead per check (Job creation -> result recorded, minus the check's own time): "
        f"median {_median(both)}, max {max(both):.2f} s, "
        f"serial median {_median(serial.overheads)}, "
        f"parallel median {_median(parallel.overheads)}  [target <= 1.5 s]"
    )
    print("  medians by stage (serial / parallel):")
    for stage in STAGES:
        print(f"    {stage}: {_median(serial.stages[stage])} / {_median(parallel.stages[stage])}")
    print(
        f"setup per check before its Job (ServiceAccount, RBAC, result ConfigMap, workload "
        f"namespace): serial median {_median(serial.setups)}, parallel median "
        f"{_median(parallel.setups)}"
    )
    print(
        f"wall time: serial {serial.wall:.1f} s, --parallel {args.parallel} "
        f"{parallel.wall:.1f} s, ratio {parallel.wall / serial.wall:.2f}  [target <= 0.35]"
    )
    print("real checks, one at a time on the healthy simulated cluster (Job path):")
    start_up = real.stages[STAGES[1]]
    for (name, result), overhead, up in zip(real_results, real.overheads, start_up, strict=True):
        own = (result.stop_ms - result.start_ms) / 1000
        print(f"  {name:<22} {result.status.value:<8} own {own:5.2f} s  overhead {overhead:4.2f} s"
              f"  (start-up {up:4.2f} s)  [target <= 1.5 s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
