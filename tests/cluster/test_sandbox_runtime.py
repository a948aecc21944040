"""The sandboxed runtime: pods whose RuntimeClass handler is runsc run under the real gVisor.

A sandboxed pod sees gVisor's kernel, an unsandboxed one its node's; a handler
containerd does not know, or runsc under `no-sandbox-handler`, fails the pod as
a kubelet reports it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from manifests import pod

RUN = {"aicr.dev/run-id": "r0123abcd"}
NODE = "cpu-system-0"
REPORT = ("echo kernel $(uname -r); cut -d' ' -f3 /proc/version; "
          "python3 -c 'import os; print(os.uname().release)'; dmesg | head -1; echo END")


CLASSES = (("gvisor", "runsc"), ("kata", "kata-qemu"))


@pytest.fixture
def sandboxes(cluster: SimCluster) -> Iterator[SimCluster]:
    for name, handler in CLASSES:
        cluster.apply({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                       "metadata": {"name": name}, "handler": handler})  # fmt: skip
    yield cluster
    cluster.heal()
    # cluster-scoped: a RuntimeClass left behind is one more the sandboxing check would prove
    node_api = client.NodeV1Api(cluster.api())
    for name, _ in CLASSES:
        node_api.delete_runtime_class(name)


def reporter(name: str, **spec: Any) -> dict[str, Any]:
    return pod(name, image="ubuntu:22.04", command=["sh", "-c", REPORT], labels=dict(RUN),
               nodeName=NODE, **spec)  # fmt: skip


def log_of(cluster: SimCluster, ns: str, name: str) -> list[str]:
    log = cluster.wait_for(
        lambda: (t := cluster.core().read_namespaced_pod_log(name, ns)) and "END" in t and t,
        timeout=60, message=f"report of {name}")  # fmt: skip
    return str(log).splitlines()


def test_a_runsc_pods_missing_mount_point_is_made_for_it_alone_never_on_the_host(
    sandboxes: SimCluster, namespace: str
) -> None:
    target = f"/aicr-sandbox-{uuid.uuid4().hex[:8]}/data"
    probe = reporter("boxed", runtimeClassName="gvisor",
                     volumeMounts=[{"name": "scratch", "mountPath": target}],
                     volumes=[{"name": "scratch", "emptyDir": {}}])  # fmt: skip
    probe["spec"]["containers"][0]["command"] = [
        "sh", "-c", f"test -d {target} && echo mounted; echo END"]  # fmt: skip
    sandboxes.apply([probe], namespace)
    assert log_of(sandboxes, namespace, "boxed")[0] == "mounted"
    # runsc's gofer makes the mount point in the bundle's root: a private overlay, not the host's /
    assert not Path(target).parent.exists()


def test_a_runsc_pod_sees_gvisors_kernel_and_a_runc_pod_the_nodes(
    sandboxes: SimCluster, namespace: str
) -> None:
    sandboxes.apply([reporter("boxed", runtimeClassName="gvisor"), reporter("plain")], namespace)
    kernel = sandboxes.core().read_node(NODE).status.node_info.kernel_version
    boxed, plain = log_of(sandboxes, namespace, "boxed"), log_of(sandboxes, namespace, "plain")
    assert boxed[:3] == ["kernel 4.4.0", "4.4.0", "4.4.0"] and "Starting gVisor" in boxed[3]
    # the uname(2) shim: a program's own system call sees the node's kernel too
    assert plain[:3] == [f"kernel {kernel}", kernel, kernel] and "gVisor" not in "".join(plain)
    done = sandboxes.wait_for_pod(namespace, "boxed", lambda p: p["status"]["phase"] == "Succeeded")
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def events_of(cluster: SimCluster, ns: str, name: str) -> list[tuple[str, str]]:
    items = cluster.core().list_namespaced_event(ns, field_selector=f"involvedObject.name={name}")
    return [(e.reason, e.message) for e in items.items]


@pytest.mark.parametrize(
    ("runtime_class", "handler", "fault"),
    [("gvisor", "runsc", "no-sandbox-handler"), ("kata", "kata-qemu", None)],
    ids=["no-sandbox-handler", "unknown-handler"],
)
def test_a_handler_containerd_lacks_fails_the_pod_sandbox(
    sandboxes: SimCluster, namespace: str, runtime_class: str, handler: str, fault: str | None
) -> None:
    if fault:
        sandboxes.fault(fault, NODE)
    sandboxes.apply(reporter("stuck", runtimeClassName=runtime_class), namespace)
    want = ("FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown "
            "desc = failed to get sandbox runtime: no runtime for "
            f'"{handler}" is configured')  # fmt: skip
    assert sandboxes.wait_for(lambda: events_of(sandboxes, namespace, "stuck"),
                              message="the sandbox event") == [want]  # fmt: skip
    stuck = sandboxes.pod(namespace, "stuck")
    assert stuck["status"]["phase"] == "Pending"
    waiting = stuck["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ContainerCreating"
