"""--aks-gpu-pools, --redact and --snapshot-out through the CLI, with no real cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr.cli.main import run
from aicr.ctrf import Status
from aicr.result import CheckResult, EvidenceSection
from aicr.snapshot.agent import AgentOutcome
from aicr.snapshot.capture import build
from aicr.snapshot.host_files import OS_RELEASE

DATA = Path(__file__).parents[2] / "data"
RECIPE = str(DATA / "recipes/small.yaml")
OK = str(DATA / "snapshots/ok.yaml")
POOLS = [
    {"name": "system", "vmSize": "Standard_D8s_v5", "gpuProfile": None},
    {"name": "gpu", "vmSize": "Standard_ND96isr_H100_v5", "gpuProfile": {"driver": "Install"}},
]
NODE = "aks-gpu-12345678-vmss000000"


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """`aicr snapshot` reads a fake API holding one node; returns how often it was read."""
    calls: list[int] = []

    def capture(kube: object, request_timeout: float) -> object:
        calls.append(1)
        labels = {"kubernetes.io/hostname": NODE, "nvidia.com/gpu.product": "NVIDIA-H100"}
        node = {"metadata": {"name": NODE, "labels": labels},
                "status": {"addresses": [{"address": "10.224.0.7"}]}}  # fmt: skip
        return build({"gitVersion": "v1.33.2"}, [node])

    def agents(snapshot: object, request: object, events: object) -> AgentOutcome:
        release = EvidenceSection(title=OS_RELEASE, answer='ID=ubuntu\nVERSION_ID="24.04"\n',
                                  verdict="read")  # fmt: skip
        result = CheckResult(name="node-agent-cpu-1", status=Status.PASSED, message="read",
                             evidence=[release], node=NODE)  # fmt: skip
        return AgentOutcome(results={"cpu-1": result}, run_id="r00000000")

    monkeypatch.setattr("aicr.snapshot.capture.capture", capture)
    monkeypatch.setattr("aicr.snapshot.agent.run", agents)
    return calls


def aicr(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_snapshot_projects_the_pool_dump_and_redacts(
    captured: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pools = tmp_path / "pools.json"
    pools.write_text(json.dumps(POOLS))
    code, out, err = aicr(capsys, "snapshot", "--aks-gpu-pools", str(pools), "--redact")
    assert code == 0, err
    assert "aks-gpu-pools" in out
    assert "gpu-driver: Install" in out
    assert "pool.gpu: Install" in out
    assert NODE not in out
    assert "node.node-1" in out  # the subtype keeps its shape with the placeholder
    assert "VERSION_ID: '24.04'" in out  # the node agent's reading, merged
    assert f"node agent cpu-1 on {NODE}: passed" in err  # the note is not redacted


@pytest.mark.parametrize("command", ["snapshot", "validate"])
@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "--aks-gpu-pools: file not found"),
     ("[{\"vmSize\": \"Standard_NC6\"}]", "[0].name: got None (expected a non-empty string)")],
    ids=["missing", "malformed"],
)  # fmt: skip
def test_a_bad_pool_dump_stops_before_any_cluster_work(
    captured: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path,
    command: str, content: str | None, message: str,
) -> None:  # fmt: skip
    pools = tmp_path / "pools.json"
    if content is not None:
        pools.write_text(content)
    args = ["-r", RECIPE] if command == "validate" else []
    code, out, err = aicr(capsys, command, *args, "--aks-gpu-pools", str(pools))
    assert code == 2, err
    assert f"error: {pools}: " in err or f"error: {pools}:" in err
    assert message in err
    assert captured == []
    assert out == ""


def test_validate_keeps_the_snapshot_it_gated_with_the_pool_projection(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pools = tmp_path / "pools.json"
    pools.write_text(json.dumps(POOLS))
    kept = tmp_path / "kept.yaml"
    code, _, err = aicr(capsys, "validate", "-r", RECIPE, "-s", OK, "--no-cluster",
                        "--aks-gpu-pools", str(pools), "--snapshot-out", str(kept))  # fmt: skip
    assert code == 0, err
    text = kept.read_text()
    assert "gpu-driver: Install" in text
    assert "VERSION_ID: '24.04'" in text  # what -s gave is kept as it was


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--no-cluster"], "--snapshot-out with --no-cluster without -s"),
     (["-s", OK, "--dry-run"], "--snapshot-out with --dry-run"),
     (["-s", OK, "--no-cluster", "--snapshot-out-dir"], "")],
    ids=["no-cluster", "dry-run", "folder"],
)  # fmt: skip
def test_snapshot_out_is_refused_where_nothing_is_captured(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    target = str(tmp_path) if "--snapshot-out-dir" in args else str(tmp_path / "s.yaml")
    args = [a for a in args if a != "--snapshot-out-dir"]
    code, out, err = aicr(capsys, "validate", "-r", RECIPE, *args, "--snapshot-out", target)
    assert code == 2
    assert (message or f"--snapshot-out {tmp_path}: is a folder") in err
    assert out == ""
