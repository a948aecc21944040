"""The conformance phase's wall time on the simulated cluster, against its longest check.

Runs ``aicr validate --phase conformance`` (the CLI, Job executor, default
``--parallel``) inside the simulated cluster's network namespace with every
conformance check implemented so far that this bench can make healthy, and
prints one line per check and the phase's figures:

    check <name> <seconds>
    phase wall <s> longest <s> ratio <wall/(longest+5)>

Target (issue 17): ratio <= 1.2, i.e. the phase costs little more than its
longest check, however many GPU checks it has: GPU checks overlap whenever
their reservations fit (aicr.runner.gpu_pool). The cluster is healthy: the GPU
Operator and DRA-driver stand-ins (operand DaemonSets whose pods really run),
a gVisor RuntimeClass and, by default, DRA allocation mode, so dra-support,
pod-autoscaling, driver-runtime-management and secure-accelerator-access take
their GPUs through ResourceClaims (the GPU RuntimeClass `nvidia` is there for
the last); the real components of COMPONENTS (KubeRay, for robust-controller;
Traefik, for inference-gateway, whose Gateway and API key come from
`hack/sim/sim config`; Prometheus, prometheus-adapter and the DCGM exporter,
pod-autoscaling's custom metrics API of GPU utilization; ai-service-metrics has
that Prometheus find its workload through the prometheus.io pod annotations) are
started with it.
With ``--mode device-plugin`` it also runs the checks whose pods request
``nvidia.com/gpu``: cluster-autoscaling against Karpenter and accelerator-metrics
against the DCGM exporter (the sim's ``karpenter`` and ``dcgm-exporter``
components, started then only). The exporter component lives in its own
namespace (``gpu-operator``, named by accelerator-metrics'
``params.exporterNamespace``); the GPU Operator stand-ins the operator checks
judge are in conformance_cluster.STAND_IN_NS.

    AICR_SIM_DIR=... PATH=.venv/bin:$PATH python bench/conformance_phase.py

Uses the running simulated cluster (hack/sim/sim up), or starts one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "hack" / "sim"), str(ROOT / "tests" / "cluster"), str(ROOT / "tests")]

from conformance_cluster import STAND_IN_NS, healthy, recipe, run_config, teardown  # noqa: E402
from harness import SimCluster  # noqa: E402
from simcluster.cluster.sim import Sim  # noqa: E402
from simcluster.components import install  # noqa: E402
from simcluster.components import registry as component_registry  # noqa: E402

from aicr.catalog import load_catalog  # noqa: E402
from aicr.checks import entrypoint  # noqa: E402
from aicr.phases import Phase  # noqa: E402

# The implemented conformance checks the healthy cluster below satisfies, in catalog order.
COVERED = ("dra-support", "gang-scheduling", "pod-autoscaling", "driver-runtime-management",
           "workload-sandboxing", "gpu-operator-health", "platform-health",
           "robust-controller", "inference-gateway", "ai-service-metrics",
           "secure-accelerator-access")  # fmt: skip
# The real components the covered checks judge (as `hack/sim/sim up --with` names them);
# gang-scheduling's gangs are CPU-only in DRA mode.
COMPONENTS = "kuberay,kueue,gateway,prometheus,prometheus-adapter,dcgm-exporter"
# Checks whose pods request nvidia.com/gpu: run with --mode device-plugin only, with their
# components
DEVICE_PLUGIN_ONLY = {"cluster-autoscaling": "karpenter", "accelerator-metrics": "dcgm-exporter"}
SNAPSHOT = ROOT / "tests" / "data" / "snapshots" / "ok.yaml"
SLACK_SECONDS = 5  # the ratio's allowance for the run's own start and finish


@dataclass
class PhaseRun:
    """One run of the phase: each check's own seconds, the phase's wall time, its events."""

    seconds: dict[str, float]
    wall: float
    events: list[dict[str, Any]]

    @property
    def longest(self) -> float:
        return max(self.seconds.values())

    def line(self) -> str:
        ratio = self.wall / (self.longest + SLACK_SECONDS)
        return f"phase wall {self.wall:.1f} longest {self.longest:.1f} ratio {ratio:.2f}"

    def timeline(self) -> list[str]:
        """When each check started and ended, and what it reserved, from the phase's start."""
        begin = next(e["time"] for e in self.events if e.get("event") == "phase-started")
        out = []
        for e in self.events:
            kind, message = e.get("event"), e.get("message", "")
            if kind in ("check-started", "check-finished") or "GPU" in message:
                said = f": {message}" if kind == "check-update" else ""
                out.append(f"  +{e['time'] - begin:5.1f} s {e.get('check', '')} {kind}{said}")
        return out


def validate(cluster: SimCluster, checks: list[str], work: Path, mode: str,
             parallel: int | None = None, delay: float = 0) -> PhaseRun:  # fmt: skip
    """One ``aicr validate --phase conformance``; exits unless every check passed."""
    # the GPU Operator is the stand-ins' (in their own namespace)
    (work / "recipe.yaml").write_text(recipe(checks, mode, STAND_IN_NS))
    padding = {check: {"aicrDelaySeconds": delay} for check in checks if delay}
    config = run_config(cluster, padding)  # what the components publish (sim config)
    (work / "config.yaml").write_text(json.dumps(config))
    command = ["aicr", "validate", "-r", str(work / "recipe.yaml"), "-s", str(SNAPSHOT),
               "--config", str(work / "config.yaml"), "--phase", "conformance",
               "--kubeconfig", str(cluster.kubeconfig), "--image", cluster.validator_image,
               "--log-json", "-o", str(work / "report.json")]  # fmt: skip
    if parallel is not None:
        command += ["--parallel", str(parallel)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "NO_COLOR": "1"})  # fmt: skip
    events = []
    for line in proc.stderr.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    times = {e["event"]: e["time"] for e in events if e.get("event", "").startswith("phase-")}
    if proc.returncode != 0 or set(times) != {"phase-started", "phase-finished"}:
        sys.exit(f"aicr validate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    tests = json.loads((work / "report.json").read_text())["results"]["tests"]
    bad = [f"{t['name']}: {t['status']}: {t.get('message')}" for t in tests
           if t["status"] != "passed"]  # fmt: skip
    if bad:
        sys.exit("checks that did not pass (the figures would be meaningless):\n" + "\n".join(bad))
    seconds = {t["name"]: t["duration"] / 1000 for t in tests}
    return PhaseRun(seconds, times["phase-finished"] - times["phase-started"], events)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parallel", type=int, default=None, help="default: aicr's own")
    parser.add_argument("--mode", choices=["dra", "device-plugin"], default="dra",
                        help="how the simulated GPUs are allocated")  # fmt: skip
    parser.add_argument(
        "--pad",
        type=float,
        default=10.0,
        help="the padded run's aicrDelaySeconds per check (0: no padded run)",
    )
    args = parser.parse_args()
    implemented = [c.name for c in load_catalog().ordered
                   if c.phase == Phase.CONFORMANCE and entrypoint.find(c)]  # fmt: skip
    device_plugin = args.mode == "device-plugin"
    checks = [name for name in implemented
              if name in COVERED or (device_plugin and name in DEVICE_PLUGIN_ONLY)]  # fmt: skip
    wanted = ",".join(dict.fromkeys([*COMPONENTS.split(","), *(
        DEVICE_PLUGIN_ONLY[c] for c in checks if c in DEVICE_PLUGIN_ONLY)]))  # fmt: skip
    install.build(component_registry.resolve(wanted))  # outside the cluster's namespace
    sim = Sim()
    started = not sim.is_up()
    if started:
        sim.up()
    else:
        sim.enter()  # the cluster's network namespace; aicr inherits it
    cluster = SimCluster(sim)
    started_components = cluster.start_components(wanted)
    try:
        healthy(cluster, args.mode)
        with tempfile.TemporaryDirectory() as work:
            run = validate(cluster, checks, Path(work), args.mode, args.parallel)
            serial = validate(cluster, checks, Path(work), args.mode, 1)
            # as many at once as there are checks: only the GPU reservations hold any back
            padded = (validate(cluster, checks, Path(work), args.mode, len(checks), args.pad)
                      if args.pad else None)  # fmt: skip
    finally:
        teardown(cluster)
        cluster.stop_components(started_components)
        if started:
            sim.down()
    for name in checks:
        print(f"check {name} {run.seconds[name]:.1f}")
    print(f"{run.line()}  [target <= 1.2]")
    print(f"  the same with --parallel 1: wall {serial.wall:.1f} "
          f"(its checks' own seconds add up to {sum(serial.seconds.values()):.1f})")  # fmt: skip
    print(*run.timeline(), sep="\n")
    if padded is not None:
        print(
            f"every check padded to {args.pad:g} s more (aicrDelaySeconds), so the checks "
            f"dominate the run's own start-up, and --parallel {len(checks)}, so only the GPU "
            "reservations could hold a check back:"
        )
        for name in checks:
            print(f"check {name} {padded.seconds[name]:.1f}")
        print(f"{padded.line()}  [target <= 1.2]")
        print(*padded.timeline(), sep="\n")
    for name in implemented:
        if name not in checks:
            why = ("its pods request nvidia.com/gpu: --mode device-plugin"
                   if name in DEVICE_PLUGIN_ONLY else "its healthy cluster is not set up here")
            print(f"  not in the bench ({why}): {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
