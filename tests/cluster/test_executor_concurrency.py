"""Parallel runs: the report equals a serial run's; concurrent runs share a namespace safely."""

from __future__ import annotations

import re
import threading

from harness import SimCluster
from runhelp import make_ctx, planned, remaining

from aicr.phases import Phase
from aicr.plan import PhasePlan, Plan
from aicr.runner.job import JobExecutor
from aicr.runner.orchestrate import run_plan

CHECKS = ["platform-health", "ai-service-metrics", "gpu-operator-version", "robust-controller",
          "check-nvidia-smi", "gpu-allocation-policy"]  # fmt: skip


# Two runs on one cluster do not share the GPU lock (it is per run), so the
# concurrent-runs test leaves out the check that takes every free GPU.
WITHOUT_GPUS = [c for c in CHECKS if c != "check-nvidia-smi"]


def _plan(checks: list[str] = CHECKS) -> Plan:
    by_phase: dict[Phase, list] = {}
    for name in checks:
        check = planned(name)
        by_phase.setdefault(check.phase, []).append(check)
    return Plan(phases=[PhasePlan(p, by_phase[p]) for p in (Phase.DEPLOYMENT, Phase.CONFORMANCE)
                        if p in by_phase])  # fmt: skip


def _run(cluster: SimCluster, parallel: int, namespace: str | None = None,
         checks: list[str] = CHECKS) -> list[tuple]:  # fmt: skip
    ctx = make_ctx(cluster, namespace=namespace)
    executor = JobExecutor()
    executor.start(ctx)
    try:
        results = run_plan(_plan(checks), executor, ctx, parallel=parallel)
    finally:
        left = executor.finish(ctx)
    assert left == [] and remaining(cluster, ctx.run_id) == []
    # Evidence names the run's own objects, says when and how long a wait took
    # ("gone after 0.1s"); everything else must be identical.
    def same(text: str) -> str:
        return _WAITED.sub(r"\1<t>s", text.replace(ctx.run_id, "<run>"))

    return [(c.name, r.status, same(r.message),
             [{k: same(v) for k, v in s.model_dump().items() if k != "timestamp"}
              for s in r.evidence])
            for c, r in results.results]  # fmt: skip


_WAITED = re.compile(r"(after )\d+(?:\.\d+)?s")


def test_parallel_report_equals_serial(cluster: SimCluster) -> None:
    assert _run(cluster, parallel=4) == _run(cluster, parallel=1)


def test_two_concurrent_runs_in_one_namespace_do_not_interfere(cluster: SimCluster) -> None:
    shared = f"aicr-shared-{cluster.run_id}"
    out: dict[int, list[tuple]] = {}
    threads = [
        threading.Thread(
            target=lambda i=i: out.update({i: _run(cluster, 4, shared, WITHOUT_GPUS)}))
        for i in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert out[0] == out[1]
    assert len(out[0]) == len(WITHOUT_GPUS)
    cluster.wait_for(
        lambda: not [n for n in cluster.core().list_namespace().items
                     if n.metadata.name == shared],
        timeout=60, message="shared namespace removed by the last run",
    )  # fmt: skip
