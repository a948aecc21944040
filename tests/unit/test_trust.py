"""Trust classes: simulated told from the cluster's nodes, offline refused, simulated marked."""

from __future__ import annotations

from pathlib import Path

import pytest

import submission_recipe
from aicr import cncf
from aicr.cli.main import run as run_cli
from aicr.errors import SubmissionFailed
from aicr.run_plan import ValidateRequest
from aicr.trust import SIMULATED_BANNER, TrustClass, classify, of_report, simulated_node
from aicr.validate import run
from executor_fakes import FakeExecutor

DATA = Path(__file__).parents[1] / "data"

# As hack/sim/simcluster/nodes/layout.py builds them and as Karpenter's KWOK provider makes them.
SIM_NODE = {"kind": "Node", "metadata": {"name": "gpu-0", "annotations": {
    "kwok.x-k8s.io/node": "fake"}}, "spec": {}}
KARPENTER_KWOK_NODE = {"kind": "Node", "metadata": {"name": "kwok-a"},
                       "spec": {"providerID": "kwok://kwok-a"}}
EKS_NODE = {"kind": "Node", "metadata": {"name": "ip-10-0-1-2", "annotations": {
    "alpha.kubernetes.io/provided-node-ip": "10.0.1.2"}},
    "spec": {"providerID": "aws:///us-west-2a/i-0abc"}}


def test_kwok_nodes_are_simulated_and_real_ones_are_not() -> None:
    assert "kwok.x-k8s.io/node" in (simulated_node([EKS_NODE, SIM_NODE]) or "")
    assert "kwok://" in (simulated_node([KARPENTER_KWOK_NODE]) or "")
    assert simulated_node([EKS_NODE]) is None
    assert classify(no_cluster=False, snapshot_given=True, nodes=[EKS_NODE]).cls == \
        TrustClass.GIVEN_SNAPSHOT
    assert classify(no_cluster=False, snapshot_given=False, nodes=[EKS_NODE]).cls == \
        TrustClass.OBSERVED
    # a supplied snapshot does not hide the cluster the checks really ran on
    assert classify(no_cluster=False, snapshot_given=True, nodes=[SIM_NODE]).cls == \
        TrustClass.SIMULATED


def submission(tmp_path: Path) -> ValidateRequest:
    return ValidateRequest(recipe=submission_recipe.path(),
                           snapshot=str(DATA / "snapshots/ok.yaml"),
                           config=str(DATA / "configs/vendor.yaml"), cncf_submission=True,
                           evidence_dir=str(tmp_path / "v1.35" / "example"))


def test_every_report_records_its_trust_class() -> None:
    offline = run(ValidateRequest(recipe=submission_recipe.path(),
                                  snapshot=str(DATA / "snapshots/ok.yaml"), no_cluster=True))
    live = run(ValidateRequest(recipe=submission_recipe.path(),
                               snapshot=str(DATA / "snapshots/ok.yaml")),
               executor=FakeExecutor(node_objects=[EKS_NODE]))
    assert offline.report.extra["aicr"]["trust"]["class"] == "offline"  # type: ignore[index]
    assert live.report.extra["aicr"]["trust"]["class"] == "given-snapshot"  # type: ignore[index]


def test_a_simulated_submission_is_marked_everywhere_and_refused_by_verify(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run(submission(tmp_path), executor=FakeExecutor(node_objects=[SIM_NODE]))
    assert outcome.exit_code == 0, outcome.no_submission
    out = outcome.submission_path
    assert out is not None
    pages = [out / "README.md", *sorted((out / "evidence").glob("*.md"))]
    assert all(SIMULATED_BANNER in p.read_text() for p in pages)
    product = (out / "PRODUCT.yaml").read_text()
    notes = [line for line in product.splitlines() if line.strip().startswith("notes:")]
    assert notes and all(SIMULATED_BANNER in n for n in notes)
    refused = cncf.verify(out, version=None)
    assert not refused.ok and any("simulated" in e for e in refused.errors)
    assert cncf.verify(out, version=None, allow_simulated=True).ok
    assert run_cli(["evidence", "verify", str(out)]) != 0
    assert "--allow-simulated" in capsys.readouterr().out
    assert run_cli(["evidence", "verify", "--allow-simulated", str(out)]) == 0


def test_an_offline_report_is_never_rendered_into_a_submission(tmp_path: Path) -> None:
    from aicr.config import parse_config
    from aicr.recipe.load import load_recipe
    from aicr.snapshot.load import load_snapshot

    good = run(submission(tmp_path / "a"), executor=FakeExecutor())
    report = good.report.model_copy(deep=True)
    assert report.extra is not None
    report.extra["aicr"]["trust"] = {"class": "offline", "why": "--no-cluster"}
    assert of_report(report.extra).cls == TrustClass.OFFLINE
    with pytest.raises(SubmissionFailed, match="offline"):
        snapshot = load_snapshot(str(DATA / "snapshots/ok.yaml"))
        config = parse_config((DATA / "configs/vendor.yaml").read_text(), "vendor.yaml")
        run_inputs = cncf.SubmissionInputs(
            report, load_recipe(submission_recipe.path()), snapshot, config,
            cncf.resolve_conformance(snapshot, None, config), "submission.yaml", checked=())
        cncf.write_submission(tmp_path / "b" / "v1.35" / "x", run_inputs, force=False)
    assert not (tmp_path / "b" / "v1.35" / "x").exists()
