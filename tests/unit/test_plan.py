from __future__ import annotations

from datetime import timedelta

import pytest

from aicr.catalog import load_catalog
from aicr.config import EMPTY_CONFIG, parse_config
from aicr.errors import InputError, UnknownCheckError
from aicr.phases import Phase
from aicr.plan import build, resolve_phases
from aicr.recipe.load import parse_recipe

RECIPE = parse_recipe(
    """
validation:
  deployment:
    checks: [operator-health, check-nvidia-smi]
  performance:
    timeout: 45m
    checks: [nccl-all-reduce-bw]
  conformance:
    checks: [platform-health, dra-support, gang-scheduling, accelerator-metrics]
"""
)


def plan_for(*phases: str, recipe=RECIPE, skips=(), config=EMPTY_CONFIG):  # type: ignore[no-untyped-def]
    return build(recipe, load_catalog(), phases=resolve_phases(phases), skip_checks=skips,
                 config=config, source="r.yaml")


@pytest.mark.parametrize(
    ("flags", "phases"),
    [
        ((), ["deployment", "performance", "conformance"]),
        (("all",), ["deployment", "performance", "conformance"]),
        (("conformance", "deployment"), ["deployment", "conformance"]),
        (("performance", "all"), ["deployment", "performance", "conformance"]),
    ],
    ids=["default", "all", "order-is-fixed", "all-wins"],
)
def test_phases_run_in_fixed_order(flags: tuple[str, ...], phases: list[str]) -> None:
    assert [p.phase.value for p in plan_for(*flags).phases] == phases


def test_unrequested_phases_are_absent() -> None:
    assert plan_for("conformance").check_names == [
        "platform-health", "dra-support", "gang-scheduling", "accelerator-metrics"
    ]


def test_timeouts_catalog_recipe_config_precedence() -> None:
    config = parse_config(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\n"
        "spec: {validate: {checks: {operator-health: {timeout: 7m}}}}\n"
    )
    plan = plan_for(config=config)
    by_name = {c.name: c for c in plan.checks}
    assert by_name["operator-health"].timeout == timedelta(minutes=7)  # config
    assert by_name["nccl-all-reduce-bw"].timeout == timedelta(minutes=45)  # recipe phase
    assert by_name["check-nvidia-smi"].timeout == timedelta(minutes=10)  # catalog


def test_each_planned_check_carries_the_gpus_its_catalog_entry_declares() -> None:
    plan = plan_for("conformance")
    assert {c.name: str(c.gpus) for c in plan.checks if c.gpus} == {
        "dra-support": "1 GPU in all", "gang-scheduling": "2 GPUs in all",
        "accelerator-metrics": "1 GPU in all"}
    deployment = {c.name: str(c.gpus) for c in plan_for().checks
                  if c.gpus and c.phase == Phase.DEPLOYMENT}  # fmt: skip
    assert deployment == {"check-nvidia-smi": "every free GPU"}


GANG_CONFIG = """kind: ValidateConfig
apiVersion: aicr.nvidia.com/v1alpha1
spec:
  validate:
    checks:
      gang-scheduling:
        params:
          observeSeconds: 5
          size: {size}
"""


def gang_plan(size: object):  # type: ignore[no-untyped-def]
    from aicr.config import ValidateConfig
    from aicr.document import validate
    from aicr.yaml_io import parse

    lines = parse(GANG_CONFIG.format(size=size), "c.yaml")
    return build(RECIPE, load_catalog(), phases=resolve_phases(["conformance"]),
                 config=validate(ValidateConfig, lines), source="r.yaml", config_lines=lines)


def test_a_need_that_names_a_param_is_counted_with_the_checks_effective_params() -> None:
    gang = next(c for c in gang_plan(5).checks if c.name == "gang-scheduling")
    assert (str(gang.gpus), gang.reserves) == ("5 GPUs in all", "5 GPUs in all (params.size)")
    default = next(c for c in plan_for("conformance").checks if c.name == "gang-scheduling")
    assert default.reserves == "2 GPUs in all (params.size)"  # the param's default


@pytest.mark.parametrize(("size", "message"), [
    (40, "c.yaml:9: spec.validate.checks.gang-scheduling.params.size: input should be less than "
         "or equal to 16, got 40"),
    ("two", "c.yaml:9: spec.validate.checks.gang-scheduling.params.size: input should be a "
            "valid integer, unable to parse string as an integer, got 'two'"),
])  # fmt: skip
def test_a_bad_param_that_counts_gpus_is_an_input_error_at_its_line(
    size: object, message: str
) -> None:
    with pytest.raises(InputError) as exc:
        gang_plan(size)
    assert [str(p) for p in exc.value.problems] == [message]
    assert exc.value.exit_code == 2


def test_skip_check_is_recorded_with_reason() -> None:
    plan = plan_for("conformance", skips=("dra-support",))
    skipped = {c.name: c.skip_reason for c in plan.checks if c.skip_reason}
    assert skipped == {"dra-support": "skipped by --skip-check"}


@pytest.mark.parametrize(
    ("recipe", "phases", "skips", "messages"),
    [
        ("validation: {conformance: {checks: [dra-suport]}}", ("conformance",), (),
         ["r.yaml: validation.conformance.checks[0]: unknown check 'dra-suport' "
          "(did you mean 'dra-support'?)"]),
        ("validation: {deployment: {checks: [dra-support]}}", ("deployment",), (),
         ["r.yaml: validation.deployment.checks[0]: check 'dra-support' belongs to the "
          "conformance phase (move it to validation.conformance.checks)"]),
        ("validation: {conformance: {checks: [dra-support, dra-support]}}", ("all",), (),
         ["r.yaml: validation.conformance.checks[1]: check 'dra-support' is listed twice"]),
        ("validation: {conformance: {checks: [dra-support]}}", ("all",), ("gang-scheduling",),
         ["--skip-check gang-scheduling: the check is not in the plan for the requested phases"]),
        ("validation: {conformance: {checks: [dra-support]}}", ("all",), ("nope",),
         ["command line: --skip-check: unknown check 'nope' (valid checks: "
          + ", ".join(c.name for c in load_catalog().checks) + ")"]),
        ("validation: {conformance: {checks: [dra-support]}}", ("deployment",), (),
         ["r.yaml: validation: the recipe declares no checks for the requested phase(s): "
          "deployment (list checks under validation.<phase>.checks)"]),
        ("{}", ("all",), (),
         ["r.yaml: validation: the recipe declares no checks for the requested phase(s): "
          "deployment, performance, conformance (list checks under validation.<phase>.checks)"]),
    ],
    ids=["unknown-with-hint", "wrong-phase", "duplicate", "skip-not-planned", "skip-unknown",
         "requested-phase-empty", "no-checks-at-all"],
)
def test_bad_plans_are_input_errors(
    recipe: str, phases: tuple[str, ...], skips: tuple[str, ...], messages: list[str]
) -> None:
    with pytest.raises(InputError) as exc:
        plan_for(*phases, recipe=parse_recipe(recipe), skips=skips)
    assert [str(p) for p in exc.value.problems] == messages
    assert exc.value.exit_code == 2


def test_unknown_checks_raise_unknown_check_error() -> None:
    with pytest.raises(UnknownCheckError):
        plan_for(recipe=parse_recipe("validation: {conformance: {checks: [x]}}"))


def test_empty_phase_among_others_is_a_warning() -> None:
    plan = plan_for(recipe=parse_recipe("validation: {conformance: {checks: [dra-support]}}"))
    assert plan.warnings == [
        "the recipe declares no deployment checks; phase not run",
        "the recipe declares no performance checks; phase not run",
    ]
    assert [p.phase.value for p in plan.phases] == ["conformance"]
