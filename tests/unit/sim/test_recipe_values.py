"""The example recipes' expectedResources are the names their values files render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from simcluster.components import prometheus

RECIPES = Path(__file__).resolve().parents[3] / "recipes"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def stack_refs() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(RECIPES.glob("*.yaml")):
        for ref in yaml.safe_load(path.read_text())["componentRefs"]:
            if ref["name"] == prometheus.CHART:
                found.append((path.name, ref))
    return found


@pytest.mark.parametrize(("recipe", "ref"), stack_refs(), ids=[r for r, _ in stack_refs()])
def test_the_expected_prometheus_statefulset_is_what_the_values_name(
    recipe: str, ref: dict[str, Any]
) -> None:
    values = yaml.safe_load((RECIPES / ref["valuesFile"]).read_text()) or {}
    values = _merge(values, ref.get("overrides") or {})
    expected = {r["name"] for r in ref.get("expectedResources") or [] if r["kind"] == "StatefulSet"}
    assert expected == {f"prometheus-{prometheus.prometheus_name(values, ref['name'])}"}


@pytest.mark.parametrize(("values", "release", "name"), [
    ({}, "kube-prometheus-stack", "kube-prometheus-stack-prometheus"),
    ({}, "monitoring", "monitoring-kube-prometheus-prometheus"),  # cut to 26, then -prometheus
    ({"fullnameOverride": "kube-prometheus"}, "anything", "kube-prometheus-prometheus"),
    ({"fullnameOverride": "kp", "cleanPrometheusOperatorObjectNames": True}, "x", "kp"),
], ids=["release-has-the-chart-name", "release-prefix-truncated", "fullname-override",
        "clean"])  # fmt: skip
def test_the_chart_names_its_prometheus(values: dict[str, Any], release: str, name: str) -> None:
    assert prometheus.prometheus_name(values, release) == name


def every_ref() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, ref) for path in sorted(RECIPES.glob("*.yaml"))
            for ref in yaml.safe_load(path.read_text())["componentRefs"]]  # fmt: skip


@pytest.mark.parametrize(("recipe", "ref"), every_ref(),
                         ids=[f"{r}:{ref['name']}" for r, ref in every_ref()])  # fmt: skip
def test_every_values_file_a_recipe_references_ships_and_is_a_mapping(
    recipe: str, ref: dict[str, Any]
) -> None:
    path = RECIPES / ref["valuesFile"]
    assert path.is_file(), f"{recipe}: {ref['name']} references {ref['valuesFile']}"
    assert isinstance(yaml.safe_load(path.read_text()), dict)


def operator_refs() -> list[tuple[str, dict[str, Any]]]:
    return [(r, ref) for r, ref in every_ref() if ref["name"] == "gpu-operator"]


@pytest.mark.parametrize(("recipe", "ref"), operator_refs(), ids=[r for r, _ in operator_refs()])
def test_the_expected_operands_are_those_the_values_enable(
    recipe: str, ref: dict[str, Any]
) -> None:
    values = yaml.safe_load((RECIPES / ref["valuesFile"]).read_text()) or {}
    values = _merge(values, ref.get("overrides") or {})
    expected = {r["name"] for r in ref.get("expectedResources") or [] if r["kind"] == "DaemonSet"}
    on = {"nvidia-dcgm-exporter": values["dcgmExporter"]["enabled"],
          "nvidia-device-plugin-daemonset": values["devicePlugin"]["enabled"]}  # fmt: skip
    assert expected == {name for name, enabled in on.items() if enabled}
    deployments = {r["name"] for r in ref["expectedResources"] if r["kind"] == "Deployment"}
    assert deployments == {values["fullnameOverride"]}


def test_the_dra_driver_root_is_where_the_operator_puts_the_driver() -> None:
    for path in sorted(RECIPES.glob("*.yaml")):
        refs = {r["name"]: r for r in yaml.safe_load(path.read_text())["componentRefs"]}
        op, drv = refs["gpu-operator"], refs["nvidia-dra-driver-gpu"]
        operator = _merge(yaml.safe_load((RECIPES / op["valuesFile"]).read_text()),
                          op.get("overrides") or {})  # fmt: skip
        driver = _merge(yaml.safe_load((RECIPES / drv["valuesFile"]).read_text()),
                        drv.get("overrides") or {})  # fmt: skip
        root = "/run/nvidia/driver" if operator["driver"]["enabled"] else "/"
        assert driver["nvidiaDriverRoot"] == root, path.name
