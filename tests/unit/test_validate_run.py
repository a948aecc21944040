"""The whole validate pipeline with a fake executor: exit codes, reports, submissions."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import submission_recipe
from aicr import cncf
from aicr.ctrf import Status
from aicr.errors import InputError
from aicr.run_plan import ValidateRequest
from aicr.validate import run
from executor_fakes import FakeExecutor

DATA = Path(__file__).parents[1] / "data"
SUBMISSION_RECIPE = submission_recipe.path()
SNAPSHOT = str(DATA / "snapshots/ok.yaml")
VENDOR = str(DATA / "configs/vendor.yaml")


def request(**kw: object) -> ValidateRequest:
    base: dict[str, object] = {"recipe": SUBMISSION_RECIPE, "snapshot": SNAPSHOT}
    base.update(kw)
    return ValidateRequest(**base)  # type: ignore[arg-type]


def statuses(outcome: object) -> dict[str, Status]:
    return {t.name: t.status for t in outcome.report.tests}  # type: ignore[attr-defined]


def test_all_pass_exits_0_and_records_the_requirement_map() -> None:
    fake = FakeExecutor()
    outcome = run(request(), executor=fake)
    assert outcome.exit_code == 0
    assert set(statuses(outcome).values()) == {Status.PASSED}
    assert fake.finished_cleanup
    cncf_extra = outcome.report.extra["aicr"]["cncf"]  # type: ignore[index]
    assert cncf_extra["version"] == "1.35"
    rows = {r["id"]: r["status"] for r in cncf_extra["requirements"]}
    assert rows["dra_support"] == "Implemented"
    assert rows["cluster_autoscaling"] != "Implemented"  # not planned: never claimed


def test_failed_deployment_check_stops_conformance_and_exits_8() -> None:
    fake = FakeExecutor(results={"operator-health": (Status.FAILED, "gpu-operator not ready")})
    outcome = run(request(), executor=fake)
    assert outcome.exit_code == 8
    got = statuses(outcome)
    assert got["operator-health"] == Status.FAILED
    assert {got[n] for n in got if n != "operator-health"} == {Status.SKIPPED}
    assert fake.started == ["operator-health"]


def test_no_fail_on_error_reports_but_exits_0() -> None:
    fake = FakeExecutor(results={"dra-support": (Status.FAILED, "no DeviceClass")})
    outcome = run(request(fail_on_error=False), executor=fake)
    assert outcome.exit_code == 0
    assert statuses(outcome)["dra-support"] == Status.FAILED


def test_interrupt_exits_130_with_partial_report_marked() -> None:
    cancel = threading.Event()
    fake = FakeExecutor(durations={"operator-health": 5.0})
    threading.Timer(0.2, cancel.set).start()
    outcome = run(request(), executor=fake, cancel=cancel)
    assert outcome.exit_code == 130
    assert outcome.report.extra["aicr"]["interrupted"] is True  # type: ignore[index]
    assert set(statuses(outcome).values()) == {Status.OTHER}
    assert fake.finished_cleanup


def submission(tmp_path: Path, **kw: object) -> ValidateRequest:
    return request(config=VENDOR, cncf_submission=True,
                   evidence_dir=str(tmp_path / "v1.35" / "example"), **kw)


def test_submission_is_written_and_verified(tmp_path: Path) -> None:
    outcome = run(submission(tmp_path), executor=FakeExecutor())
    assert outcome.exit_code == 0
    assert outcome.submission_path == (tmp_path / "v1.35" / "example").absolute()
    product = (outcome.submission_path / "PRODUCT.yaml").read_text()
    assert 'vendorName: "Example Corp"' in product or "vendorName: 'Example Corp'" in product
    assert cncf.verify(outcome.submission_path, version=None).ok


def test_a_submission_says_each_warning_once(tmp_path: Path) -> None:
    outcome = run(submission(tmp_path), executor=FakeExecutor())
    assert outcome.submission_path is not None
    na = [w for w in outcome.warnings if w.startswith("cluster_autoscaling is a MUST declared N/A")]
    assert len(na) == 1
    assert len(set(outcome.warnings)) == len(outcome.warnings)
    assert outcome.report.extra is not None
    assert outcome.report.extra["aicr"]["warnings"] == outcome.warnings


def test_failed_should_only_check_does_not_block_a_submission(tmp_path: Path) -> None:
    fake = FakeExecutor(results={"driver-runtime-management": (Status.FAILED, "drift")})
    outcome = run(submission(tmp_path), executor=fake)
    assert outcome.exit_code == 0
    rows = {r["id"]: r["status"] for r in
            outcome.report.extra["aicr"]["cncf"]["requirements"]}  # type: ignore[index]
    assert rows["driver_runtime_management"] == "Not Implemented"
    assert outcome.submission_path is not None


@pytest.mark.parametrize("status", [Status.FAILED, Status.OTHER], ids=["failed", "other"])
def test_incomplete_must_writes_nothing_and_exits_8(tmp_path: Path, status: Status) -> None:
    fake = FakeExecutor(results={"gang-scheduling": (status, "gang split")})
    outcome = run(submission(tmp_path), executor=fake)
    assert outcome.exit_code == 8
    assert outcome.submission_path is None
    assert not (tmp_path / "v1.35").exists()


def test_submission_coverage_gap_is_refused_before_any_check(tmp_path: Path) -> None:
    recipe = tmp_path / "r.yaml"
    recipe.write_text("validation:\n  conformance:\n    checks: [platform-health]\n")
    fake = FakeExecutor()
    with pytest.raises(InputError) as exc:
        run(submission(tmp_path, recipe=str(recipe)), executor=fake)
    assert exc.value.exit_code == 2
    assert "dra_support" in str(exc.value)
    assert fake.started == [] and not fake.finished_cleanup


def test_non_empty_evidence_dir_is_refused_before_any_check(tmp_path: Path) -> None:
    target = tmp_path / "v1.35" / "example"
    target.mkdir(parents=True)
    (target / "old.md").write_text("stale")
    fake = FakeExecutor()
    with pytest.raises(InputError) as exc:
        run(submission(tmp_path), executor=fake)
    assert str(exc.value) == (
        f"{target}: directory is not empty (pass --force to replace it whole, or choose "
        "another directory)"
    )
    assert fake.started == []


def test_force_replaces_the_evidence_dir_whole(tmp_path: Path) -> None:
    target = tmp_path / "v1.35" / "example"
    target.mkdir(parents=True)
    (target / "old.md").write_text("stale")
    outcome = run(submission(tmp_path, force=True), executor=FakeExecutor())
    assert outcome.exit_code == 0
    assert not (target / "old.md").exists() and (target / "PRODUCT.yaml").is_file()


@pytest.mark.parametrize(
    ("image", "registry", "config_registry", "expected"),
    [
        (None, None, None, "ghcr.io/aicr-dev/aicr-validator:v{v}"),
        (None, "mirror.internal:5000/ai", None,
         "mirror.internal:5000/ai/aicr-validator:v{v}"),
        (None, "mirror.internal/", None, "mirror.internal/aicr-validator:v{v}"),
        (None, None, "cfg.internal/aicr", "cfg.internal/aicr/aicr-validator:v{v}"),
        (None, "env.internal", "cfg.internal", "env.internal/aicr-validator:v{v}"),
        ("my/validator:dev", "mirror.internal", "cfg.internal", "my/validator:dev"),
    ],
    ids=["default-pinned-to-version", "registry-override", "trailing-slash", "config-registry",
         "env-wins-over-config", "image-flag-wins"],
)  # fmt: skip
def test_validator_image(
    monkeypatch: pytest.MonkeyPatch, image: str | None, registry: str | None,
    config_registry: str | None, expected: str
) -> None:
    from aicr import __version__
    from aicr.config import EMPTY_CONFIG, parse_config
    from aicr.run_plan import resolve_image

    if registry is None:
        monkeypatch.delenv("AICR_VALIDATOR_IMAGE_REGISTRY", raising=False)
    else:
        monkeypatch.setenv("AICR_VALIDATOR_IMAGE_REGISTRY", registry)
    config = EMPTY_CONFIG
    if config_registry:
        config = parse_config(
            "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
            f"spec: {{validate: {{images: {{registry: {config_registry}}}}}}}\n"
        )
    assert resolve_image(request(image=image), config) == expected.format(v=__version__)


def _recipe_planning_autoscaling(tmp_path: Path) -> str:
    return str(submission_recipe.write(tmp_path, extra=["cluster-autoscaling"]))


def test_na_beside_a_passed_check_is_a_contradiction_nothing_written(tmp_path: Path) -> None:
    # vendor.yaml declares cluster_autoscaling N/A; the run shows cluster-autoscaling passing.
    outcome = run(submission(tmp_path, recipe=_recipe_planning_autoscaling(tmp_path)),
                  executor=FakeExecutor())
    assert outcome.exit_code == 8
    assert outcome.submission_path is None and not (tmp_path / "v1.35").exists()
    assert outcome.no_submission == (
        "cluster_autoscaling is declared N/A in the config, but its check cluster-autoscaling "
        "ran and passed")


def test_na_beside_a_failed_check_stays_na(tmp_path: Path) -> None:
    fake = FakeExecutor(results={"cluster-autoscaling": (Status.FAILED, "no node group")})
    outcome = run(submission(tmp_path, recipe=_recipe_planning_autoscaling(tmp_path)),
                  executor=fake)
    assert outcome.exit_code == 0 and outcome.submission_path is not None
    junit = (outcome.submission_path / "junit.xml").read_text()
    assert "<failure" not in junit and "cluster_autoscaling reported N/A" in junit


@pytest.mark.parametrize(
    ("fake", "why"),
    [(FakeExecutor(results={"gang-scheduling": (Status.FAILED, "gang split")}),
      "no CNCF submission written: MUST gang_scheduling is incomplete: gang-scheduling failed "
      "(gang split)"),
     (FakeExecutor(results={"operator-health": (Status.FAILED, "not ready")}),
      "no CNCF submission written: MUST dra_support is incomplete: dra-support skipped")],
    ids=["must-incomplete", "deployment-failed"],
)
def test_a_submission_run_that_writes_nothing_ends_saying_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fake: FakeExecutor, why: str) -> None:
    from aicr.cli.main import run as cli

    monkeypatch.setattr("aicr.validate._make_executor", lambda kind: fake)
    code = cli(["validate", "-r", SUBMISSION_RECIPE, "-s", SNAPSHOT, "--config", VENDOR,
                "--cncf-submission", "--evidence-dir", str(tmp_path / "v1.35" / "x"),
                "-o", str(tmp_path / "report.json")])
    err = capsys.readouterr().err
    assert code == 8 and not (tmp_path / "v1.35").exists()
    assert (tmp_path / "report.json").is_file()  # the run is never lost
    assert err.strip().splitlines()[-1].startswith(why)


def test_a_submission_the_writer_refuses_keeps_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aicr.errors import SubmissionFailed

    def refuse(*_: object, **__: object) -> None:
        raise SubmissionFailed("the rendered submission does not pass the verifier")

    monkeypatch.setattr("aicr.cncf.submission.write_submission", refuse)
    outcome = run(submission(tmp_path), executor=FakeExecutor())
    assert outcome.exit_code == 8 and outcome.report.tests
    assert outcome.no_submission == "the rendered submission does not pass the verifier"


def test_a_live_snapshot_of_another_minor_is_refused_before_any_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aicr.snapshot.load import load_snapshot

    captured = load_snapshot(SNAPSHOT)  # Kubernetes v1.35.2
    monkeypatch.setattr("aicr.snapshot.capture.capture", lambda kube, timeout: captured)
    fake = FakeExecutor()
    with pytest.raises(InputError) as exc:
        run(submission(tmp_path, snapshot=None, cncf_version="1.34"), executor=fake)
    assert exc.value.exit_code == 2
    assert "CNCF version 1.34 does not match the cluster's Kubernetes 1.35" in str(exc.value)
    assert fake.started == []
