"""workload-sandboxing on the simulated cluster: gVisor proven, and two ways a sandbox is missing.

The sim's nodes run pods whose RuntimeClass handler is runsc under the real
gVisor (tests/cluster/test_sandbox_runtime.py), so the check sees a kernel of
the sandbox's own against the node's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from deployhelp import run_check
from harness import SimCluster
from kubernetes import client

from aicr.checks.conformance.workload_sandboxing import build

CHECK = "workload-sandboxing"
NO_COMPONENTS = "  []\n"


def runtime_class(name: str, handler: str) -> dict[str, object]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": handler}  # fmt: skip


@pytest.fixture
def gvisor(cluster: SimCluster) -> Iterator[SimCluster]:
    cluster.apply(runtime_class("gvisor", "runsc"))
    yield cluster
    cluster.heal()


def config(tmp_path: Path, params: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text("{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: "
                    f"{{validate: {{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}\n")  # fmt: skip
    return str(path)


def leftovers(cluster: SimCluster) -> list[str]:
    return [n.metadata.name for n in cluster.core().list_namespace().items
            if CHECK in n.metadata.name]  # fmt: skip


def gpu_nodes(cluster: SimCluster) -> list[str]:
    listed = cluster.core().list_node(label_selector="nvidia.com/gpu.present=true").items
    return sorted(n.metadata.name for n in listed)


def node_groups(cluster: SimCluster) -> dict[str, str]:
    """Each node's group as the check tells it (its group label, else its instance type)."""
    nodes = cluster.api().sanitize_for_serialization(cluster.core().list_node().items)
    return {n["metadata"]["name"]: build.node_group(n) for n in nodes}


def steps(test: dict[str, object]) -> list[tuple[str, str]]:
    evidence = test["extra"]["evidence"]  # type: ignore[index]
    return [(s["title"], s["status"]) for s in evidence]


def test_gvisor_runs_on_its_own_kernel_and_the_control_on_the_nodes(
    gvisor: SimCluster, tmp_path: Path
) -> None:
    test = run_check(gvisor, tmp_path, CHECK, NO_COMPONENTS, phase="conformance")
    assert test["status"] == "passed", test["message"]
    probed = []
    for proof in test["message"].split("; "):
        node = re.fullmatch(r"gvisor \(runsc\) sandboxed on (\S+): gVisor's kernel 4\.4\.0, the "
                            r"node and the control pod (\S+)", proof)  # fmt: skip
        assert node, test["message"]
        assert node[2] == gvisor.core().read_node(node[1]).status.node_info.kernel_version
        probed.append(node[1])
    # one node per node group the class reaches (it reaches every node here), the GPU group's too
    groups = node_groups(gvisor)
    assert sorted(groups[n] for n in probed) == sorted(set(groups.values())), probed
    assert any(n in gpu_nodes(gvisor) for n in probed), probed
    assert steps(test) == [("RuntimeClasses", "informational"),
                           *[(f"RuntimeClass gvisor on {n}", "passed") for n in probed],
                           ("workloads", "passed")]  # fmt: skip
    assert leftovers(gvisor) == []


def test_no_sandbox_handler_fails_with_the_kubelets_event(
    gvisor: SimCluster, tmp_path: Path
) -> None:
    gpu = gpu_nodes(gvisor)[0]  # the GPU group's first node: the one its probe lands on
    gvisor.fault("no-sandbox-handler", gpu)
    test = run_check(gvisor, tmp_path, CHECK, NO_COMPONENTS, phase="conformance",
                     config=config(tmp_path, "{startSeconds: 8}"))  # fmt: skip
    probes = len(set(node_groups(gvisor).values()))  # one per node group
    assert (test["status"], test["message"]) == (
        "failed", f"1/{probes} sandboxed RuntimeClasses failed: RuntimeClass gvisor on {gpu}: pod "
        f"sandboxed-gvisor-{gpu} did not finish within 8s: FailedCreatePodSandBox: Failed to "
        "create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no "
        "runtime for \"runsc\" is configured")  # fmt: skip
    assert steps(test)[-1] == ("workloads", "passed")
    assert leftovers(gvisor) == []


def test_a_runtime_class_whose_handler_is_runc_is_not_sandboxed(
    gvisor: SimCluster, tmp_path: Path
) -> None:
    gvisor.apply(runtime_class("fake-sandbox", "runc"))
    test = run_check(gvisor, tmp_path, CHECK, NO_COMPONENTS, phase="conformance",
                     config=config(tmp_path, "{runtimeClasses: [fake-sandbox]}"))  # fmt: skip
    assert test["status"] == "failed"
    client.NodeV1Api(gvisor.api()).delete_runtime_class("fake-sandbox")
    probes = len(set(node_groups(gvisor).values()))  # one per node group, every one failed
    assert re.match(
        rf"{probes}/{probes} sandboxed RuntimeClasses failed: RuntimeClass fake-sandbox on \S+: "
        r"the pod under "
        r"RuntimeClass fake-sandbox \(handler runc\) reports the node's own kernel \S+ on \S+: it "
        r"is not sandboxed", test["message"]), test["message"]  # fmt: skip
    assert leftovers(gvisor) == []
