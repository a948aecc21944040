"""GPU reservations across runs: the shared Lease lists every holder and its GPUs."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from runhelp import make_ctx, planned, remaining

from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.phases import Phase
from aicr.plan import PhasePlan, Plan
from aicr.result import CheckResult, Detail
from aicr.runner.context import RunContext
from aicr.runner.events import Event
from aicr.runner.gpu_lease import LEASE_NAME
from aicr.runner.job import JobExecutor
from aicr.runner.manifests import RESERVATIONS_ANNOTATION
from aicr.runner.orchestrate import run_plan
from executor_fakes import wait_until

SECONDS = 3
EVERY = {"all": True}


def delayed(seconds: float) -> Any:
    params = f"{{params: {{aicrDelaySeconds: {seconds}}}}}"
    return parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {{operator-health: {params}}}}}}}\n"
    )


def run_gpu_check(ctx: RunContext, gpus: dict[str, Any]) -> tuple[CheckResult, list[str]]:
    """A cheap check declared as taking ``gpus``, through the orchestrator and the Job path."""
    executor = JobExecutor()
    executor.start(ctx)
    try:
        plan = Plan([PhasePlan(Phase.CONFORMANCE, [planned("operator-health", gpus=gpus)])])
        out = run_plan(
            plan, executor, ctx, parallel=1, events=ctx.events, gpus=executor.gpu_pool(ctx)
        )
    finally:
        left = executor.finish(ctx)
    return out.results[0][1], left


def lease_entries(cluster: SimCluster, namespace: str) -> dict[str, Any] | None:
    """The Lease's holders and what each holds; None when there is no Lease."""
    coord = client.CoordinationV1Api(cluster.api())
    items = coord.list_namespaced_lease(namespace, field_selector=f"metadata.name={LEASE_NAME}")
    if not items.items:
        return None
    entries: dict[str, Any] = json.loads(
        (items.items[0].metadata.annotations or {}).get(RESERVATIONS_ANNOTATION) or "{}"
    )
    return entries


def foreign_lease(cluster: SimCluster, namespace: str, holder: str, seconds: int,
                  legacy: bool = False) -> None:  # fmt: skip
    """A Lease held by run ``holder`` that nobody renews: ours, or an older aicr's (legacy)."""
    entry = {f"{holder}/check-nvidia-smi": {"need": "every free GPU", "gpus": {}, "all": True,
                                            "renewed": "2026-01-01T00:00:00.000000Z"}}  # fmt: skip
    meta: dict[str, Any] = {"name": LEASE_NAME}
    if not legacy:
        meta["annotations"] = {RESERVATIONS_ANNOTATION: json.dumps(entry)}
    client.CoordinationV1Api(cluster.api()).create_namespaced_lease(namespace, {
        "metadata": meta,
        "spec": {"holderIdentity": f"{holder}/check-nvidia-smi", "leaseDurationSeconds": seconds},
    })  # fmt: skip


def waiting(events: list[Event]) -> list[str]:
    return [e.message for e in events if e.message.startswith("waiting for GPUs")]


class Runs:
    """Two runs of one GPU check: contexts, what each said, results, the Lease seen meanwhile."""

    def __init__(self) -> None:
        self.contexts: list[RunContext] = []
        self.told: dict[str, list[str]] = {}
        self.results: dict[str, CheckResult] = {}
        self.seen: list[dict[str, Any]] = []

    def in_order(self) -> list[CheckResult]:
        return sorted(self.results.values(), key=lambda r: r.start_ms)


def two_runs(cluster: SimCluster, gpus: dict[str, Any]) -> Runs:
    """Two runs of one GPU check at once in one namespace."""
    cluster.wait_gpus_idle()
    namespace = cluster.fresh_namespace("gpu-lease")
    runs = Runs()
    logs: list[list[Event]] = [[], []]
    contexts = [make_ctx(cluster, namespace=namespace, config=delayed(SECONDS), events=log)
                for log in logs]  # fmt: skip
    out: dict[str, tuple[CheckResult, list[str]]] = {}
    seen: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.3):
            seen.append(lease_entries(cluster, namespace) or {})

    def go(ctx: RunContext) -> None:
        out[ctx.run_id] = run_gpu_check(ctx, gpus)

    threads = [threading.Thread(target=go, args=(ctx,)) for ctx in contexts]
    watcher = threading.Thread(target=watch)
    for t in [watcher, *threads]:
        t.start()
    for t in threads:
        t.join(timeout=180)
    done.set()
    watcher.join()
    for ctx in contexts:
        result, left = out[ctx.run_id]
        assert result.status != Status.OTHER, result.message
        assert result.stop_ms - result.start_ms >= SECONDS * 1000  # the check's own run
        assert left == [] and remaining(cluster, ctx.run_id) == []
    assert lease_entries(cluster, namespace) is None  # the last holder deleted it
    cluster.delete_namespace(namespace, wait=False)
    runs.contexts, runs.seen = contexts, seen
    runs.told = {c.run_id: waiting(log) for c, log in zip(contexts, logs, strict=True)}
    runs.results = {run: result for run, (result, _) in out.items()}
    return runs


def test_two_runs_whose_reservations_fit_run_together(cluster: SimCluster) -> None:
    # 8 GPUs on one node each: the sim's two GPU nodes hold both at once
    runs = two_runs(cluster, {"perNode": 8})
    first, second = runs.in_order()
    assert first.stop_ms > second.start_ms  # together
    both = next(s for s in runs.seen if len(s) == 2)
    assert sorted(json.dumps(e["gpus"]) for e in both.values()) == [
        '{"gpu-h100-0": 8}',
        '{"gpu-h100-1": 8}',
    ]
    assert {h.partition("/")[0] for h in both} == set(runs.results)
    assert runs.told == {run: [] for run in runs.results}


def test_two_runs_whose_reservations_do_not_fit_take_turns(cluster: SimCluster) -> None:
    runs = two_runs(cluster, EVERY)
    first, second = runs.in_order()
    assert first.stop_ms <= second.start_ms  # one after the other, never together
    assert max(len(s) for s in runs.seen) == 1
    waited = [run for run, said in runs.told.items() if said]
    assert len(waited) == 1, runs.told  # the later run said why it waited, naming the holder
    holder = next(run for run in runs.results if run not in waited)
    assert runs.told[waited[0]][0] == (
        "waiting for GPUs: needs every free GPU; free now gpu-h100-0 0, gpu-h100-1 0; "
        f"{holder}/operator-health holds every free GPU (gpu-h100-0 8, gpu-h100-1 8)"
    )


@pytest.mark.parametrize("legacy", [False, True], ids=["reservations", "older-aicr"])
def test_a_holder_that_stopped_renewing_expires(cluster: SimCluster, legacy: bool) -> None:
    namespace = cluster.fresh_namespace("gpu-lease")
    foreign_lease(cluster, namespace, "rdeadbeef", seconds=3, legacy=legacy)
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    result, left = run_gpu_check(ctx, {"count": 1})
    assert result.status != Status.OTHER, result.message
    assert (
        waiting(events)
        and "rdeadbeef/check-nvidia-smi holds every free GPU" in (waiting(events)[0])
    )
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert lease_entries(cluster, namespace) is None
    cluster.delete_namespace(namespace, wait=False)


def test_a_run_stopped_while_waiting_ends_interrupted_and_keeps_the_others_holding(
    cluster: SimCluster,
) -> None:
    namespace = cluster.fresh_namespace("gpu-lease")
    foreign_lease(cluster, namespace, "rlivelive", seconds=600)
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    out: list[tuple[CheckResult, list[str]]] = []
    thread = threading.Thread(target=lambda: out.append(run_gpu_check(ctx, {"count": 1})))
    thread.start()
    wait_until(lambda: waiting(events), timeout=30)
    ctx.cancel.set()  # Ctrl-C
    thread.join(timeout=60)
    ((result, left),) = out
    assert (result.status, result.detail) == (Status.OTHER, Detail.INTERRUPTED)
    assert result.message.startswith("not started: the run was stopped (waiting for GPUs: ")
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert list(lease_entries(cluster, namespace) or {}) == ["rlivelive/check-nvidia-smi"]
    cluster.delete_namespace(namespace, wait=False)


def test_an_entry_left_by_the_same_run_does_not_block(cluster: SimCluster) -> None:
    """Only what this run holds now counts for it; its stale entry costs no wait."""
    namespace = cluster.fresh_namespace("gpu-lease")
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    foreign_lease(cluster, namespace, ctx.run_id, seconds=600)
    result, left = run_gpu_check(ctx, EVERY)
    assert waiting(events) == []
    assert result.status != Status.OTHER, result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert lease_entries(cluster, namespace) is None
    cluster.delete_namespace(namespace, wait=False)
