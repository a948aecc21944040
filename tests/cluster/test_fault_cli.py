"""`hack/sim/sim fault|heal` on the running cluster: each fault shows as the failure it models."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from harness import SimCluster
from manifests import GPU_TOLERATION, pod, validator_pod

SIM = Path(__file__).resolve().parents[2] / "hack" / "sim" / "sim"
NODE = "gpu-h100-1"


def sim_cli(cluster: SimCluster, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AICR_SIM_DIR": str(cluster.sim.dir)}
    return subprocess.run([str(SIM), *args], capture_output=True, text=True, env=env, timeout=60)


def smi_pod(name: str, *args: str) -> dict[str, Any]:
    return pod(name, image="nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
               command=["nvidia-smi", *args], nodeName=NODE, tolerations=[GPU_TOLERATION],
               resources={"limits": {"nvidia.com/gpu": "8"}})  # fmt: skip


def run_smi(cluster: SimCluster, ns: str, name: str, *args: str) -> tuple[int, str]:
    cluster.apply(smi_pod(name, *args), ns)
    p = cluster.wait_for_phase(ns, name, "Succeeded", "Failed", timeout=60)
    code = p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]
    return code, cluster.core().read_namespaced_pod_log(name, ns)


def test_driver_not_loaded_through_the_cli_until_healed(
    cluster: SimCluster, namespace: str
) -> None:
    applied = sim_cli(cluster, "fault", "driver-not-loaded", NODE)
    assert (applied.returncode, applied.stdout) == (0, f"driver-not-loaded: applied on {NODE}\n")
    cluster._dirty = True  # healed by reset() even if an assertion below fails
    assert sim_cli(cluster, "status").stdout.splitlines() == [
        "up", f"fault driver-not-loaded on {NODE}"]
    code, log = run_smi(cluster, namespace, "broken")
    assert code == 9 and log.startswith("NVIDIA-SMI has failed")
    healed = sim_cli(cluster, "heal")
    assert (healed.returncode, healed.stdout) == (0, f"driver-not-loaded: healed on {NODE}\n")
    code, log = run_smi(cluster, namespace, "healthy", "-L")
    assert code == 0 and len(log.splitlines()) == 8


def test_gpu_lost_and_driver_mismatch_together(cluster: SimCluster, namespace: str) -> None:
    assert cluster.fault("gpu-lost") == list(cluster.gpu_nodes)
    cluster.fault("driver-mismatch", NODE)
    code, log = run_smi(cluster, namespace, "lost", "-L")
    assert code == 0 and len(log.splitlines()) == 7
    code, log = run_smi(cluster, namespace, "xml", "-q", "-x")
    assert "<driver_version>570.124.06</driver_version>" in log
    assert "<attached_gpus>7</attached_gpus>" in log
    cluster.heal()
    node = cluster.core().read_node(NODE)
    assert not {"sim.aicr.dev/gpu-fault", "sim.aicr.dev/gpu-driver"} & set(
        node.metadata.annotations or {})


def test_a_pod_fault_on_one_node(cluster: SimCluster, namespace: str) -> None:
    cluster.fault("crash", "cpu-system-0")
    cluster.apply(validator_pod("hit", ["sh", "-c", "exit 0"], nodeName="cpu-system-0"), namespace)
    cluster.apply(validator_pod("spared", ["sh", "-c", "exit 0"], nodeName="cpu-customer-0"),
                  namespace)  # fmt: skip
    term = cluster.wait_for_phase(namespace, "hit", "Failed")["status"]["containerStatuses"][0]
    assert term["state"]["terminated"]["exitCode"] == 1
    cluster.wait_for_phase(namespace, "spared", "Succeeded")


def test_unknown_fault_and_node_exit_2(cluster: SimCluster) -> None:
    bad = sim_cli(cluster, "fault", "gpu-lots")
    assert bad.returncode == 2 and "did you mean gpu-lost?" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1
    bad = sim_cli(cluster, "fault", "gpu-lost", "cpu-system-0")
    assert bad.returncode == 2 and "has no GPUs" in bad.stderr
    assert sim_cli(cluster, "status").stdout == "up\n"
