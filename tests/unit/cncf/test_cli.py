from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cncf_builders import (
    CONFORMANCE,
    VENDOR,
    config_yaml,
    make_report,
    make_test,
    write_submission,
)

from aicr.cli.main import run as run_cli
from aicr.ctrf import Status


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(args)
    out, err = capsys.readouterr()
    return code, out, err


def _render_args(paths: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return ["evidence", "render", "--report", str(paths["report"]), "--recipe",
            str(paths["recipe"]), "--snapshot", str(paths["snapshot"]), "--config",
            str(paths["config"]), "--out", str(out), *extra]


def test_render_writes_a_submission_and_prints_the_summary(
        tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    paths = write_inputs(make_report([make_test(n) for n in CONFORMANCE]))
    out = tmp_path / "v1.35" / "example"
    code, _, err = run(_render_args(paths, out), capsys)
    assert code == 0, err
    assert (out / "PRODUCT.yaml").is_file()
    assert "gang_scheduling" in err and "verifier passed" in err
    code, stdout, _ = run(["evidence", "verify", str(out)], capsys)
    assert code == 0 and stdout.strip().endswith("passes the v1.35 checks")


def test_render_blocked_exits_8_and_writes_nothing(
        tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    tests = [make_test(n, Status.FAILED if n == "gang-scheduling" else Status.PASSED)
             for n in CONFORMANCE]
    paths = write_inputs(make_report(tests))
    out = tmp_path / "v1.35" / "example"
    code, _, err = run(_render_args(paths, out), capsys)
    assert code == 8
    assert "MUST gang_scheduling is incomplete: gang-scheduling failed" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("config", "extra", "message"),
    [(config_yaml(vendor={k: v for k, v in VENDOR.items() if k != "k8sConformanceUrl"}), [],
      "spec.validate.evidence.cncf.vendor.k8sConformanceUrl: required"),
     (config_yaml().replace('"platformVersion": "1.0"', '"platformVersion": 1.0'), [],
      "spec.validate.evidence.cncf.vendor.platformVersion"),
     (config_yaml(not_applicable={"gang_scheduling": "no"}), [],
      "gang_scheduling is not conditional"),
     (None, ["--cncf-version", "1.32"], "supported: 1.33, 1.34"),
     (None, ["--cncf-version", "banana"], "'banana' is not a version"),
     (None, ["--cncf-version", "1.34"],
      "--cncf-version: CNCF version 1.34 does not match the cluster's Kubernetes 1.35"),
     (config_yaml(version="1.36"), [],
      "config: spec.validate.evidence.cncf.version: CNCF version 1.36 does not match")],
    ids=["missing-k8s-url", "float-platform-version", "na-on-unconditional",
         "unsupported-version", "malformed-version", "flag-not-cluster-minor",
         "config-not-cluster-minor"],
)
def test_render_bad_input_exits_2(tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
                                  capsys: pytest.CaptureFixture[str], config: str | None,
                                  extra: list[str], message: str) -> None:
    paths = write_inputs(make_report([make_test(n) for n in CONFORMANCE]), config=config)
    out = tmp_path / "v1.35" / "example"
    code, _, err = run(_render_args(paths, out, *extra), capsys)
    assert code == 2
    assert message in err
    assert not out.exists()


def test_render_refuses_non_empty_out_without_force(
        tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    paths = write_inputs(make_report([make_test(n) for n in CONFORMANCE]))
    out = tmp_path / "v1.35" / "example"
    out.mkdir(parents=True)
    (out / "old.txt").write_text("x")
    code, _, err = run(_render_args(paths, out), capsys)
    assert code == 2 and "directory is not empty" in err and "--force" in err
    code, _, _ = run(_render_args(paths, out, "--force"), capsys)
    assert code == 0 and not (out / "old.txt").exists()


def test_verify_bad_invocation_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["evidence", "verify", str(tmp_path)], capsys)
    assert code == 2 and "--cncf-version" in err
    code, _, err = run(["evidence", "verify", str(write_submission(tmp_path)),
                        "--cncf-version", "1.35"], capsys)
    assert code == 2 and "contradicts" in err


def test_verify_members_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = tmp_path / "members.txt"
    members.write_text("Google\nAmazon\n")
    code, stdout, _ = run(["evidence", "verify", str(write_submission(tmp_path)), "--members",
                           str(members)], capsys)
    assert code == 1 and "'Example Corp' is not a CNCF member name" in stdout


def test_render_refuses_na_beside_a_passed_check(
        tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = config_yaml(not_applicable={"cluster_autoscaling": "Fixed bare-metal pools."})
    paths = write_inputs(make_report([make_test(n) for n in CONFORMANCE]), config=config)
    out = tmp_path / "v1.35" / "example"
    code, _, err = run(_render_args(paths, out), capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {paths['config']}: spec.validate.evidence.cncf.notApplicable.cluster_autoscaling: "
        "cluster_autoscaling is declared N/A, but its check cluster-autoscaling ran and passed "
        "in the report (remove the N/A declaration: the run shows the platform provides it)"]
    assert not out.exists()


def test_render_warns_that_na_on_a_conditional_must_fails_upstream_b2c8969(
        tmp_path: Path, write_inputs: Callable[..., dict[str, Path]],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = config_yaml(not_applicable={"cluster_autoscaling": "Fixed bare-metal pools."})
    tests = [make_test(n) for n in CONFORMANCE if n != "cluster-autoscaling"]
    paths = write_inputs(make_report(tests), config=config)
    out = tmp_path / "v1.35" / "example"
    code, _, err = run(_render_args(paths, out), capsys)
    assert code == 0, err
    assert ("cncf/k8s-ai-conformance scripts/validate.go at b2c8969 (2026-08-19) rejects N/A "
            "on a MUST") in err
    code, _, err = run(["evidence", "verify", str(out)], capsys)
    assert code == 0
    assert "N/A on a conditional MUST is accepted with notes (FAQ), but cncf/k8s-ai-conformance" \
        " scripts/validate.go at b2c8969 (2026-08-19) rejects it" in err


def test_verify_many_bad_invocation_names_every_directory_and_checks_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_submission(tmp_path / "a")
    missing, unversioned = tmp_path / "missing", tmp_path / "plain"
    unversioned.mkdir()
    code, out, err = run(["evidence", "verify", str(good), str(missing), str(unversioned)], capsys)
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"error: {missing}: not a directory",
        f"error: {unversioned}: cannot tell the conformance version (place the directory under "
        "vX.Y/ as upstream expects, or pass --cncf-version X.Y)",
    ]


def test_verify_many_one_invalid_exits_8_one_verdict_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    members = tmp_path / "members.txt"
    members.write_text("Example Corp\n")
    good = write_submission(tmp_path / "a")
    code, out, _ = run(["evidence", "verify", str(good), str(good), "--members", str(members)],
                       capsys)
    assert code == 0 and out.splitlines() == [f"VALID: {good} passes the v1.36 checks"] * 2
    members.write_text("Google\n")
    code, out, _ = run(["evidence", "verify", str(good), str(good), "--members", str(members)],
                       capsys)
    lines = out.splitlines()
    assert code == 8
    assert [v for v in lines if v.startswith(("VALID", "INVALID"))] == [
        f"INVALID: {good}: 1 error(s) against v1.36"] * 2
    code, _, _ = run(["evidence", "verify", str(good), "--members", str(members)], capsys)
    assert code == 1  # one directory keeps the upstream validator's exit code
