"""`sim recipe`: what the shipped recipes' values render (names, selectors, rules, operands, GPU
mode), the recipes' expectedResources against that, and bad input exiting 2 before any work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.components import registry
from simcluster.components.base import Context, Manifest
from simcluster.components.prometheus import chart
from simcluster.scenarios import recipe
from simcluster.scenarios.named import ScenarioError

from aicr.checks import gpu_operator as op

RECIPES = Path(__file__).resolve().parents[3] / "recipes"
SHIPPED = sorted(p.name for p in RECIPES.glob("*.yaml"))
ADDRESSES = {"prometheus": "http://10.244.0.5:9090"}


def plan(name: str) -> recipe.Plan:
    return recipe.load(RECIPES / name, RECIPES)


# the components whose objects the recipe's values change (the others: the same whatever
# the recipe; prometheus-operator's values only name its Deployment, see chart.operator_name)
VALUE_TAKERS = ("prometheus", "prometheus-adapter", "dcgm-exporter")


def rendered(p: recipe.Plan) -> list[Manifest]:
    """Every object the plan renders from values: its own and its value-taking components',
    and the StatefulSet the operator makes of each Prometheus."""
    ctx = Context(frozenset(p.components), addresses=ADDRESSES, values=p.values,
                  releases=p.releases)  # fmt: skip
    docs = list(p.manifests)
    for c in p.resolved():
        if c.name in VALUE_TAKERS:
            docs += c.manifests(ctx)
    made = [{"kind": "StatefulSet", "metadata": {"name": f"prometheus-{d['metadata']['name']}",
             "namespace": d["metadata"]["namespace"]}}
            for d in docs if d["kind"] == "Prometheus"]  # fmt: skip
    return docs + made


def one(docs: list[Manifest], kind: str) -> Manifest:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def test_kind_inference_plays_what_the_sim_can_and_says_why_not_the_rest() -> None:
    p = plan("kind-inference.yaml")
    assert sorted(p.components) == ["dcgm-exporter", "kuberay", "prometheus",
                                    "prometheus-adapter", "prometheus-operator"]  # fmt: skip
    assert p.gpu_mode == "device-plugin"
    refused = {part.ref: part.not_played for part in p.parts if not part.played}
    assert sorted(refused) == ["cert-manager", "inference-extension", "kai-scheduler", "kgateway"]
    assert "module proxy" in refused["kai-scheduler"][0]
    assert all(why for whys in refused.values() for why in whys)
    # one report line per thing played or not, each naming its component
    assert all(line.split(" (", 1)[0] in {r.ref for r in p.parts} for line in p.lines())


@pytest.mark.parametrize("name", SHIPPED)
def test_the_prometheus_is_named_and_selects_as_the_chart_renders_the_values(name: str) -> None:
    # kube-prometheus-stack 82.8.0 with fullnameOverride: kube-prometheus,
    # serviceMonitorSelectorNilUsesHelmValues: false, podMonitor's left at the default true
    docs = rendered(plan(name))
    prom = one(docs, "Prometheus")
    assert prom["metadata"] == {"name": "kube-prometheus-prometheus", "namespace": "monitoring"}
    spec = prom["spec"]
    assert spec["serviceAccountName"] == "kube-prometheus-prometheus"
    assert spec["serviceMonitorSelector"] == {}
    assert spec["serviceMonitorNamespaceSelector"] == {}
    assert spec["podMonitorSelector"] == {"matchLabels": {"release": "kube-prometheus-stack"}}
    assert spec["podMonitorNamespaceSelector"] == {}
    assert spec["ruleSelector"] == {"matchLabels": {"release": "kube-prometheus-stack"}}
    # no annotation-based scraping: the values add no additionalScrapeConfigs
    assert "additionalScrapeConfigs" not in spec
    assert not [d for d in docs if d["kind"] in ("Secret", "ConfigMap")
                and d["metadata"]["name"].startswith("kube-prometheus")]  # fmt: skip
    assert "prometheus.io" not in yaml.safe_dump(prom)
    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    assert "kube-prometheus-prometheus" in services


@pytest.mark.parametrize(("spec", "release", "want"), [
    ({}, "kps", {"serviceMonitorSelector": {"matchLabels": {"release": "kps"}},
                 "podMonitorSelector": {"matchLabels": {"release": "kps"}}}),
    ({"serviceMonitorSelectorNilUsesHelmValues": False,
      "podMonitorSelectorNilUsesHelmValues": False}, "kps",
     {"serviceMonitorSelector": {}, "podMonitorSelector": {}}),
    ({"podMonitorSelector": {"matchLabels": {"team": "a"}}}, "kps",
     {"podMonitorSelector": {"matchLabels": {"team": "a"}}}),
    ({"podMonitorNamespaceSelector": {"matchLabels": {"x": "y"}}}, "kps",
     {"podMonitorNamespaceSelector": {"matchLabels": {"x": "y"}}}),
], ids=["defaults-select-the-release", "nil-uses-helm-values-off", "given-selector",
        "given-namespaces"])  # fmt: skip
def test_selectors_follow_the_chart_template(
    spec: dict[str, Any], release: str, want: dict[str, Any]
) -> None:
    got = chart.selectors(chart.values({"prometheus": {"prometheusSpec": spec}}), release)
    assert {k: got[k] for k in want} == want


def test_a_null_rule_selector_is_left_out_as_the_template_does() -> None:
    v = chart.values({"prometheus": {"prometheusSpec": {
        "ruleSelector": None, "ruleSelectorNilUsesHelmValues": False}}})  # fmt: skip
    assert "ruleSelector" not in chart.selectors(v, "r")
    assert chart.selectors(v, "r")["ruleNamespaceSelector"] == {}


def test_annotation_scraping_only_where_the_values_add_a_scrape_config(tmp_path: Path) -> None:
    job = {"job_name": "pods", "kubernetes_sd_configs": [{"role": "pod"}]}
    values = tmp_path / "components" / "kube-prometheus-stack" / "values.yaml"
    values.parent.mkdir(parents=True)
    values.write_text(yaml.safe_dump({"fullnameOverride": "kp", "prometheus": {
        "prometheusSpec": {"additionalScrapeConfigs": [job]}}}))  # fmt: skip
    f = tmp_path / "r.yaml"
    f.write_text(yaml.safe_dump({"kind": "RecipeResult", "componentRefs": [{
        "name": "mon", "chart": "kube-prometheus-stack", "namespace": "monitoring",
        "valuesFile": "components/kube-prometheus-stack/values.yaml"}]}))  # fmt: skip
    docs = rendered(recipe.load(f, tmp_path))
    secret = one(docs, "Secret")
    assert secret["metadata"] == {"name": "kp-prometheus-scrape-confg", "namespace": "monitoring"}
    assert yaml.safe_load(secret["stringData"]["additional-scrape-configs.yaml"]) == [job]
    prom = one(docs, "Prometheus")
    assert prom["metadata"]["name"] == "kp-prometheus"
    assert prom["spec"]["additionalScrapeConfigs"] == {
        "name": "kp-prometheus-scrape-confg", "key": "additional-scrape-configs.yaml"}
    # release "mon" lacks the chart's name: the selectors select label release=mon
    assert prom["spec"]["podMonitorSelector"] == {"matchLabels": {"release": "mon"}}


def test_the_operator_is_named_as_the_chart_names_it() -> None:
    v = chart.values({"fullnameOverride": "kube-prometheus"})
    assert chart.operator_name(v, "anything") == "kube-prometheus-operator"
    v = chart.values({"prometheusOperator": {"fullnameOverride": "po"}})
    assert chart.operator_name(v, "kube-prometheus-stack") == "po"


@pytest.mark.parametrize("name", SHIPPED)
def test_the_adapter_rules_are_exactly_the_values(name: str) -> None:
    values = yaml.safe_load((RECIPES / "components/prometheus-adapter/values.yaml").read_text())
    config = yaml.safe_load(one(rendered(plan(name)), "ConfigMap")["data"]["config.yaml"])
    assert config == {"rules": values["rules"]["custom"],
                      "externalRules": values["rules"]["external"]}  # fmt: skip


def _refs(name: str) -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load((RECIPES / name).read_text())
    return {r["name"]: r for r in doc["componentRefs"]}


def _values(ref: dict[str, Any]) -> dict[str, Any]:
    from simcluster.components.base import merge_values

    loaded = yaml.safe_load((RECIPES / ref["valuesFile"]).read_text()) or {}
    return merge_values(loaded, ref.get("overrides") or {})


@pytest.mark.parametrize("name", SHIPPED)
def test_the_gpu_operator_deploys_what_its_values_switch_on(name: str) -> None:
    docs = rendered(plan(name))
    v = _values(_refs(name)["gpu-operator"])
    policy = one(docs, "ClusterPolicy")
    assert policy["spec"]["devicePlugin"]["enabled"] is v["devicePlugin"]["enabled"]
    assert policy["spec"]["cdi"]["enabled"] is v["cdi"]["enabled"]
    assert policy["spec"]["driver"]["enabled"] is v["driver"]["enabled"]
    assert one(docs, "RuntimeClass")["metadata"]["name"] == "nvidia"
    deployed = {d["metadata"]["name"] for d in docs
                if d["kind"] == "DaemonSet" and d["metadata"]["namespace"] == "gpu-operator"}
    enabled = {o.app for o in op.OPERANDS if op.enabled(policy, o)}
    assert deployed == enabled
    # each operand on its own deploy label, as the operator's assets select
    for d in docs:
        if d["kind"] == "DaemonSet" and d["metadata"]["name"] in enabled - {"nvidia-dcgm-exporter"}:
            (key,) = d["spec"]["template"]["spec"]["nodeSelector"]
            assert key.startswith("nvidia.com/gpu.deploy.")


@pytest.mark.parametrize(("name", "mode", "gpu_class"), [
    ("kind-inference.yaml", "device-plugin", False),
    ("h100-eks-ubuntu-training.yaml", "device-plugin", False),
    ("gb200-eks-ubuntu-inference-dynamo.yaml", "dra", True),
    ("gb200-nvke-ubuntu-training.yaml", "dra", True),
], ids=["kind", "eks-h100", "eks-gb200", "nvke"])  # fmt: skip
def test_the_gpu_mode_and_device_classes_come_from_the_dra_values(
    name: str, mode: str, gpu_class: bool
) -> None:
    from simcluster.gpu import modes

    p = plan(name)
    assert p.gpu_mode == mode
    classes = {c["metadata"]["name"] for c in
               modes.device_classes(modes.dra_values(mode, p.dra_values))}  # fmt: skip
    assert ("gpu.nvidia.com" in classes) is gpu_class
    assert "compute-domain-daemon.nvidia.com" in classes  # computeDomains: the chart's default


def test_a_device_plugin_beside_dra_gpus_is_played_as_the_broken_dual_mode(tmp_path: Path) -> None:
    doc = yaml.safe_load((RECIPES / "kind-inference.yaml").read_text())
    dra = next(r for r in doc["componentRefs"] if r["name"] == "nvidia-dra-driver-gpu")
    dra["overrides"]["resources"]["gpus"]["enabled"] = True
    f = tmp_path / "r.yaml"
    f.write_text(yaml.safe_dump(doc))
    assert recipe.load(f, RECIPES).gpu_mode == "dual"


@pytest.mark.parametrize("name", SHIPPED)
def test_every_expected_resource_is_one_the_values_produce(name: str) -> None:
    p = plan(name)
    made = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])
            for d in rendered(p)}  # fmt: skip
    played = {part.ref for part in p.parts if part.played}
    for ref in _refs(name).values():
        if ref["name"] not in played:
            continue
        for r in ref.get("expectedResources") or []:
            assert (r["kind"], r["namespace"], r["name"]) in made, (ref["name"], r)


BAD = [
    ("kind: RecipeResult\ncomponentRefs: [{name: a}]\nvalidaton: {}\n",
     "r.yaml: validaton: unknown field (did you mean validation?)"),
    ("kind: RecipeResult\ncomponentRefs: [{name: a, valueFile: x.yaml}]\n",
     "r.yaml: componentRefs[0].valueFile: unknown field (did you mean valuesFile?)"),
    ("kind: RecipeResult\ncomponentRefs: [{name: a, valuesFile: components/a/values.yaml}]\n",
     "r.yaml: componentRefs[0].valuesFile: "),
    ("kind: RecipeResult\ncomponentRefs: [{name: a, overrides: [1]}]\n",
     "r.yaml: componentRefs[0].overrides: expected a mapping of Helm values"),
    ("kind: Recipe\ncomponentRefs: [{name: a}]\n", "r.yaml: kind: expected RecipeResult"),
    ("kind: RecipeResult\ncomponentRefs: []\n", "r.yaml: componentRefs: expected a non-empty list"),
    ("kind: RecipeResult\ncomponentRefs: [{name: p, chart: prometheus-adapter, "
     "overrides: {rules: {custom: {a: 1}}}}]\n",
     "r.yaml: componentRefs[0]: values rules.custom: expected a list"),
    ("kind: RecipeResult\ncomponentRefs: [{name: k, chart: kube-prometheus-stack, "
     "overrides: {prometheus: {prometheusSpec: {podMonitorSelector: [1]}}}}]\n",
     "r.yaml: componentRefs[0]: values prometheus.prometheusSpec.podMonitorSelector: "
     "expected a mapping"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), BAD, ids=[
    "top-level-typo", "ref-typo", "values-file-missing", "overrides-not-a-mapping", "kind",
    "no-refs", "adapter-rules-type", "selector-type"])  # fmt: skip
def test_bad_input_names_file_and_field_and_exits_2(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    f = tmp_path / "r.yaml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        recipe.load(f, tmp_path)
    assert str(e.value).startswith(f"{f}: {message.split(': ', 1)[1]}")
    monkeypatch.setattr(Sim, "is_up", lambda self: pytest.fail("no cluster work on bad input"))
    assert main(["recipe", str(f), "--data", str(tmp_path)], Sim(tmp_path / "run")) == 2
    out = capsys.readouterr()
    assert out.err == f"sim recipe: {e.value}\n"
    assert out.out == ""


def test_a_missing_recipe_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recipe", str(tmp_path / "none.yaml")], Sim(tmp_path / "run")) == 2
    assert "cannot read" in capsys.readouterr().err


def test_disabled_components_are_left_out(tmp_path: Path) -> None:
    doc = yaml.safe_load((RECIPES / "kind-inference.yaml").read_text())
    for r in doc["componentRefs"]:
        if r["name"] == "kuberay-operator":
            r["enabled"] = False
    f = tmp_path / "r.yaml"
    f.write_text(yaml.safe_dump(doc))
    p = recipe.load(f, RECIPES)
    assert "kuberay" not in p.components
    assert "kuberay-operator" not in {part.ref for part in p.parts}


def test_every_component_a_recipe_plays_is_registered() -> None:
    for name in SHIPPED:
        assert set(plan(name).components) <= set(registry.BY_NAME)


@pytest.mark.parametrize(("selector", "labels", "want"), [
    ({}, {"app": "x"}, True),
    ({"matchLabels": {"release": "kps"}}, {"app": "x"}, False),
    ({"matchLabels": {"release": "kps"}}, {"release": "kps", "app": "x"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": "1"}, None),
], ids=["empty-selects-all", "label-missing", "label-matches",
        "expressions-not-judged"])  # fmt: skip
def test_which_monitors_the_prometheus_selects(
    selector: dict[str, Any], labels: dict[str, str], want: bool | None
) -> None:
    assert recipe.selected(selector, labels) is want
