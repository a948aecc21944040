"""Injected faults show on the pod as they would on a real cluster."""

from __future__ import annotations

import time
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from manifests import job, pod, validator_pod

FAULT = "sim.aicr.dev/fault"


def _status(p: dict[str, Any]) -> dict[str, Any]:
    return dict(p["status"]["containerStatuses"][0])


def _waiting_reason(p: dict[str, Any]) -> str | None:
    statuses = p.get("status", {}).get("containerStatuses") or []
    return statuses[0]["state"].get("waiting", {}).get("reason") if statuses else None


def test_image_pull_failure(cluster: SimCluster, namespace: str) -> None:
    cluster.apply(pod("pull", annotations={FAULT: "image-pull"}), namespace)
    p = cluster.wait_for_pod(namespace, "pull", lambda p: _waiting_reason(p) == "ErrImagePull")
    assert p["status"]["phase"] == "Pending"
    assert "failed to pull" in _status(p)["state"]["waiting"]["message"]
    p = cluster.wait_for_pod(namespace, "pull", lambda p: _waiting_reason(p) == "ImagePullBackOff")
    assert p["status"]["phase"] == "Pending"


@pytest.mark.parametrize(
    ("fault", "code", "reason"), [("crash", 1, "Error"), ("oom", 137, "OOMKilled")]
)
def test_crash_and_oom_with_restart_never(
    cluster: SimCluster, namespace: str, fault: str, code: int, reason: str
) -> None:
    cluster.apply(pod("dies", annotations={FAULT: fault}), namespace)
    p = cluster.wait_for_phase(namespace, "dies", "Failed")
    term = _status(p)["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (code, reason)


@pytest.mark.parametrize("fault", ["crash", "oom"])
def test_crash_loop_with_restart_always(cluster: SimCluster, namespace: str, fault: str) -> None:
    cluster.apply(pod("loops", annotations={FAULT: fault}, restart_policy="Always"), namespace)
    p = cluster.wait_for_pod(namespace, "loops", lambda p: _waiting_reason(p) == "CrashLoopBackOff")
    cs = _status(p)
    assert p["status"]["phase"] == "Running"
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["reason"] == ("OOMKilled" if fault == "oom" else "Error")


def test_never_ready(cluster: SimCluster, namespace: str) -> None:
    cluster.apply(pod("stuck", annotations={FAULT: "never-ready"}), namespace)
    p = cluster.wait_for_phase(namespace, "stuck", "Running")
    time.sleep(2)
    p = cluster.pod(namespace, "stuck")
    ready = next(c for c in p["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["reason"] == "ContainersNotReady"
    assert _status(p)["ready"] is False and "running" in _status(p)["state"]


def test_eviction(cluster: SimCluster, namespace: str) -> None:
    cluster.apply(pod("evicted", annotations={FAULT: "evict"}), namespace)
    p = cluster.wait_for_phase(namespace, "evicted", "Failed")
    assert p["status"]["reason"] == "Evicted"
    assert "low on resource" in p["status"]["message"]
    target = next(c for c in p["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert target["reason"] == "TerminationByKubelet"


def test_fault_rule_hits_a_product_job_pod(cluster: SimCluster, namespace: str) -> None:
    # The product creates its Jobs itself; tests inject by job name instead of annotation.
    cluster.inject_fault("oom", namespace=namespace, job_name="check-gpu")
    spec = validator_pod("x", ["sh", "-c", "echo would pass"])["spec"]
    cluster.apply(job("check-gpu", spec), namespace)
    batch = client.BatchV1Api(cluster.api())

    def failed() -> bool:
        conds = batch.read_namespaced_job("check-gpu", namespace).status.conditions or []
        return any(c.type == "Failed" and c.status == "True" for c in conds)

    cluster.wait_for(failed, timeout=60, message="Job Failed")
    pods = cluster.core().list_namespaced_pod(namespace, label_selector="job-name=check-gpu")
    term = pods.items[0].status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason) == (137, "OOMKilled")


def test_fault_rule_by_pod_name_prefix_on_validator_pod(
    cluster: SimCluster, namespace: str
) -> None:
    cluster.inject_fault("image-pull", namespace=namespace, pod_name_prefix="aicr-")
    cluster.apply(validator_pod("aicr-health", ["sh", "-c", "exit 0"]), namespace)
    cluster.wait_for_pod(namespace, "aicr-health", lambda p: _waiting_reason(p) == "ErrImagePull")
    cluster.apply(validator_pod("other", ["sh", "-c", "exit 0"]), namespace)
    cluster.wait_for_phase(namespace, "other", "Succeeded")


# client-go's longest reflector backoff after an outage (60 s) plus 30 s to schedule and start.
RECONNECT_BOUND = 90


def test_apiserver_stop_and_restart(cluster: SimCluster, namespace: str) -> None:
    cluster.stop_apiserver()
    with pytest.raises(Exception) as down:
        cluster.core().list_namespaced_pod(namespace, _request_timeout=3)
    assert "refused" in str(down.value).lower() or "max retries" in str(down.value).lower()
    cluster.start_apiserver()
    # Everything reconnects: the scheduler, KWOK and the runtime play new pods again.
    # Not at once: client-go's reflectors back off from 0.8 s, doubling with a jitter of
    # up to 2x, to a cap of 30 s, so a wait that began just before the API server came
    # back lasts up to 60 s (client-go tools/cache/reflector.go: "backoff will stop at
    # [30,60) sec interval"). The bound is that wait plus time to schedule and start.
    cluster.apply(pod("after"), namespace)
    cluster.wait_for_phase(namespace, "after", "Running", timeout=RECONNECT_BOUND)
    cluster.apply(validator_pod("after-v", ["sh", "-c", "echo back"]), namespace)
    cluster.wait_for_phase(namespace, "after-v", "Succeeded", timeout=RECONNECT_BOUND)
    assert cluster.core().read_namespaced_pod_log("after-v", namespace) == "back\n"
