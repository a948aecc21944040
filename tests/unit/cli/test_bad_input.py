"""Bad input outside ``aicr validate``'s flags: exit 2, one line naming what and where."""

from __future__ import annotations

from pathlib import Path

import pytest

import submission_recipe
from aicr.cli.main import run

DATA = Path(__file__).parents[2] / "data"


def aicr(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("name", "message"),
    [("dra-suport", "error: NAME: unknown check 'dra-suport' (did you mean 'dra-support'?)"),
     ("NOPE", "error: NAME: unknown check 'NOPE' (valid checks: operator-health, ")],
    ids=["typo", "unknown"],
)
def test_check_run_refuses_an_unknown_check(capsys: pytest.CaptureFixture[str], name: str,
                                            message: str) -> None:
    code, out, err = aicr(capsys, "check", "run", name, "--run-dir", str(DATA))
    assert (code, out) == (2, "")
    assert err.startswith(message) and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\xff\xfe{\x00", "not UTF-8 text (byte 0xff at offset 0) (expected a CTRF JSON report "
                        "as written by aicr validate -o)"),
     (b"report: yes\n", "1: malformed JSON: Expecting value"),
     (b"[1, 2]", "not a CTRF report (expected reportFormat: CTRF)")],
    ids=["not-utf8", "not-json", "not-ctrf"],
)
def test_evidence_render_refuses_a_report_that_is_not_ctrf_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str) -> None:
    report = tmp_path / "report.json"
    report.write_bytes(content)
    code, out, err = aicr(capsys, "evidence", "render", "--report", str(report), "--recipe",
                          submission_recipe.path(), "--snapshot",
                          str(DATA / "snapshots/ok.yaml"), "--config",
                          str(DATA / "configs/vendor.yaml"), "--out", str(tmp_path / "v1.35/x"))
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [f"error: {report}:{message}" if message[0] == "1"
                                        else f"error: {report}: {message}"]
    assert not (tmp_path / "v1.35").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--cncf-version", "1.34"],
      "error: --cncf-version: CNCF version 1.34 does not match the cluster's Kubernetes 1.35 "
      "(K8s.server.version in the snapshot) (a v1.34 submission must come from a Kubernetes "
      "1.34 cluster; use 1.35 or leave the version out)"),
     (["--cncf-version", "9.9"],
      "error: --cncf-version: no CNCF AI Conformance requirement data for version '9.9' "
      "(supported: 1.33, 1.34, 1.35, 1.36, 1.37, 1.38)")],
    ids=["not-the-cluster-minor", "unsupported"],
)
def test_a_submission_version_is_the_clusters_minor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
        message: str) -> None:
    code, out, err = aicr(capsys, "validate", "-r", submission_recipe.path(),
                          "-s", str(DATA / "snapshots/ok.yaml"), "--config",
                          str(DATA / "configs/vendor.yaml"), "--cncf-submission",
                          "--evidence-dir", str(tmp_path / "v1.34/x"), *extra)
    assert (code, out) == (2, "")
    assert err.strip().splitlines()[0] == message
    assert not (tmp_path / "v1.34").exists()


def test_inside_a_job_an_unknown_check_is_other_never_skipped(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # exit 2 means skipped to the orchestrator: a Job (result ConfigMap set) must get 3
    monkeypatch.setattr("aicr.checks.entrypoint.default_termination_log", lambda: None)
    code, _, _ = aicr(capsys, "check", "run", "NOPE", "--run-dir", str(DATA),
                      "--result-configmap", "aicr-result-x")
    assert code == 3


def test_snapshot_refuses_an_unwritable_output_before_capturing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "snapshot.yaml"
    code, out, err = aicr(capsys, "snapshot", "-o", str(target))
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"error: --output {target}: folder {target.parent} does not exist (create it first)"]
