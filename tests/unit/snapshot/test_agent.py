"""Node agents: the pod they run, the files they read, and how readings join the snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aicr import gate
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.kube.placement import TOLERATE_ALL, Placement
from aicr.kube.target import KubeTarget
from aicr.recipe.load import parse_recipe
from aicr.recipe.model import Recipe
from aicr.result import CheckResult
from aicr.runner import manifests
from aicr.runner.context import RunContext
from aicr.snapshot import agent, host_files
from aicr.snapshot.capture import build
from aicr.snapshot.groups import NodeGroup

OS_RELEASE = ('PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nVERSION_ID="24.04"\n'
              '# a comment\nBAD="x\n')
TOOLKIT = '[nvidia-container-runtime]\nmode = "cdi"\nruntimes = ["runc", "crun"]\n' \
          "[nvidia-container-cli]\nload-kmods = true\n"  # fmt: skip


def root(tmp: Path, os_release: str | None = OS_RELEASE, toolkit: str | None = TOOLKIT) -> Path:
    if os_release is not None:
        (tmp / "etc").mkdir(parents=True, exist_ok=True)
        (tmp / "etc/os-release").write_text(os_release)
    if toolkit is not None:
        (tmp / "etc/nvidia-container-runtime").mkdir(parents=True)
        (tmp / "etc/nvidia-container-runtime/config.toml").write_text(toolkit)
    numa = tmp / "sys/devices/system/node"
    for i, cpus in enumerate(("0-3", "4-7")):
        (numa / f"node{i}").mkdir(parents=True)
        (numa / f"node{i}/cpulist").write_text(cpus + "\n")
    (numa / "online").write_text("0-1\n")
    return tmp


def test_the_agent_reads_and_the_invoking_side_parses_every_file(tmp_path: Path) -> None:
    result = host_files.read_on_node("node-agent-gpu-1", str(root(tmp_path)))
    assert result.status == Status.PASSED
    found = host_files.readings(result)
    assert found[("OS", "release")] == {
        "PRETTY_NAME": "Ubuntu 24.04.1 LTS", "ID": "ubuntu", "VERSION_ID": "24.04"}  # fmt: skip
    assert found[("OS", "container-toolkit")] == {
        "nvidia-container-runtime.mode": "cdi", "nvidia-container-runtime.runtimes": "runc,crun",
        "nvidia-container-cli.load-kmods": True}  # fmt: skip
    assert found[("NodeTopology", "numa")] == {
        "nodes": 2, "online": "0-1", "node0.cpulist": "0-3", "node1.cpulist": "4-7"}  # fmt: skip


def test_a_node_without_the_toolkit_still_passes_without_that_reading(tmp_path: Path) -> None:
    result = host_files.read_on_node("node-agent-cpu-1", str(root(tmp_path, toolkit=None)))
    assert result.status == Status.PASSED
    assert ("OS", "container-toolkit") not in host_files.readings(result)


def test_a_node_without_os_release_fails(tmp_path: Path) -> None:
    result = host_files.read_on_node("node-agent-cpu-1", str(root(tmp_path, os_release=None)))
    assert result.status == Status.FAILED
    assert result.message == "could not read /etc/os-release"


def test_a_malformed_toolkit_config_gives_no_reading(tmp_path: Path) -> None:
    result = host_files.read_on_node("node-agent-gpu-1", str(root(tmp_path, toolkit="[x\n")))
    assert ("OS", "container-toolkit") not in host_files.readings(result)


def ctx() -> RunContext:
    return RunContext(run_id="r1a2b3c4d", namespace="aicr-r1a2b3c4d-node-agent-w",
                      recipe=Recipe(), recipe_source="aicr snapshot", snapshot=None,
                      config=EMPTY_CONFIG, kube=KubeTarget(), image="registry.example/aicr:v1",
                      orchestrator=Placement(tolerations=TOLERATE_ALL))  # fmt: skip


def test_the_agent_pod_is_unprivileged_and_mounts_exactly_its_paths_read_only() -> None:
    group = NodeGroup("gpu-1", ("n0", "n1"), {"gpuCount": 8})
    job = manifests.job(ctx(), agent.planned(group, "n0", agent.TIMEOUT), None)
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    security = container["securityContext"]
    assert "privileged" not in security
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["allowPrivilegeEscalation"] is False and security["runAsNonRoot"] is True
    host = {v["name"]: v["hostPath"] for v in pod["volumes"] if "hostPath" in v}
    assert sorted((h["path"], h["type"]) for h in host.values()) == [
        ("/etc/nvidia-container-runtime/config.toml", "File"), ("/etc/os-release", "File"),
        ("/sys/devices/system/node", "Directory")]  # fmt: skip
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert all(mounts[n]["readOnly"] and mounts[n]["mountPath"] == h["path"]
               for n, h in host.items())  # fmt: skip
    term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n0"]
    assert container["command"] == ["aicr", "check", "run", "node-agent-gpu-1"]


def test_a_cpu_group_agent_does_not_ask_for_the_toolkit_config() -> None:
    check = agent.planned(NodeGroup("cpu-1", ("c0",), {}), "c0", agent.TIMEOUT)
    assert [h.path for h in check.host_paths] == ["/etc/os-release", "/sys/devices/system/node"]


def test_the_agents_namespace_is_privileged_and_belongs_to_the_run() -> None:
    ns = manifests.namespace("r1a2b3c4d", "x", part="agent", pod_security="privileged")
    labels = ns["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert labels["aicr.dev/run-id"] == "r1a2b3c4d"


def node(name: str, gpus: int, kernel: str) -> dict[str, Any]:
    res = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {"metadata": {"name": name, "labels": {"pool": "gpu" if gpus else "cpu"}},
            "status": {"capacity": res, "allocatable": res,
                       "nodeInfo": {"kernelVersion": kernel}}}  # fmt: skip


SNAP = build({"gitVersion": "v1.33.1"}, [node("g0", 8, "6.8.0"), node("c0", 0, "6.1.0")])


def passed(tmp: Path, os_release: str) -> CheckResult:
    return host_files.read_on_node("x", str(root(tmp, os_release=os_release, toolkit=None)))


def test_readings_that_groups_disagree_on_are_kept_per_group(tmp_path: Path) -> None:
    results = {"gpu-1": passed(tmp_path / "g", "ID=ubuntu\n"),
               "cpu-1": passed(tmp_path / "c", "ID=amzn\n")}  # fmt: skip
    outcome = agent.AgentOutcome(results=results)
    merged = agent.merge(SNAP, outcome)
    assert merged.reading("OS.release.ID") is None
    assert merged.lookup("OS.release.ID", "gpu-1") == ("ID", "ubuntu")
    assert merged.reading("NodeTopology.numa.nodes") == 2  # agreed: cluster-wide
    recipe = parse_recipe("constraints:\n  - {name: OS.release.ID, value: ubuntu}\n")
    assert gate.run(recipe, merged).passed  # only the GPU group decides


def test_a_failed_agent_leaves_no_cluster_wide_reading_behind(tmp_path: Path) -> None:
    failed = CheckResult(name="node-agent-cpu-1", status=Status.OTHER, message="timed out")
    outcome = agent.AgentOutcome(results={"gpu-1": passed(tmp_path, "ID=ubuntu\n"),
                                          "cpu-1": failed})  # fmt: skip
    merged = agent.merge(SNAP, outcome)
    assert merged.reading("OS.release.ID") is None  # one group is unknown
    assert merged.lookup("OS.release.ID", "gpu-1") == ("ID", "ubuntu")
    assert outcome.failures == ["cpu-1: other: timed out"]
    assert merged.metadata["agent-missing"] == "cpu-1: other: timed out"


def test_a_gpu_group_whose_agent_failed_fails_the_gate_closed() -> None:
    failed = CheckResult(name="node-agent-gpu-1", status=Status.OTHER, message="timed out")
    merged = agent.merge(SNAP, agent.AgentOutcome(results={"gpu-1": failed}))
    recipe = parse_recipe("constraints:\n  - {name: OS.release.ID, value: ubuntu}\n")
    result = gate.run(recipe, merged).results[0]
    assert result.verdict == "missing" and result.blocks


def test_the_kernel_comes_from_the_kubelet_per_group() -> None:
    recipe = parse_recipe(
        "constraints:\n  - {name: OS.sysctl./proc/sys/kernel/osrelease, value: '>= 6.8'}\n"
    )
    assert gate.run(recipe, SNAP).passed  # the CPU group's 6.1.0 does not decide


@pytest.mark.parametrize(("selector", "host"), [({}, "g0"), ({"pool": "cpu"}, None)])
def test_the_node_selector_picks_the_agent_host(selector: dict[str, str], host: str | None) -> None:
    group = NodeGroup("gpu-1", ("g0",), {})
    assert agent._host(group, {"g0": {"pool": "gpu"}}, selector) == host


def test_the_agent_result_survives_the_result_channel(tmp_path: Path) -> None:
    result = passed(tmp_path, "ID=ubuntu\n")
    again = CheckResult.model_validate(json.loads(result.model_dump_json()))
    assert host_files.readings(again) == host_files.readings(result)
