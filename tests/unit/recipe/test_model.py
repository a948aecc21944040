from __future__ import annotations

from pathlib import Path

import pytest

from aicr.errors import FileFormatError, SchemaError
from aicr.phases import Phase
from aicr.recipe.load import load_recipe, parse_recipe

REPO = Path(__file__).resolve().parents[3]
EVERY_FIELD = REPO / "tests/data/aicr/every-field-recipe.yaml"
SHIPPED = sorted((REPO / "recipes").glob("*.yaml"))


@pytest.mark.parametrize("path", [EVERY_FIELD, *SHIPPED], ids=lambda p: p.stem)
def test_aicr_shaped_recipes_load_as_they_are(path: Path) -> None:
    recipe = load_recipe(str(path))
    assert recipe.kind == "RecipeResult"
    assert recipe.component_refs, "each example declares components"


def test_the_shipped_examples_are_found() -> None:
    assert len(SHIPPED) >= 5


def test_every_aicr_field_is_read() -> None:
    recipe = load_recipe(str(EVERY_FIELD))
    assert recipe.criteria is not None and recipe.criteria.accelerator == "h100"
    assert recipe.criteria.nodes is None
    assert recipe.checks(Phase.PERFORMANCE) == ["nccl-all-reduce-bw"]
    gpu_operator = recipe.component("gpu-operator")
    assert gpu_operator is not None and gpu_operator.overrides == {
        "cdi": {"enabled": True}, "gdrcopy": {"enabled": True}
    }
    assert [c.name for c in recipe.constraints][:2] == ["K8s.server.version", "OS.release.ID"]
    assert [(c.name, c.is_enabled) for c in recipe.component_refs][-2:] == [
        ("skyhook-operator", False), ("kai-scheduler", False)]
    assert recipe.metadata is not None and recipe.metadata.constraint_warnings


def test_phase_without_checks_key_is_none_not_empty() -> None:
    recipe = parse_recipe("validation:\n  deployment:\n    timeout: 5m\n")
    assert recipe.checks(Phase.DEPLOYMENT) is None
    assert recipe.checks(Phase.CONFORMANCE) is None


@pytest.mark.parametrize(
    ("component", "enabled"),
    [
        ("{name: a}", True),
        ("{name: a, enabled: false}", False),
        ("{name: a, overrides: {enabled: false}}", False),
        ("{name: a, overrides: {enabled: true}}", True),
    ],
    ids=["default", "enabled-false", "overrides-enabled-false", "overrides-enabled-true"],
)
def test_component_enabled(component: str, enabled: bool) -> None:
    recipe = parse_recipe(f"componentRefs: [{component}]\n")
    assert recipe.component_refs[0].is_enabled is enabled


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("criteria:\n  acclerator: h100\n",
         "r.yaml:2: criteria: unknown key 'acclerator' (did you mean 'accelerator'?)"),
        ("componentRefs:\n  - namespace: x\n",
         "r.yaml:2: componentRefs[0].name: required field is missing"),
        ("constraints:\n  - name: a\n    value: '>= 1'\n    severity: fatal\n",
         "r.yaml:4: constraints[0].severity: input should be 'error' or 'warning', got 'fatal'"),
        ("kind: Recipe\n",
         "r.yaml:1: kind: input should be 'RecipeResult', got 'Recipe'"),
        ("validation:\n  conformance:\n    checks: platform-health\n",
         "r.yaml:3: validation.conformance.checks: input should be a valid list, "
         "got 'platform-health'"),
    ],
    ids=["typo-suggests", "missing-field", "bad-enum", "wrong-kind", "wrong-type"],
)
def test_schema_errors_name_file_line_and_path(text: str, message: str) -> None:
    with pytest.raises(SchemaError) as exc:
        parse_recipe(text, "r.yaml")
    assert str(exc.value) == message


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(SchemaError) as exc:
        parse_recipe("criteria: {foo: 1}\ncomponentRefs: [{}]\n", "r.yaml")
    assert len(exc.value.problems) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [1,\n", "r.yaml:2: malformed YAML"),
        ("- just\n- a list\n", "r.yaml:1: expected a YAML mapping at the top level, found list"),
        ("", "r.yaml:1: expected a YAML mapping at the top level, found an empty file"),
    ],
    ids=["malformed", "not-a-mapping", "empty"],
)
def test_unreadable_documents(text: str, message: str) -> None:
    with pytest.raises((FileFormatError, SchemaError)) as exc:
        parse_recipe(text, "r.yaml")
    assert str(exc.value).startswith(message)


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError) as exc:
        load_recipe(str(tmp_path / "nope.yaml"))
    assert str(exc.value) == f"{tmp_path / 'nope.yaml'}: file not found"
