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
