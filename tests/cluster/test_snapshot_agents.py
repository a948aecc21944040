"""`aicr snapshot` with its node agents on the simulated cluster: readings, gate, cleanup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import SimCluster
from kubernetes import client

from aicr import gate
from aicr.cli.main import run
from aicr.recipe.load import load_recipe
from aicr.runner import names
from aicr.snapshot import aks
from aicr.snapshot.load import load_snapshot

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def test_snapshot_reads_each_node_group_from_its_own_root_and_passes_the_example_gates(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.yaml"
    code = run(["snapshot", "--kubeconfig", str(cluster.kubeconfig), "--image",
                cluster.validator_image, "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
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
    namespaces = client.CoreV1Api(cluster.api()).list_namespace().items
    assert not [n.metadata.name for n in namespaces
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
