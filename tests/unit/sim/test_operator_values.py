"""The GPU Operator's ClusterPolicy, device-plugin config and RuntimeClass, rendered from values.

As gpu-operator v25.10.1's templates/clusterpolicy.yaml and plugin_config.yaml render
them: the chart's defaults, the recipe's values file, its overrides; the scenarios say
values, never a hand-written ClusterPolicy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from simcluster.gpu import operator_values as ov
from simcluster.gpu import sharing
from simcluster.scenarios import named

KIND = {"devicePlugin": {"enabled": True}, "cdi": {"enabled": True}}  # kind-inference.yaml


def test_the_demo_recipes_values_leave_driver_and_toolkit_to_the_host() -> None:
    spec = ov.cluster_policy(ov.values(ov.DEFAULT_VALUES_FILE, KIND))["spec"]
    assert {k: spec[k]["enabled"] for k in ("driver", "toolkit", "devicePlugin", "gfd",
                                            "dcgmExporter", "dcgm", "migManager")} == {
        "driver": False, "toolkit": False, "devicePlugin": True, "gfd": True,
        "dcgmExporter": True, "dcgm": False, "migManager": True}  # fmt: skip
    # chart defaults where the values say nothing: MIG manager on, its layout all-disabled
    assert spec["mig"] == {"strategy": "single"}
    assert spec["migManager"]["config"] == {"name": "", "default": "all-disabled"}
    assert spec["operator"] == {"runtimeClass": "nvidia"}
    assert "config" not in spec["devicePlugin"]  # rendered only with a config name


def test_an_unshared_policy_reads_as_whole_gpus() -> None:
    policy = ov.cluster_policy(ov.values(None, KIND))
    assert sharing.resolve(policy, {}, {}) == sharing.Sharing()


def test_the_device_plugin_config_is_created_from_its_data() -> None:
    data = {"any": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                   "    - name: nvidia.com/gpu\n      replicas: 4\n"}  # fmt: skip
    over = {"devicePlugin": {"config": {"create": True, "name": "ts", "default": "any",
                                        "data": data}}}  # fmt: skip
    v = ov.values(None, over)
    assert ov.plugin_config_map(v) == {"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": "ts", "namespace": "gpu-operator"},
                                       "data": data}  # fmt: skip
    policy = ov.cluster_policy(v)
    assert policy["spec"]["devicePlugin"]["config"] == {"name": "ts", "default": "any"}
    assert sharing.resolve(policy, data, {}).replicas == 4
    # without create (a ConfigMap the user made) the chart makes none
    over["devicePlugin"]["config"]["create"] = False
    assert ov.plugin_config_map(ov.values(None, over)) is None


def test_the_runtime_class_is_named_by_the_values() -> None:
    v = ov.values(None, {"operator": {"runtimeClass": "nvidia-container-runtime"}})
    assert ov.runtime_class(v) == {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                   "metadata": {"name": "nvidia-container-runtime"},
                                   "handler": "nvidia-container-runtime"}  # fmt: skip


@pytest.mark.parametrize(("scenario", "want"), [
    ("gpu-platform", sharing.Sharing()),
    ("gpu-sharing-time-slicing", sharing.Sharing(strategy="time-slicing", replicas=4)),
    ("gpu-sharing-mig", sharing.Sharing(mig_strategy="single", mig_config="all-1g.10gb")),
])  # fmt: skip
def test_each_scenarios_sharing_comes_from_its_values(scenario: str, want: object) -> None:
    docs = named.load(scenario).manifests
    policy = next(d for d in docs if d["kind"] == "ClusterPolicy")
    configs = next((d["data"] for d in docs if d["kind"] == "ConfigMap"
                    and d["metadata"]["name"] == (policy["spec"]["devicePlugin"].get("config")
                                                  or {}).get("name")), {})  # fmt: skip
    assert sharing.resolve(policy, configs, {}) == want


def test_a_scenario_may_not_both_render_and_write_a_cluster_policy(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:  # fmt: skip
    (tmp_path / "both.yaml").write_text(yaml.safe_dump_all([
        {"kind": "Scenario", "name": "both", "gpuOperator": {}},
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
         "metadata": {"name": "cluster-policy"}}]))  # fmt: skip
    (tmp_path / "typo.yaml").write_text(
        yaml.safe_dump_all([{"kind": "Scenario", "name": "typo", "gpuOperator": {"override": {}}}])
    )
    monkeypatch.setattr(named, "SCENARIOS", tmp_path)
    with pytest.raises(named.ScenarioError, match="a ClusterPolicy document beside gpuOperator"):
        named.load("both")
    with pytest.raises(named.ScenarioError, match="gpuOperator: unknown key 'override'"):
        named.load("typo")
