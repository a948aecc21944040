"""The checks whose behaviour depends on the provider, on `sim up --platform gke`.

The profile gets a simulated cluster of its own (its own run folder, network
namespace and processes, through the `hack/sim/sim` CLI as a user runs it), next
to the session's `kubeadm` one; one `aicr validate` runs inside it with `sim exec`.

- GKE Sandbox as GKE sets it up (RuntimeClass `gvisor`, handler `gvisor`, only
  on the sandbox pool's node, behind its `sandbox.gke.io/runtime` taint):
  workload-sandboxing finds it by its handler and proves it on that node.
- GKE installs the driver, so the recipe's GPU Operator values switch the driver
  off; the operator's operand DaemonSets select the deploy labels the operator
  sets (all `true`, on every GPU node, whatever the driver mode), tolerating
  GKE's `nvidia.com/gpu=present` taint: gpu-operator-health passes with the
  driver recorded as switched off.

One cluster for both keeps CI's added time to one start and one run. The other
profiles' nodes (eks, aks, nvke) are unit-tested (tests/unit/sim/test_platforms.py);
their deploy labels are the same as gke's.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from gpu_operator import CRD
from harness import SIM_CLI, VALIDATOR_IMAGE
from manifests import GPU_TOLERATION

from aicr.checks.gpu_operator import OPERANDS

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = str(ROOT / "tests/data/snapshots/ok.yaml")
GPU_NODES = "gpu-h100-0, gpu-h100-1"


@contextmanager
def platform_cluster(platform: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A cluster of `platform` started and stopped through the CLI; its environment."""
    env = {**os.environ, "AICR_SIM_DIR": str(tmp_path / f"sim-{platform}")}
    up = subprocess.run([str(SIM_CLI), "up", "--platform", platform], env=env,
                        capture_output=True, text=True, timeout=240)  # fmt: skip
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        yield env
    finally:
        subprocess.run([str(SIM_CLI), "down"], env=env, capture_output=True, timeout=120)


def sim(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SIM_CLI), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def validate(
    env: dict[str, str], tmp_path: Path, components: str, checks: list[str]
) -> dict[str, tuple[str, str]]:
    """`aicr validate` of the conformance phase with only `checks`, inside the cluster."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "kind: RecipeResult\napiVersion: aicr.nvidia.com/v1alpha1\ncomponentRefs:\n"
        f"{components}validation:\n  conformance:\n    checks: [{', '.join(checks)}]\n"
    )
    report = tmp_path / "report.json"
    run = sim(env, "exec", "--", "aicr", "validate", "-r", str(recipe), "-s", SNAPSHOT,
              "--phase", "conformance", "--image", VALIDATOR_IMAGE, "-o", str(report))  # fmt: skip
    assert report.is_file(), run.stderr[-3000:]
    tests = json.loads(report.read_text())["results"]["tests"]
    return {t["name"]: (t["status"], t["message"]) for t in tests}


def operator_manifests() -> list[dict[str, Any]]:
    """The GPU Operator as a pre-installed-driver recipe gets it: no driver DaemonSet.

    Each operand's DaemonSet selects `nvidia.com/gpu.deploy.<operand>: "true"`
    (gpu-operator v25.10.1 `assets/state-*/0500_daemonset.yaml`); its pods run
    busybox under the process runtime.
    """
    docs: list[dict[str, Any]] = [
        CRD,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "gpu-operator", "namespace": "gpu-operator"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "gpu-operator"}},
                  "template": {"metadata": {"labels": {"app": "gpu-operator"}},
                               "spec": {"containers": [{"name": "gpu-operator",
                                        "image": "nvcr.io/nvidia/gpu-operator:v25.10.1"}]}}}},
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
         "metadata": {"name": "cluster-policy"},
         "spec": {"driver": {"enabled": False}}, "status": {"state": "ready"}},
    ]  # fmt: skip
    for o in OPERANDS:
        if o.spec_key == "driver":
            continue
        meta = {"labels": {"app": o.app}}
        spec = {
            "nodeSelector": {f"nvidia.com/gpu.deploy.{o.deploy}": "true"},
            "tolerations": [GPU_TOLERATION],
            "containers": [{"name": o.app, "image": "busybox:1.36", "command": ["sleep", "3600"]}],
        }
        docs.append({"apiVersion": "apps/v1", "kind": "DaemonSet",
                     "metadata": {"name": o.app, "namespace": "gpu-operator"},
                     "spec": {"selector": {"matchLabels": {"app": o.app}},
                              "template": {"metadata": meta, "spec": spec}}})  # fmt: skip
    return docs


def test_gke_sandbox_and_gkes_driver(tmp_path: Path) -> None:
    manifest = tmp_path / "gpu-operator.yaml"
    manifest.write_text(yaml.safe_dump_all(operator_manifests()))
    with platform_cluster("gke", tmp_path) as env:
        applied = sim(env, "apply", str(manifest))
        assert applied.returncode == 0, applied.stderr[-3000:]
        got = validate(env, tmp_path, "- name: gpu-operator\n  namespace: gpu-operator\n",
                       ["workload-sandboxing", "gpu-operator-health"])  # fmt: skip
    healthy = "GPU Operator healthy: ClusterPolicy ready; 5 operands ready on 2 GPU nodes"
    assert got == {
        "workload-sandboxing": (
            "passed",
            "gvisor (gvisor) sandboxed on cpu-customer-0: gVisor's kernel 4.4.0, the node and "
            "the control pod 6.1.119-129.201.amzn2023.x86_64",
        ),
        "gpu-operator-health": ("passed", f"{healthy} ({GPU_NODES})"),
    }
