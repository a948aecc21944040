from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.catalog import load_catalog
from aicr.checks import entrypoint
from aicr.ctrf import Status
from aicr.plan import PlannedCheck
from aicr.result import CheckResult, to_test

RUN_JSON = {"runId": "r0123abcd", "namespace": "aicr-validation", "workloads": {}}
RECIPE = "componentRefs: []\n"
CONFIG = "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / "run.json").write_text(json.dumps(RUN_JSON))
    (tmp_path / "recipe.yaml").write_text(RECIPE)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return tmp_path


@pytest.fixture
def unimplemented(monkeypatch: pytest.MonkeyPatch) -> str:
    """A catalog check whose module has no ``run`` (every real one may be implemented)."""
    monkeypatch.setattr(entrypoint, "find", lambda spec: None)
    return "platform-health"


def test_unimplemented_check_fails_as_not_implemented(
    run_dir: Path, tmp_path: Path, unimplemented: str
) -> None:
    term = tmp_path / "termination-log"
    code = entrypoint.execute(unimplemented, run_dir, result_configmap=None, termination_log=term)
    assert code == 1
    summary = json.loads(term.read_text())
    assert summary["status"] == "failed"
    assert summary["message"].startswith("not implemented:")


def test_bad_inputs_end_other_with_exit_3(tmp_path: Path) -> None:
    term = tmp_path / "t"
    code = entrypoint.execute(
        "platform-health", tmp_path, result_configmap=None, termination_log=term
    )
    assert code == 3
    summary = json.loads(term.read_text())
    assert summary["status"] == "other"
    assert "run.json" in summary["message"]


def test_a_check_that_raises_ends_other(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: object) -> CheckResult:
        raise RuntimeError("kaput")

    monkeypatch.setattr(entrypoint, "find", lambda spec: boom)
    result = entrypoint.run_check("platform-health", entrypoint.load_inputs(run_dir))
    assert result.status == Status.OTHER
    assert result.message == "check raised RuntimeError: kaput"


def test_summary_fits_the_termination_message_limit() -> None:
    result = CheckResult(name="x", status=Status.FAILED, message="é" * 10_000)
    text = entrypoint.summary(result)
    assert len(text.encode()) <= 4096
    assert json.loads(text)["status"] == "failed"


def test_cli_exit_code_follows_status(run_dir: Path, unimplemented: str) -> None:
    from aicr.cli.root import cli

    out = CliRunner().invoke(
        cli, ["check", "run", unimplemented, "--run-dir", str(run_dir)], standalone_mode=False
    )
    assert out.exception is None, out.output
    assert out.return_value == 1
    assert f"{unimplemented}: failed: not implemented" in out.output


# The nodes a check read reach its result as data, so a submission can redact them wherever
# the check's free text names them (even when the snapshot came from another cluster).
NODES_AND_PODS = [
    {"kind": "Node", "metadata": {"name": "gpu-h100-1"}},
    {"kind": "Node", "metadata": {"name": "gpu-h100-0"}},
    {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "cpu-7"}},
    {"kind": "Pod", "metadata": {"name": "q", "namespace": "ns"}, "spec": {}},
    {"kind": "ConfigMap", "metadata": {"name": "not-a-node", "namespace": "ns"}},
]


def _reading(then: str):  # type: ignore[no-untyped-def]
    def check(ctx):  # type: ignore[no-untyped-def]
        nodes = ctx.kube.list("Node")
        ctx.kube.list("Pod", "ns")
        ctx.kube.get("ConfigMap", "not-a-node", "ns")
        ctx.record(f"free GPUs on {nodes[0]['metadata']['name']}", "nodes", "8", "seen")
        if then == "raise":
            raise RuntimeError("kaput")
        return ctx.passed("ok")

    return check


@pytest.mark.parametrize("then", ["pass", "raise"])
def test_the_nodes_a_check_read_are_in_its_result_and_test(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, then: str
) -> None:
    monkeypatch.setattr(entrypoint, "find", lambda spec: _reading(then))
    kube = FakeKube(NODES_AND_PODS)
    result = entrypoint.run_check("platform-health", entrypoint.load_inputs(run_dir), kube=kube)
    assert result.status == (Status.PASSED if then == "pass" else Status.OTHER)
    assert result.nodes == ["cpu-7", "gpu-h100-0", "gpu-h100-1"]
    assert result.evidence[0].title == "free GPUs on gpu-h100-1"
    planned = PlannedCheck(load_catalog().get("platform-health"), timedelta(seconds=60))  # type: ignore[arg-type]
    test = to_test(planned, CheckResult.model_validate_json(result.model_dump_json()))
    assert (test.extra or {})["nodes"] == ["cpu-7", "gpu-h100-0", "gpu-h100-1"]


def test_the_recorder_notes_watched_nodes_and_forwards_calls_unchanged() -> None:
    from aicr.checks.seen import SeenRecorder

    kube = FakeKube(NODES_AND_PODS)
    seen: list[tuple[object, ...]] = []
    kube.create = lambda obj: (seen.append((obj,)), obj)[1]  # type: ignore[method-assign]
    kube.watch = lambda *a: iter([{"type": "ADDED", "object": {"metadata": {"name": "w-1"}}}])  # type: ignore[assignment,method-assign]
    rec = SeenRecorder(kube)
    assert rec.get("Node", "absent") is None
    assert rec.create({"kind": "Pod"}) == {"kind": "Pod"} and seen == [({"kind": "Pod"},)]
    assert [e["type"] for e in rec.watch("Node", None, None, "0", 1)] == ["ADDED"]
    assert rec.names == {"w-1"}


# What the check's own pods ran reaches its result by the digest the kubelet reported: the
# pods it read and, listed once as it closes, those it never read (a Job's, an operator's).
def _pod(name: str, namespace: str, image_id: str, labels: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": name, "labels": labels or {}},
        "spec": {"nodeName": "gpu-h100-0", "containers": [{"name": "c", "image": "ubuntu:22.04"}]},
        "status": {
            "containerStatuses": [
                {"name": "c", "image": "docker.io/library/ubuntu:22.04", "imageID": image_id}
            ]
        },
    }


def test_the_images_of_the_checks_own_pods_are_in_its_result_by_digest(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aicr.kube import names

    check_name = "gang-scheduling"
    ns = names.workload_namespace("r0123abcd", check_name)
    digest = "sha256:" + "a" * 64
    labelled = names.check_labels("r0123abcd", check_name, "conformance")
    kube = FakeKube([
        _pod("mine", ns, f"docker.io/library/ubuntu@sha256:{'a' * 64}"),
        _pod("labelled", "elsewhere", "", labelled),  # made by the check outside its namespace
        _pod("platform", "kube-system", f"docker.io/library/ubuntu@sha256:{'b' * 64}"),
        _pod("never-read", ns, f"sha256:{'c' * 64}"),  # only the closing list sees it
    ])  # fmt: skip

    def check(ctx):  # type: ignore[no-untyped-def]
        ctx.kube.get("Pod", "mine", ns)
        ctx.kube.list("Pod", "elsewhere")
        ctx.kube.list("Pod", "kube-system")
        return ctx.passed("ok")

    monkeypatch.setattr(entrypoint, "find", lambda spec: check)
    result = entrypoint.run_check(check_name, entrypoint.load_inputs(run_dir), kube=kube)
    assert [(i.pod, i.digest) for i in result.images] == [
        (f"{ns}/mine", digest),
        ("elsewhere/labelled", None),
        (f"{ns}/never-read", None),
    ]
    assert result.images[1].no_digest and "no imageID" in result.images[1].no_digest
    assert result.images[2].no_digest and "local image id" in result.images[2].no_digest
    planned = PlannedCheck(load_catalog().get(check_name), timedelta(seconds=60))  # type: ignore[arg-type]
    test = to_test(planned, CheckResult.model_validate_json(result.model_dump_json()))
    assert [i.get("digest") for i in (test.extra or {})["images"]] == [digest, None, None]
    assert (test.extra or {})["images"][0] == {
        "role": "workload", "pod": f"{ns}/mine", "container": "c", "image": "ubuntu:22.04",
        "imageID": f"docker.io/library/ubuntu@sha256:{'a' * 64}", "digest": digest}  # fmt: skip


def test_a_later_status_without_an_image_id_does_not_erase_the_one_seen() -> None:
    from aicr.checks.seen import SeenRecorder

    ran = _pod("p", "ns", f"docker.io/library/ubuntu@sha256:{'a' * 64}")
    kube = FakeKube([_pod("p", "ns", "")])
    rec = SeenRecorder(kube, owns=lambda pod: True)
    rec._note("Pod", [ran])
    rec.list("Pod", "ns")
    assert [i.digest for i in rec.images] == ["sha256:" + "a" * 64]
