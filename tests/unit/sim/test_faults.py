"""The fault registry and `hack/sim/sim fault|heal`: names, targets, journal, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.faults import nodes, pods, registry
from simcluster.faults.registry import FaultInputError, NodeInfo
from simcluster.gpu import smi

REPO = Path(__file__).resolve().parents[3]
NODES = [
    NodeInfo("gpu-h100-0", True),
    NodeInfo("gpu-h100-1", True),
    NodeInfo("cpu-system-0", False),
]


@pytest.fixture
def sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sim:
    """A run folder that looks up, whose nodes are NODES (no API server behind it)."""
    monkeypatch.setattr(Sim, "is_up", lambda self: True)
    monkeypatch.setattr(Sim, "enter", lambda self: None)
    monkeypatch.setattr(registry, "cluster_nodes", lambda sim: list(NODES))
    return Sim(tmp_path)


def test_lookup_names_the_closest_fault() -> None:
    assert registry.lookup("gpu-lost").scope == "gpu-node"
    with pytest.raises(FaultInputError, match="did you mean driver-not-loaded"):
        registry.lookup("driver-not-loded")


def test_every_name_is_unique_and_says_what_it_models() -> None:
    names = [f.name for f in registry.FAULTS]
    assert len(names) == len(set(names))
    assert all(len(f.models) > 20 for f in registry.FAULTS)


@pytest.mark.parametrize(
    ("name", "node", "want"),
    [
        ("gpu-lost", None, ["gpu-h100-0", "gpu-h100-1"]),
        ("gpu-lost", "gpu-h100-1", ["gpu-h100-1"]),
        ("crash", None, ["gpu-h100-0", "gpu-h100-1", "cpu-system-0"]),
        ("crash", "cpu-system-0", ["cpu-system-0"]),
        ("apiserver-down", None, [None]),
    ],
)
def test_targets(name: str, node: str | None, want: list[str | None]) -> None:
    assert registry.targets(registry.lookup(name), node, NODES) == want


@pytest.mark.parametrize(
    ("name", "node", "message"),
    [
        ("gpu-lost", "gpu-h10-0", "unknown node 'gpu-h10-0'; did you mean gpu-h100-0?"),
        ("gpu-lost", "cpu-system-0", "needs a GPU node; cpu-system-0 has no GPUs"),
        ("apiserver-down", "gpu-h100-0", "applies to the cluster, not to a node"),
    ],
)
def test_bad_targets(name: str, node: str, message: str) -> None:
    with pytest.raises(FaultInputError, match=re.escape(message)):
        registry.targets(registry.lookup(name), node, NODES)


def test_gpu_fault_set_and_driver() -> None:
    assert nodes.with_fault([], "gpu-lost", True) == "gpu-lost"
    assert nodes.with_fault(["driver-not-loaded"], "gpu-lost", True) == "driver-not-loaded,gpu-lost"
    assert nodes.with_fault(["gpu-lost"], "gpu-lost", True) == "gpu-lost"
    assert nodes.with_fault(["gpu-lost"], "gpu-lost", False) is None
    assert nodes.mismatched_driver("570.86.16") != "570.86.16"
    assert nodes.mismatched_driver(nodes.MISMATCHED_DRIVER) != nodes.MISMATCHED_DRIVER


def test_the_gpu_model_reads_the_fault_set() -> None:
    profile = {"gpus": [0, 1, 2], "faults": ["driver-not-loaded", "gpu-lost"]}
    assert smi.visible(profile) == [0, 1]
    assert smi.visible({"gpus": [0, 1, 2], "faults": []}) == [0, 1, 2]


def _pod(node: str, ns: str = "ns", name: str = "p", job: str | None = None) -> dict[str, object]:
    labels = {"job-name": job} if job else {}
    return {"metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"nodeName": node}}  # fmt: skip


def test_pod_rules_match_every_given_field(tmp_path: Path) -> None:
    pods.add_rule(tmp_path, "oom", node="gpu-h100-0")
    pods.add_rule(tmp_path, "crash", namespace="other", job_name="j")
    assert pods.fault_for(tmp_path, _pod("gpu-h100-0")) == "oom"
    assert pods.fault_for(tmp_path, _pod("gpu-h100-1")) is None
    assert pods.fault_for(tmp_path, _pod("gpu-h100-1", ns="other", job="j")) == "crash"
    assert pods.fault_for(tmp_path, _pod("gpu-h100-1", ns="other")) is None
    pods.remove_node_rule(tmp_path, "oom", "gpu-h100-0")
    assert [r["fault"] for r in pods.read_rules(tmp_path)] == ["crash"]


def test_apply_records_and_heal_undoes_exactly_that(sim: Sim) -> None:
    pods.add_rule(sim.dir, "evict", namespace="kept")  # a test's own rule stays
    assert registry.apply(sim, "crash", "gpu-h100-0") == ["gpu-h100-0"]
    assert registry.apply(sim, "crash", "gpu-h100-0") == ["gpu-h100-0"]  # idempotent
    registry.apply(sim, "oom", "cpu-system-0")
    assert registry.active(sim) == [
        {"fault": "crash", "node": "gpu-h100-0"},
        {"fault": "oom", "node": "cpu-system-0"},
    ]
    assert [r["fault"] for r in pods.read_rules(sim.dir)] == ["evict", "crash", "oom"]
    assert registry.heal(sim, "cpu-system-0") == [{"fault": "oom", "node": "cpu-system-0"}]
    assert registry.heal(sim) == [{"fault": "crash", "node": "gpu-h100-0"}]
    assert registry.active(sim) == []
    assert [r["fault"] for r in pods.read_rules(sim.dir)] == ["evict"]


def test_cli_unknown_fault_exits_2_with_one_line(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fault", "gpu-lots"], sim=sim) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "sim fault: unknown fault 'gpu-lots'; did you mean gpu-lost? "
        "(`hack/sim/sim fault list` shows every fault)"
    ]
    assert registry.active(sim) == []


def test_cli_unknown_node_exits_2_with_a_suggestion(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fault", "crash", "gpu-h10-0"], sim=sim) == 2
    assert main(["heal", "cpu-sytem-0"], sim=sim) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("sim fault: unknown node 'gpu-h10-0'; did you mean gpu-h100-0?")
    assert lines[1].startswith("sim heal: unknown node 'cpu-sytem-0'; did you mean cpu-system-0?")


def test_cli_apply_status_heal(sim: Sim, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fault", "never-ready"], sim=sim) == 0
    assert capsys.readouterr().out == (
        "never-ready: applied on gpu-h100-0, gpu-h100-1, cpu-system-0\n"
    )
    assert main(["status"], sim=sim) == 0
    assert capsys.readouterr().out.splitlines() == [
        "up", "fault never-ready on gpu-h100-0", "fault never-ready on gpu-h100-1",
        "fault never-ready on cpu-system-0"]  # fmt: skip
    assert main(["heal", "gpu-h100-1"], sim=sim) == 0
    assert capsys.readouterr().out == "never-ready: healed on gpu-h100-1\n"
    assert main(["heal"], sim=sim) == 0
    assert main(["heal"], sim=sim) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "no fault to heal"
    assert json.loads((sim.dir / registry.JOURNAL).read_text()) == []


def test_cli_needs_a_running_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = Sim(tmp_path)
    assert main(["fault", "gpu-lost"], sim=sim) == 3
    assert "no simulated cluster runs" in capsys.readouterr().err
    assert main(["fault", "gpu-lots"], sim=sim) == 2  # a bad name is bad input, up or not


def test_fault_list_names_every_fault(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fault", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [f.name for f in registry.FAULTS]
    assert all(f.models in line for f, line in zip(registry.FAULTS, lines, strict=True))


def test_every_fault_is_documented() -> None:
    text = (REPO / "docs" / "development.md").read_text()
    missing = [f.name for f in registry.FAULTS if f"| `{f.name}` |" not in text]
    assert missing == []


def test_exec_runs_the_command_with_the_clusters_kubeconfig(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[str, list[str], dict[str, str]]] = []
    monkeypatch.setattr("os.execvpe", lambda f, argv, env: ran.append((f, argv, env)))
    main(["exec", "--", "kubectl", "get", "nodes"], sim=sim)
    assert [(f, argv) for f, argv, _ in ran] == [("kubectl", ["kubectl", "get", "nodes"])]
    assert ran[0][2]["KUBECONFIG"] == str(sim.kubeconfig)


def test_exec_needs_a_running_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exec", "--", "true"], sim=Sim(tmp_path)) == 3
    assert "no simulated cluster runs" in capsys.readouterr().err


def test_exec_without_a_command_or_with_a_missing_one(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["exec", "--"], sim=sim) == 2
    assert main(["exec", "--", "/nonexistent/cmd"], sim=sim) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "sim exec: no command given: `hack/sim/sim exec -- CMD [ARGS...]`"
    assert err[-1].startswith("sim exec: cannot run '/nonexistent/cmd'")
