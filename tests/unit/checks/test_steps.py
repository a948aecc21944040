"""Sub-results: steps with status and time, a raising step is other, the check's verdict."""

from __future__ import annotations

import pytest

from aicr.catalog import load_catalog
from aicr.checks import CheckContext, RunInputs
from aicr.checks.steps import conclude
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe
from aicr.result import EvidenceSection, StepStatus


def context() -> CheckContext:
    spec = load_catalog().get("secure-accelerator-access")
    assert spec is not None
    inputs = RunInputs("r1", "aicr-validation", parse_recipe("componentRefs: []\n"), EMPTY_CONFIG)
    return CheckContext(spec, inputs)


def test_steps_record_status_and_time_and_a_raising_step_does_not_stop_the_rest() -> None:
    ctx = context()
    with ctx.step("negative") as step:
        step.asked = "pod without a GPU request"
        step.passed("saw no GPU")
    with ctx.step("permissive-toolkit"):
        raise RuntimeError("pod log unreadable")
    with ctx.step("silent"):
        pass
    with ctx.step("nodes") as step:
        step.info("2 GPU nodes")
    assert [(s.title, s.status, s.verdict) for s in ctx.evidence] == [
        ("negative", StepStatus.PASSED, "saw no GPU"),
        ("permissive-toolkit", StepStatus.OTHER, "raised RuntimeError: pod log unreadable"),
        ("silent", StepStatus.OTHER, "the step recorded no verdict"),
        ("nodes", StepStatus.INFO, "2 GPU nodes"),
    ]
    assert all(s.timestamp and s.timestamp.endswith("Z") for s in ctx.evidence)
    result = ctx.conclude("probes")
    assert (result.status, result.message) == (
        Status.OTHER,
        "2/3 probes could not be judged: permissive-toolkit: raised RuntimeError: pod log "
        "unreadable | silent: the step recorded no verdict",
    )


def section(title: str, status: StepStatus, verdict: str = "") -> EvidenceSection:
    return EvidenceSection(title=title, status=status, verdict=verdict)


@pytest.mark.parametrize(
    ("sections", "status", "message"),
    [
        ([section("a", StepStatus.PASSED), section("b", StepStatus.PASSED)],
         Status.PASSED, "2/2 probes passed"),
        ([section("a", StepStatus.PASSED), section("b", StepStatus.FAILED, "saw GPU-1"),
          section("c", StepStatus.OTHER, "raised X: y"), section("n", StepStatus.INFO)],
         Status.FAILED, "2/3 probes failed: b: saw GPU-1 | c: raised X: y"),
        ([section("n", StepStatus.INFO), EvidenceSection(title="old")],
         Status.FAILED, "no probes were judged"),
    ],
    ids=["all-passed", "failed-and-other", "nothing-judged"],
)  # fmt: skip
def test_conclude(sections: list[EvidenceSection], status: Status, message: str) -> None:
    assert conclude(sections, "probes") == (status, message)


def test_a_checks_params_model_is_validated_with_the_field_path_and_a_suggestion() -> None:
    from aicr.catalog.params import check_params
    from aicr.errors import SchemaError
    from aicr.yaml_io import parse

    text = ("spec:\n  validate:\n    checks:\n      check-nvidia-smi:\n        params:\n"
            "          imag: cuda:13\n")  # fmt: skip
    with pytest.raises(SchemaError) as caught:
        check_params("check-nvidia-smi", {"imag": "cuda:13"}, parse(text, "config.yaml"))
    assert str(caught.value) == ("config.yaml:6: spec.validate.checks.check-nvidia-smi.params: "
                                 "unknown key 'imag' (did you mean 'image'?)")  # fmt: skip
    params = check_params("check-nvidia-smi", {"image": "cuda:13", "aicrDelaySeconds": 1}, None)
    assert (params.image, params.aicr_delay_seconds) == ("cuda:13", 1)  # type: ignore[attr-defined]
