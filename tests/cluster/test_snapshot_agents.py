"""`aicr snapshot` with its node agents on the simulated cluster: readings, gate, cleanup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import SimCluster
from kubernetes import client

from aicr import gate
from aicr.cli.main import run
from aicr.kube import names
from aicr.recipe.load import load_recipe
from aicr.snapshot import aks
from aicr.snapshot.load import load_snapshot

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def test_snapshot_reads_each_node_group_from_its_own_root_and_passes_the_example_gates(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.yaml"
    before = set(_agent_namespaces(cluster))  # earlier tests' runs are theirs to judge
    code = run(["snapshot", "--kubeconfig", str(cluster.kubeconfig), "--image",
                cluster.validator_image, "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "left in the cluster" not in err, err
    assert "node agent gpu-1 on gpu-h100-0: passed" in err
    assert "node agent cpu-1 on cpu-customer-0: passed" in err
    snap = load_snapshot(str(out))
    assert snap.gpu_groups == ["gpu-1"]
    # every value below comes from hack/sim/profiles/roots, not from this machine
    assert snap.lookup("OS.release.ID", "gpu-1") == ("ID", "ubuntu")
    assert snap.lookup("OS.release.ID", "cpu-1") == ("ID", "amzn")
    assert snap.reading("OS.release.ID") is None  # the groups disagree: no cluster-wide value
    assert snap.lookup("OS.container-toolkit.nvidia-container-runtime.mode", "gpu-1") == (
        "nvidia-container-runtime.mode", "cdi")  # fmt: skip
    assert snap.lookup("NodeTopology.numa.nodes", "gpu-1") == ("nodes", 2)
    assert snap.lookup("OS.sysctl./proc/sys/kernel/osrelease", "gpu-1") == (
        "/proc/sys/kernel/osrelease", "6.8.0-1028-aws")  # fmt: skip
    pools = aks.parse_pools(json.dumps([{"name": "gpu", "vmSize": "Standard_ND96isr_H100_v5"}]),
                            "pools.json")  # fmt: skip
    for path in sorted(RECIPES.glob("*.yaml")):
        outcome = gate.run(load_recipe(str(path)), aks.project(snap, pools))
        assert outcome.passed, (path.name, [r.message for r in outcome.blocking])
    # nothing of the agents' run is left: Jobs, RBAC, the privileged namespace
    assert set(_agent_namespaces(cluster)) - before == set(), err


def _agent_namespaces(cluster: SimCluster) -> list[str]:
    namespaces = client.CoreV1Api(cluster.api()).list_namespace().items
    return [n.metadata.name for n in namespaces
            if (n.metadata.labels or {}).get(names.PART_LABEL) == "agent"]  # fmt: skip


def test_an_agent_that_never_reports_fails_the_snapshot_closed(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.yaml"
    # an image the simulated runtime only shows as running: the agent never reports
    code = run(["snapshot", "--kubeconfig", str(cluster.kubeconfig), "--image",
                "registry.example/other:v1", "--timeout", "15s", "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 8, err
    assert "node agents did not pass" in err
    assert not out.exists()


def test_validate_captures_with_agents_and_signs_the_run(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64
    import hashlib

    from aicr.kube.target import KubeTarget, load_configuration

    small = Path(__file__).resolve().parents[1] / "data/recipes/small.yaml"
    assert run(["attestation", "keygen", "-o", str(tmp_path / "keys")]) == 0
    out = tmp_path / "out"
    out.mkdir()
    checks = ["operator-health", "expected-resources", "platform-health", "dra-support"]
    code = run(["validate", "-r", str(small), "--kubeconfig", str(cluster.kubeconfig),
                "--image", cluster.validator_image, *[f"--skip-check={c}" for c in checks],
                "-o", str(out / "report.json"), "--snapshot-out", str(out / "snapshot.yaml"),
                "--emit-attestation", "--attestation-key",
                str(tmp_path / "keys/aicr-attestation.key")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    # OS.release.ID came from the GPU group's agent: the gate could only pass with it
    gated = json.loads((out / "report.json").read_text())["extra"]["aicr"]["gate"]
    verdicts = {c["name"]: c["verdict"] for c in gated["constraints"]}
    assert verdicts["OS.release.ID"] == "passed"
    assert load_snapshot(str(out / "snapshot.yaml")).lookup("OS.release.ID", "gpu-1")
    envelope = json.loads((out / "report.intoto.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert [s["name"] for s in statement["subject"]] == ["report.json", "snapshot.yaml"]
    server = load_configuration(KubeTarget(str(cluster.kubeconfig))).host
    assert statement["predicate"]["cluster"]["server"] == {
        "sha256": hashlib.sha256(server.encode()).hexdigest()}  # fmt: skip
    assert server not in json.dumps(statement)  # only its hash
    code = run(["evidence", "verify", "--attestation", str(out / "report.intoto.json"),
                "--key", str(tmp_path / "keys/aicr-attestation.pub")])  # fmt: skip
    assert code == 0, capsys.readouterr().out
