"""Whole-GPU allocation mode resolution: overrides, values files, defaults, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr.checks.allocation import AllocationMode, Resolution, resolve_mode
from aicr.cli.main import run as aicr_main
from aicr.errors import InvalidRequestError
from aicr.recipe.load import parse_recipe

ROOT = Path(__file__).parents[3]
BAD = ROOT / "tests/data/bad"


def recipe(plugin: object = None, gpus: object = None, override: object = None,
           dra: bool = True, values: str | None = None) -> str:  # fmt: skip
    op = ""
    if plugin is not None:
        op = f"  overrides: {{devicePlugin: {{enabled: {str(plugin).lower()}}}}}\n"
    text = "componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n" + op
    if values:
        text += f"  valuesFile: {values}\n"
    if dra:
        text += "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver\n  overrides:\n"
        text += "    x: 1\n"
        if gpus is not None:
            text += f"    resources: {{gpus: {{enabled: {str(gpus).lower()}}}}}\n"
        if override is not None:
            text += f"    gpuResourcesEnabledOverride: {str(override).lower()}\n"
    return text


MODES = [
    (recipe(True, False, False), AllocationMode.DEVICE_PLUGIN),
    (recipe(None, False), AllocationMode.DEVICE_PLUGIN),  # chart default devicePlugin=true
    (recipe(True, dra=False), AllocationMode.DEVICE_PLUGIN),
    (recipe(False, True, True), AllocationMode.DRA),
]


@pytest.mark.parametrize(("text", "mode"), MODES, ids=["dp", "dp-default", "dp-no-dra", "dra"])
def test_resolves_one_advertiser(text: str, mode: AllocationMode) -> None:
    res = resolve_mode(parse_recipe(text), None)
    assert res.mode == mode
    assert Resolution.from_json(res.as_json()) == res


REFUSED = [
    (recipe(True, True, True), "whole GPUs are advertised twice, by the device plugin and by DRA: "
     "gpu-operator devicePlugin.enabled=true (recipe overrides); nvidia-dra-driver-gpu "
     "resources.gpus.enabled=true (recipe overrides); nvidia-dra-driver-gpu "
     "gpuResourcesEnabledOverride=true (recipe overrides)"),
    (recipe(False, True), "nvidia-dra-driver-gpu is partially flipped: nvidia-dra-driver-gpu "
     "resources.gpus.enabled=true (recipe overrides) but nvidia-dra-driver-gpu "
     "gpuResourcesEnabledOverride=false (chart default)"),
    (recipe(False, False, True), "nvidia-dra-driver-gpu is partially flipped"),
    (recipe(None), "nvidia-dra-driver-gpu resources.gpus.enabled=true (chart default) but"),
    (recipe(False, False, False), "no component advertises whole GPUs: gpu-operator "
     "devicePlugin.enabled=false (recipe overrides)"),
    (recipe(False, dra=False), "nvidia-dra-driver-gpu resources.gpus.enabled=false "
     "(component not in the recipe)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"), REFUSED,
    ids=["dual", "partial-no-override", "partial-override-only", "dra-defaults", "none", "no-dra"],
)
def test_refuses_ambiguous_recipes(text: str, message: str) -> None:
    with pytest.raises(InvalidRequestError) as err:
        resolve_mode(parse_recipe(text), None, "r.yaml")
    assert message in str(err.value)
    assert str(err.value).startswith("r.yaml: ")


def test_values_file_is_read_from_data_dir(tmp_path: Path) -> None:
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu/values.yaml").write_text("devicePlugin:\n  enabled: false\n")
    text = recipe(None, True, True, values="gpu/values.yaml")
    res = resolve_mode(parse_recipe(text), str(tmp_path))
    assert res.mode == AllocationMode.DRA
    assert str(res.settings[0]) == (
        "gpu-operator devicePlugin.enabled=false (values file gpu/values.yaml)"
    )
    assert res.notes == ()
    # without --data the values file is not consulted, and the evidence says so
    with pytest.raises(InvalidRequestError, match="advertised twice"):
        resolve_mode(parse_recipe(text), None)


def test_overrides_win_over_values_file(tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text("devicePlugin: {enabled: false}\n")
    res = resolve_mode(parse_recipe(recipe(True, False, values="v.yaml")), str(tmp_path))
    assert res.mode == AllocationMode.DEVICE_PLUGIN


def test_non_boolean_value_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text("devicePlugin: {enabled: 'yes'}\n")
    with pytest.raises(InvalidRequestError) as err:
        resolve_mode(parse_recipe(recipe(None, False, values="v.yaml")), str(tmp_path))
    assert str(err.value) == (
        f"{tmp_path}/v.yaml: devicePlugin.enabled: devicePlugin.enabled must be true or false, "
        "got 'yes'"
    )


@pytest.mark.parametrize(
    "path", sorted((ROOT / "recipes").glob("*.yaml")), ids=lambda p: p.name
)
def test_example_recipes_resolve_by_accelerator(path: Path) -> None:
    want = AllocationMode.DRA if path.name.startswith("gb200") else AllocationMode.DEVICE_PLUGIN
    assert resolve_mode(parse_recipe(path.read_text()), None).mode == want
    # with the shipped values files as --data: every file is read, and the mode is the same
    assert resolve_mode(parse_recipe(path.read_text()), str(ROOT / "recipes")).mode == want


CLI = [
    (["-r", f"{BAD}/recipe-dual-advertiser.yaml"],
     f"{BAD}/recipe-dual-advertiser.yaml: whole GPUs are advertised twice"),
    (["-r", f"{BAD}/recipe-partial-dra.yaml"],
     f"{BAD}/recipe-partial-dra.yaml: componentRefs[1].overrides: nvidia-dra-driver-gpu is "
     "partially flipped"),
    (["-r", f"{BAD}/recipe-values-file-missing.yaml", "--data", str(BAD)],
     f"{BAD}/recipe-values-file-missing.yaml: componentRefs[0].valuesFile: values file "
     f"components/gpu-operator/values.yaml is not in --data {BAD}"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), CLI, ids=["dual", "partial", "missing-values"])
def test_validate_refuses_before_any_cluster_work(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the cluster was contacted")

    monkeypatch.setattr("aicr.kube.target.api_client", refuse)
    code = aicr_main(["validate", "--phase", "deployment", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
