"""The Job executor on the simulated cluster: each way a check can end, and nothing left over.

Every test asserts the CTRF status, the detail and what the message says, and that no
object carrying the run's label remains after ``finish``.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from runhelp import make_ctx, planned, remaining, run_one

from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube import names
from aicr.kube.placement import Placement
from aicr.result import CheckResult, Detail
from aicr.runner.context import RunContext
from aicr.runner.events import Event, EventKind
from aicr.runner.job import JobExecutor


def delayed(check: str, seconds: float) -> Any:
    settings = f"{{{check}: {{params: {{aicrDelaySeconds: {seconds}}}}}}}"
    return parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"spec: {{validate: {{checks: {settings}}}}}\n"
    )


class Background:
    """Run start/run/finish of one check in a thread, so a test can act meanwhile."""

    def __init__(self, executor: JobExecutor, ctx: RunContext, check: Any) -> None:
        self.result: CheckResult | None = None
        self.left: list[str] | None = None
        self.ended_at = 0.0
        self.thread = threading.Thread(target=self._run, args=(executor, ctx, check), daemon=True)
        self.thread.start()

    def _run(self, executor: JobExecutor, ctx: RunContext, check: Any) -> None:
        self.result, self.left = run_one(executor, ctx, check)

    def join(self, timeout: float = 120) -> CheckResult:
        self.thread.join(timeout)
        assert self.result is not None, "run did not return"
        return self.result


def wait_running(events: list[Event], timeout: float = 30) -> None:
    SimCluster.wait_for(
        lambda: any(e.message.startswith("running on") for e in events),
        timeout,
        message="check pod running",
    )


def test_a_failed_check_is_reported_through_the_whole_path(cluster: SimCluster) -> None:
    """cluster-autoscaling fails at once on a cluster with no autoscaler (no Karpenter here)."""
    events: list[Event] = []
    ctx = make_ctx(cluster, events=events)
    result, left = run_one(JobExecutor(), ctx, planned("cluster-autoscaling"))
    assert result.status == Status.FAILED, result.message
    assert result.message.startswith(
        "1/1 steps failed: autoscaler: no recognised cluster autoscaler"
    ), result.message
    assert result.evidence[0].title == "autoscaler"  # read from the result object
    assert result.node in cluster.nodes
    updates = [e for e in events if e.kind == EventKind.CHECK_UPDATE]
    assert updates[0].message == f"scheduled on {result.node}" and updates[0].node == result.node
    assert left == [] and remaining(cluster, ctx.run_id) == []


@pytest.mark.parametrize(
    ("fault", "detail", "says"),
    [
        ("image-pull", Detail.IMAGE_PULL, "cannot pull the validator image"),
        ("crash", Detail.NO_RESULT, "the check exited 1 without writing a result"),
        ("oom", Detail.OOM_KILLED, "the check was OOMKilled (memory limit 256Mi)"),
        ("evict", Detail.EVICTED, "the check pod was evicted: The node was low on resource"),
    ],
    ids=["image-pull", "crash", "oom", "evict"],
)
def test_pod_faults_map_to_other(
    cluster: SimCluster, fault: str, detail: Detail, says: str
) -> None:
    ctx = make_ctx(cluster)
    cluster.inject_fault(fault, job_name=names.check_name(ctx.run_id, "platform-health"))
    start = time.monotonic()
    result, left = run_one(JobExecutor(), ctx, planned("platform-health"))
    assert (result.status, result.detail) == (Status.OTHER, detail), result.message
    assert says in result.message
    assert time.monotonic() - start < 30
    assert left == [] and remaining(cluster, ctx.run_id) == []


def test_unschedulable_is_reported_quickly_with_the_schedulers_reason(
    cluster: SimCluster,
) -> None:
    ctx = make_ctx(cluster, orchestrator=Placement(node_selector={"aicr.dev/node-group": "none"}))
    start = time.monotonic()
    result, left = run_one(JobExecutor(), ctx, planned("platform-health"))
    took = time.monotonic() - start
    assert (result.status, result.detail) == (Status.OTHER, Detail.UNSCHEDULABLE)
    assert "the check pod cannot be scheduled: 0/4 nodes are available" in result.message
    assert "node affinity/selector" in result.message
    assert took < 30, f"reported after {took:.1f}s"
    assert left == [] and remaining(cluster, ctx.run_id) == []


def test_deadline_exceeded_is_a_timeout(cluster: SimCluster) -> None:
    ctx = make_ctx(cluster, config=delayed("platform-health", 60))
    result, left = run_one(
        JobExecutor(), ctx, planned("platform-health", timeout=timedelta(seconds=4))
    )
    assert (result.status, result.detail) == (Status.OTHER, Detail.TIMEOUT), result.message
    assert "did not finish within its timeout of 4s" in result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []


@pytest.mark.parametrize("what", ["job", "namespace"])
def test_deleted_from_outside(cluster: SimCluster, what: str) -> None:
    events: list[Event] = []
    ctx = make_ctx(cluster, events=events, config=delayed("platform-health", 60))
    run = Background(JobExecutor(), ctx, planned("platform-health"))
    wait_running(events)
    if what == "job":
        client.BatchV1Api(cluster.api()).delete_namespaced_job(
            names.check_name(ctx.run_id, "platform-health"),
            ctx.namespace,
            propagation_policy="Background",
        )
        says = "was deleted from outside the run"
    else:
        cluster.core().delete_namespace(ctx.namespace)
        says = f"the run namespace {ctx.namespace} was deleted from outside the run"
    result = run.join()
    assert (result.status, result.detail) == (Status.OTHER, Detail.DELETED), result.message
    assert says in result.message
    assert run.left == [] and remaining(cluster, ctx.run_id) == []


def test_api_server_unreachable_gives_up_with_a_clear_message(cluster: SimCluster) -> None:
    events: list[Event] = []
    ctx = make_ctx(cluster, events=events, config=delayed("platform-health", 60))
    executor = JobExecutor(api_unreachable_seconds=4)
    result_box: dict[str, CheckResult] = {}
    executor.start(ctx)
    try:
        thread = threading.Thread(
            target=lambda: result_box.update(r=executor.run(planned("platform-health"), ctx)),
            daemon=True,
        )
        thread.start()
        wait_running(events)
        cluster.stop_apiserver()
        thread.join(60)
    finally:
        cluster.start_apiserver()
        left = executor.finish(ctx)
    result = result_box["r"]
    assert (result.status, result.detail) == (Status.OTHER, Detail.API_UNREACHABLE)
    assert "lost contact with the API server for 4s" in result.message
    assert "retried with backoff" in result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []


def test_interrupt_returns_promptly_and_cleans_up(cluster: SimCluster) -> None:
    events: list[Event] = []
    ctx = make_ctx(cluster, events=events, config=delayed("platform-health", 60))
    executor = JobExecutor()
    run = Background(executor, ctx, planned("platform-health"))
    wait_running(events)
    stopped = time.monotonic()
    ctx.cancel.set()
    executor.stop()
    result = run.join()
    assert (result.status, result.detail) == (Status.OTHER, Detail.INTERRUPTED)
    assert run.left == [] and remaining(cluster, ctx.run_id) == []
    # run() returned on the signal, long before the check's own 60 s would end it (a
    # generous bound: this asserts behaviour, not speed, and must hold on a loaded CI box)
    assert result.stop_ms / 1000 - (time.time() - (time.monotonic() - stopped)) < 15


def test_check_is_denied_access_it_did_not_declare(cluster: SimCluster) -> None:
    """platform-health without `namespaces` in its declared access: the API refuses it."""
    ctx = make_ctx(cluster)
    spec = planned("platform-health").spec
    narrowed = [r.model_dump(by_alias=True) for r in spec.access]
    narrowed[0]["resources"] = [r for r in narrowed[0]["resources"] if r != "namespaces"]
    check = planned("platform-health", access=narrowed)
    result, left = run_one(JobExecutor(), ctx, check)
    assert (result.status, result.detail) == (Status.OTHER, Detail.CRASHED), result.message
    assert "403" in result.message or "Forbidden" in result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []
