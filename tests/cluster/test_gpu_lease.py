"""Checks that take whole GPUs never overlap across runs either: the Lease in the run namespace."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from runhelp import make_ctx, planned, remaining, run_one

from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.plan import PlannedCheck
from aicr.result import CheckResult, Detail
from aicr.runner import RunContext
from aicr.runner.events import Event
from aicr.runner.gpu_lease import LEASE_NAME
from aicr.runner.job import JobExecutor
from aicr.runner.local import LocalExecutor
from executor_fakes import wait_until

SECONDS = 3


def gpu_check() -> PlannedCheck:
    """A cheap check declared as taking whole GPUs, so it needs the Lease."""
    return planned("operator-health", exclusive_gpus=True)


def delayed(seconds: float) -> Any:
    params = f"{{params: {{aicrDelaySeconds: {seconds}}}}}"
    return parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {{operator-health: {params}}}}}}}\n"
    )


def foreign_lease(cluster: SimCluster, namespace: str, holder: str, seconds: int) -> None:
    """A Lease held by run `holder` that nobody renews (a crashed or slow run)."""
    client.CoordinationV1Api(cluster.api()).create_namespaced_lease(
        namespace,
        {
            "metadata": {"name": LEASE_NAME},
            "spec": {
                "holderIdentity": f"{holder}/check-nvidia-smi",
                "leaseDurationSeconds": seconds,
            },
        },
    )


def leases(cluster: SimCluster, namespace: str) -> list[str]:
    items = client.CoordinationV1Api(cluster.api()).list_namespaced_lease(namespace).items
    return [lease.metadata.name for lease in items]


def waiting(events: list[Event]) -> list[str]:
    return [e.message for e in events if e.message.startswith("waiting for exclusive GPUs")]


def run_stopped_if_waiting(
    ctx: RunContext, events: list[Event], timeout: float
) -> tuple[CheckResult, list[str]]:
    """Run the GPU check; should it wait for the Lease, stop the run (Ctrl-C) at that point."""
    out: list[tuple[CheckResult, list[str]]] = []
    thread = threading.Thread(target=lambda: out.append(run_one(JobExecutor(), ctx, gpu_check())))
    thread.start()
    wait_until(lambda: out or waiting(events), timeout=timeout)
    if not out:
        ctx.cancel.set()
    thread.join(timeout=60)
    ((result, left),) = out
    return result, left


def test_two_runs_never_overlap_on_gpus(cluster: SimCluster) -> None:
    namespace = cluster.fresh_namespace("gpu-lease")
    logs: list[list[Event]] = [[], []]
    contexts = [
        make_ctx(cluster, namespace=namespace, config=delayed(SECONDS), events=events)
        for events in logs
    ]
    out: dict[str, tuple[CheckResult, list[str]]] = {}

    def go(ctx: RunContext) -> None:
        out[ctx.run_id] = run_one(JobExecutor(), ctx, gpu_check())

    threads = [threading.Thread(target=go, args=(ctx,)) for ctx in contexts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    first, second = sorted((out[c.run_id][0] for c in contexts), key=lambda r: r.start_ms)
    for result in (first, second):
        assert result.status != Status.OTHER, result.message
        assert result.stop_ms - result.start_ms >= SECONDS * 1000  # the check's own run
    assert first.stop_ms <= second.start_ms  # one after the other, never together
    told = {ctx.run_id: waiting(events) for ctx, events in zip(contexts, logs, strict=True)}
    waited = [run for run, said in told.items() if said]
    assert len(waited) == 1, told  # the later run said why it waited, naming the holder
    holder = next(c.run_id for c in contexts if c.run_id not in waited)
    assert told[waited[0]] == [
        f"waiting for exclusive GPUs: run {holder} holds them (check operator-health)"
    ]
    for ctx in contexts:
        assert out[ctx.run_id][1] == [] and remaining(cluster, ctx.run_id) == []
    assert LEASE_NAME not in leases(cluster, namespace)
    cluster.delete_namespace(namespace, wait=False)


@pytest.mark.parametrize("executor", [JobExecutor, LocalExecutor])
def test_a_lease_its_holder_stopped_renewing_is_taken_over(
    cluster: SimCluster, executor: type[JobExecutor | LocalExecutor]
) -> None:
    namespace = cluster.fresh_namespace("gpu-lease")
    foreign_lease(cluster, namespace, "rdeadbeef", seconds=3)
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    result, left = run_one(executor(), ctx, gpu_check())
    assert result.status != Status.OTHER, result.message
    assert waiting(events) == [
        "waiting for exclusive GPUs: run rdeadbeef holds them (check check-nvidia-smi)"
    ]
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert LEASE_NAME not in leases(cluster, namespace)
    cluster.delete_namespace(namespace, wait=False)


def test_a_run_stopped_while_waiting_ends_interrupted_and_leaves_the_lease(
    cluster: SimCluster,
) -> None:
    namespace = cluster.fresh_namespace("gpu-lease")
    foreign_lease(cluster, namespace, "rlivelive", seconds=600)
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    result, left = run_stopped_if_waiting(ctx, events, timeout=30)
    assert waiting(events)
    assert (result.status, result.detail) == (Status.OTHER, Detail.INTERRUPTED)
    assert "stopped while waiting for exclusive GPUs" in result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert leases(cluster, namespace) == [LEASE_NAME]  # the other run's, untouched
    cluster.delete_namespace(namespace, wait=False)


def test_a_lease_left_by_an_earlier_check_of_the_same_run_does_not_block(
    cluster: SimCluster,
) -> None:
    """The run's own lock keeps its GPU checks apart; its stale Lease costs no wait."""
    namespace = cluster.fresh_namespace("gpu-lease")
    events: list[Event] = []
    ctx = make_ctx(cluster, namespace=namespace, events=events)
    foreign_lease(cluster, namespace, ctx.run_id, seconds=600)
    result, left = run_stopped_if_waiting(ctx, events, timeout=120)
    assert waiting(events) == []
    assert result.status != Status.OTHER, result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []
    assert LEASE_NAME not in leases(cluster, namespace)
    cluster.delete_namespace(namespace, wait=False)
