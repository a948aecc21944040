"""gpu-sharing on the simulated cluster: plain GPUs (Not Implemented), time-slicing, MIG and the
DRA driver's TimeSlicing delivered (Implemented), and faults of an advertised strategy not
delivered."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import yaml
from deployhelp import run_check
from gpu_sharing import NODE, shared
from harness import SimCluster
from kubernetes import client
from manifests import GPU_TOLERATION, pod
from simcluster.gpu import dra_sharing
from simcluster.gpu.smi import gpu_uuid

CHECK = "gpu-sharing"
RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: true}}\n"
)
MIG_SINGLE = "MIG 1g.10gb on gpu-h100-0"
OTHER_NODE = "gpu-h100-1"


def _left(cluster: SimCluster) -> list[str]:
    """Pods of the check left in any namespace (its workloads must all be gone)."""
    pods = client.CoreV1Api(cluster.api()).list_pod_for_all_namespaces(
        label_selector="aicr.dev/check=gpu-sharing"
    )
    return [p.metadata.name for p in pods.items]


def test_plain_gpus_advertise_no_sharing(cluster: SimCluster, tmp_path: Path) -> None:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == ("skipped", "no GPU sharing strategy advertised")
    assert test["requirements"]["gpu_sharing"] == "Not Implemented"


def test_time_slicing_is_delivered(cluster: SimCluster, tmp_path: Path) -> None:
    with shared(cluster, "gpu-sharing-time-slicing"):
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", f"1 GPU sharing strategy delivered: time-slicing on {NODE}")  # fmt: skip
    assert test["requirements"]["gpu_sharing"] == "Implemented"
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    proof = steps[f"time-slicing on {NODE}"]
    shared_by = r"9 pods ran at once on 8 GPUs; GPU-[0-9a-f-]+ is shared by share-time-slicing-\d, "
    assert re.fullmatch(shared_by + r"share-time-slicing-\d", proof["verdict"]), proof
    assert proof["answer"].count("(NVIDIA H100 80GB HBM3)") == 9  # each pod's view
    assert steps["workloads"]["status"] == "passed" and _left(cluster) == []


def test_mig_single_and_mixed_are_delivered(cluster: SimCluster, tmp_path: Path) -> None:
    with shared(cluster, "gpu-sharing-mig"):
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", f"1 GPU sharing strategy delivered: {MIG_SINGLE}")  # fmt: skip
    mixed = {"mig": {"strategy": "mixed"}, "migManager": {"config": {"default": "all-balanced"}}}
    with shared(cluster, "gpu-sharing-mig", mixed):
        (tmp_path / "mixed").mkdir()
        test = run_check(cluster, tmp_path / "mixed", CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", "3 GPU sharing strategies delivered: MIG 1g.10gb on gpu-h100-0, "
        "MIG 2g.20gb on gpu-h100-0, MIG 3g.40gb on gpu-h100-0")  # fmt: skip
    assert test["requirements"]["gpu_sharing"] == "Implemented"


def test_replicas_not_shared_fails_naming_the_strategy(cluster: SimCluster, tmp_path: Path) -> None:
    with shared(cluster, "gpu-sharing-time-slicing"):
        cluster.fault("replicas-not-shared", NODE)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert test["status"] == "failed"
    assert re.fullmatch(
        rf"1/1 GPU sharing strategies failed: time-slicing on {NODE}: "
        r"share-time-slicing-\d sees no GPU: nvidia-smi was not injected \(exit 127\)",
        test["message"]), test["message"]  # fmt: skip
    assert test["requirements"]["gpu_sharing"] == "Not Implemented"
    assert _left(cluster) == []


def test_mig_not_applied_fails_naming_the_strategy(cluster: SimCluster, tmp_path: Path) -> None:
    with shared(cluster, "gpu-sharing-mig"):
        cluster.fault("mig-not-applied", NODE)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    whole = f"{gpu_uuid(NODE, 0)} (NVIDIA H100 80GB HBM3)"
    assert (test["status"], test["message"]) == (
        "failed", f"1/1 GPU sharing strategies failed: {MIG_SINGLE}: the pod given 1 "
        f"nvidia.com/gpu sees no MIG device, only {whole}")  # fmt: skip


def _namespaces(core: client.CoreV1Api) -> set[str]:
    return {n.metadata.name for n in core.list_namespace().items}


@contextlib.contextmanager
def dra_gates(cluster: SimCluster, gates: dict[str, bool]) -> Iterator[None]:
    """GPUs through DRA, the DRA driver installed with these feature gates while inside."""
    core, ns = client.CoreV1Api(cluster.api()), dra_sharing.NAMESPACE
    made = ns not in _namespaces(core)
    if made:  # the driver's release namespace, as gpu-platform's scenario makes it
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cluster.set_mode("dra")
    cluster.apply(dra_sharing.kubelet_plugin({"featureGates": gates}))
    try:
        yield
    finally:
        client.AppsV1Api(cluster.api()).delete_namespaced_daemon_set(dra_sharing.PLUGIN, ns)
        if made:
            core.delete_namespace(ns)
            cluster.wait_for(lambda: ns not in _namespaces(core), 60, message=f"{ns} deleted")
        cluster.set_mode("device-plugin")


def _with_probe_seconds(cluster: SimCluster, tmp_path: Path, seconds: int) -> str:
    config = cluster.validate_config()
    checks = config["spec"]["validate"].setdefault("checks", {})
    checks.setdefault(CHECK, {})["params"] = {"probeSeconds": seconds}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_dra_time_slicing_is_delivered(cluster: SimCluster, tmp_path: Path) -> None:
    with dra_gates(cluster, {"TimeSlicingSettings": True}):
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == (
        "passed", f"1 GPU sharing strategy delivered: DRA TimeSlicing on {NODE}")  # fmt: skip
    assert test["requirements"]["gpu_sharing"] == "Implemented"
    steps = {s["title"]: s for s in test["extra"]["evidence"]}
    proof = steps[f"DRA TimeSlicing on {NODE}"]
    assert re.fullmatch(
        r"2 pods ran at once on one claimed GPU; GPU-[0-9a-f-]+ is shared by "
        r"share-dra-timeslicing-0, share-dra-timeslicing-1", proof["verdict"]), proof  # fmt: skip
    assert steps["workloads"]["status"] == "passed" and _left(cluster) == []


def test_dra_sharing_with_its_gates_off_is_not_advertised(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with dra_gates(cluster, {"TimeSlicingSettings": False}):
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
    assert (test["status"], test["message"]) == ("skipped", "no GPU sharing strategy advertised")


def test_dra_sharing_advertised_but_never_prepared_fails_naming_it(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with dra_gates(cluster, {"MPSSupport": True}):
        cluster.fault("dra-driver-down", NODE)
        config = _with_probe_seconds(cluster, tmp_path, 30)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance", config=config)
    assert test["status"] == "failed"
    prefix = f"1/1 GPU sharing strategies failed: DRA MPS on {NODE}: 2/2 pods did not run at once"
    assert test["message"].startswith(prefix), test["message"]
    assert "ContainerCreating" in test["message"], test["message"]
    said = ("; the kubelet of share-dra-mps-0, share-dra-mps-1: FailedPrepareDynamicResources: "
            "Failed to prepare dynamic resources: prepare dynamic resources: failed to get gRPC "
            "client for driver gpu.nvidia.com: plugin name gpu.nvidia.com not found in the list "
            "of registered DRA plugins")  # fmt: skip
    assert test["message"].endswith(said), test["message"]
    assert test["requirements"]["gpu_sharing"] == "Not Implemented"
    assert _left(cluster) == []


def _hold_every_gpu(cluster: SimCluster, namespace: str, node: str) -> None:
    """Another workload's claim for all 8 GPUs of ``node``, allocated for its running pod."""
    name = f"all-of-{node}"
    cluster.apply({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": name}, "spec": {"devices": {"requests": [{"name": "gpus",
                   "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
                               "count": 8}}]}}}, namespace)  # fmt: skip
    holder = pod(name, tolerations=[GPU_TOLERATION], nodeSelector={"kubernetes.io/hostname": node},
                 resourceClaims=[{"name": "gpus", "resourceClaimName": name}],
                 resources={"claims": [{"name": "gpus"}]})  # fmt: skip
    cluster.apply(holder, namespace)
    cluster.wait_for_phase(namespace, name, "Running")


def test_dra_sharing_is_proven_where_a_device_is_free_and_never_where_none_is(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with dra_gates(cluster, {"TimeSlicingSettings": True}):
        held = cluster.fresh_namespace("held")
        try:
            _hold_every_gpu(cluster, held, NODE)
            test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance")
            assert (test["status"], test["message"]) == (
                "passed", f"1 GPU sharing strategy delivered: DRA TimeSlicing on {OTHER_NODE}"
            ), test["message"]  # fmt: skip
            proof = {s["title"]: s for s in test["extra"]["evidence"]}[
                f"DRA TimeSlicing on {OTHER_NODE}"]  # fmt: skip
            free = f"; free gpu.nvidia.com: {OTHER_NODE} 8/8 free; {NODE} none free"
            assert proof["asked"].endswith(free), proof
            _hold_every_gpu(cluster, held, OTHER_NODE)
            (tmp_path / "full").mkdir()
            test = run_check(cluster, tmp_path / "full", CHECK, RECIPE, phase="conformance")
        finally:
            cluster.delete_namespace(held)
    assert (test["status"], test["message"]) == (
        "other", "1/1 GPU sharing strategies could not be judged: DRA TimeSlicing: no node has "
        "room to prove DRA TimeSlicing: no free gpu.nvidia.com device (every one is allocated "
        f"to a ResourceClaim): {NODE}, {OTHER_NODE}")  # fmt: skip
    assert test["requirements"]["gpu_sharing"] != "Implemented"
    assert _left(cluster) == []


def test_dra_mps_whose_control_daemon_never_gets_ready_fails_quoting_the_driver(
    cluster: SimCluster, tmp_path: Path
) -> None:
    with dra_gates(cluster, {"MPSSupport": True}):
        cluster.fault("mps-daemon-not-ready")
        config = _with_probe_seconds(cluster, tmp_path, 30)
        test = run_check(cluster, tmp_path, CHECK, RECIPE, phase="conformance", config=config)
    assert test["status"] == "failed"
    prefix = f"1/1 GPU sharing strategies failed: DRA MPS on {NODE}: 2/2 pods did not run at once"
    assert test["message"].startswith(prefix), test["message"]
    claim = "aicr-[0-9a-z]+-gpu-sharing-w/share-dra-mps"
    said = (
        r"; the kubelet of share-dra-mps-0, share-dra-mps-1: FailedPrepareDynamicResources: "
        r"Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
        rf"failed for claim {claim}: error preparing devices for claim {claim}:[0-9a-f-]+: "
        r"prepare devices failed: error applying config: MPS control daemon is not yet ready: "
        r"waiting for MPS control daemon to come online$"
    )
    assert re.search(said, test["message"]), test["message"]
    assert test["requirements"]["gpu_sharing"] == "Not Implemented"
    assert _left(cluster) == []
