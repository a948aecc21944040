"""The sim's DRA DeviceClasses are the ones nvidia-dra-driver-gpu renders from the values.

Each GPU mode is one of the recipes' DRA driver configurations (whole GPUs through
DRA on or off); the classes come from the chart's templates, not from a constant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from simcluster.components.base import merge_values
from simcluster.gpu import modes

RECIPES = Path(__file__).resolve().parents[3] / "recipes"
GPU_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == "
CD_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
          "device.attributes['compute-domain.nvidia.com'].type == ")  # fmt: skip
# nvidia-dra-driver-gpu 25.12.0 templates/deviceclass-*.yaml, rendered at resource.k8s.io/v1
CHART = {
    "gpu.nvidia.com": {"selectors": [{"cel": {"expression": GPU_CEL + "'gpu'"}}],
                       "extendedResourceName": "nvidia.com/gpu"},
    "mig.nvidia.com": {"selectors": [{"cel": {"expression": GPU_CEL + "'mig'"}}]},
    "vfio.gpu.nvidia.com": {"selectors": [{"cel": {"expression": GPU_CEL + "'vfio'"}}]},
    "compute-domain-daemon.nvidia.com": {"selectors": [{"cel": {"expression":
        CD_CEL + "'daemon'"}}]},
    "compute-domain-default-channel.nvidia.com": {"selectors": [{"cel": {"expression": CD_CEL
        + "'channel' && device.attributes['compute-domain.nvidia.com'].id == 0"}}]},
}  # fmt: skip
COMPUTE_DOMAINS = ["compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"]


def _names(classes: list[dict[str, Any]]) -> list[str]:
    return [c["metadata"]["name"] for c in classes]


@pytest.mark.parametrize(("mode", "names"), [
    ("device-plugin", COMPUTE_DOMAINS),
    ("dra", ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com", *COMPUTE_DOMAINS]),
    ("dual", ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com", *COMPUTE_DOMAINS]),
])  # fmt: skip
def test_each_mode_has_the_classes_the_chart_renders(mode: modes.Mode, names: list[str]) -> None:
    classes = modes.device_classes(modes.dra_values(mode))
    assert _names(classes) == names
    for c in classes:
        assert c["apiVersion"] == "resource.k8s.io/v1"
        assert c["spec"] == CHART[c["metadata"]["name"]]


def test_values_decide_the_version_and_the_compute_domain_classes() -> None:
    beta = modes.device_classes(modes.dra_values("dra", {"resourceApiVersion":
                                                         "resource.k8s.io/v1beta1"}))  # fmt: skip
    assert {c["apiVersion"] for c in beta} == {"resource.k8s.io/v1beta1"}
    # the v1-only field is not rendered at the beta version
    assert "extendedResourceName" not in next(c for c in beta if c["metadata"]["name"] ==
                                              "gpu.nvidia.com")["spec"]  # fmt: skip
    off = {"resources": {"computeDomains": {"enabled": False}}}
    assert _names(modes.device_classes(modes.dra_values("device-plugin", off))) == []


def dra_refs() -> list[tuple[str, dict[str, Any], bool]]:
    out = []
    for path in sorted(RECIPES.glob("*.yaml")):
        refs = {r["name"]: r for r in yaml.safe_load(path.read_text())["componentRefs"]}
        plugin = (refs["gpu-operator"].get("overrides") or {})["devicePlugin"]["enabled"]
        out.append((path.name, refs["nvidia-dra-driver-gpu"], plugin))
    return out


@pytest.mark.parametrize(("recipe", "ref", "plugin"), dra_refs(), ids=[r for r, _, _ in dra_refs()])
def test_the_mode_of_each_recipe_renders_its_dra_values_classes(
    recipe: str, ref: dict[str, Any], plugin: bool
) -> None:
    given = yaml.safe_load((RECIPES / ref["valuesFile"]).read_text()) or {}
    theirs = merge_values(merge_values(modes.CHART_DEFAULTS, given), ref.get("overrides") or {})
    gpus = theirs["resources"]["gpus"]["enabled"]
    mode: modes.Mode = "dual" if plugin and gpus else "dra" if gpus else "device-plugin"
    assert modes.device_classes(modes.dra_values(mode)) == modes.device_classes(theirs)
