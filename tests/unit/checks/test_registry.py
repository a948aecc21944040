"""Phase folders hold only checks; shared helpers live directly under aicr/checks/."""

from __future__ import annotations

import pkgutil
from importlib import resources

import pytest
from pydantic.alias_generators import to_snake

import aicr.checks
from aicr.catalog import load_catalog, params, registry
from aicr.checks import CheckParams
from aicr.errors import SchemaError
from aicr.phases import Phase


def test_every_module_in_a_phase_folder_is_a_catalog_check_of_that_phase() -> None:
    catalog = load_catalog()
    for phase in Phase:
        folder = resources.files("aicr.checks").joinpath(phase.value)
        for info in pkgutil.iter_modules([str(folder)]):
            spec = catalog.get(info.name.replace("_", "-"))
            assert spec is not None and spec.phase == phase, (
                f"aicr/checks/{phase.value}/{info.name} is not a {phase.value} check: "
                "shared code belongs directly under aicr/checks/"
            )
            assert registry.module_name(spec).endswith(info.name)


def test_shared_helpers_are_never_found_as_checks() -> None:
    helpers = {m.name for m in pkgutil.iter_modules(aicr.checks.__path__) if not m.ispkg}
    assert {"probes", "smi_probes", "components", "probe_pods", "steps"} <= helpers
    assert not helpers & {p.value for p in Phase}


def test_params_models_extend_the_shared_base() -> None:
    for spec in load_catalog().checks:
        model = params.find_params(spec)
        assert model is None or issubclass(model, CheckParams), spec.name


def test_every_image_override_is_the_param_its_catalog_entry_names_and_only_that() -> None:
    """The catalog entry declares the image params; Params never writes one of its own."""
    for spec in load_catalog().checks:
        named = {p for p in spec.images.values() if p}
        model = params.params_model(spec.name)
        overrides = {f.alias or n for n, f in model.model_fields.items() if n.endswith("image")}
        assert overrides == named, spec.name
        for name in overrides:
            field = model.model_fields[to_snake(name)]
            assert str(field.description).endswith("(used as given, no mirror rewrite)."), name
        own = params.find_params(spec)
        assert not [n for n in (own.model_fields if own else {}) if n.endswith("image")], spec.name


def test_an_image_param_is_validated_like_any_param() -> None:
    got = params.check_params("robust-controller", {"image": "r/ray:1", "dynamoImage": "r/d:2"},
                              None)
    assert (got.image, got.dynamo_image) == ("r/ray:1", "r/d:2")  # type: ignore[attr-defined]
    with pytest.raises(SchemaError, match="at least 1 character"):
        params.check_params("robust-controller", {"image": ""}, None)


def test_params_and_preflight_are_declared_in_params_py_only() -> None:
    """What the orchestrator reads is in the check's params.py; the check module may only
    re-export it, so a Params or preflight written in the check's own code is never ignored."""
    for spec in load_catalog().checks:
        declared = registry.declaration(spec)
        module = registry.check_module(spec)
        for name in ("Params", "preflight"):
            theirs = getattr(module, name, None)
            assert theirs is None or theirs is getattr(declared, name, None), (spec.name, name)


def test_a_declaration_is_the_module_the_check_package_imports() -> None:
    spec = load_catalog().get("dra-support")
    assert spec is not None
    declared = registry.declaration(spec)
    from aicr.checks.conformance import dra_support as check

    assert declared is not None and check.Params is declared.Params
    assert declared.__name__ == "aicr.checks.conformance.dra_support.params"
    assert issubclass(params.params_model("dra-support"), declared.Params)


def test_a_check_without_params_py_declares_nothing() -> None:
    spec = load_catalog().get("platform-health")
    assert spec is not None and registry.declaration(spec) is None
    assert params.params_model("platform-health") is CheckParams
    assert params.find_preflight(spec) is None
