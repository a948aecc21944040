"""Every object the sim's components create, and what explains it.

Each object is explained by the real component (its chart or release files, cited in
the component's module and docs/development.md), by the recipes' values files, or it is
sim-only: then the entry says why the sim needs it and that no check depends on it
being there beyond what a real platform has. A new object without an entry fails;
so does an entry that no object matches any more (the list stays true).

Components whose manifests read their release files from the sim cache (Kueue,
KubeRay, Kubeflow's CRDs, prometheus-operator) are listed once the cache is built
(`make sim-build`); without it they cannot be rendered and are reported as such.
"""

from __future__ import annotations

import functools
import json
from fnmatch import fnmatch
from pathlib import Path

import pytest
from simcluster.components import registry
from simcluster.components.base import Context

CHART = "the real component's install (chart or release manifests)"
RELEASE = "the release's own manifests, verbatim (module files)"
VALUES = "recipes/components/<name>/values*.yaml, rendered as the chart does"
# (component, kind, name pattern) -> what explains the object; "sim-only: ..." says why
SOURCES: dict[tuple[str, str, str], str] = {
    # prometheus-adapter (chart 5.x templates)
    ("prometheus-adapter", "Namespace", "monitoring"): CHART,
    ("prometheus-adapter", "ServiceAccount", "monitoring/prometheus-adapter"): CHART,
    ("prometheus-adapter", "ClusterRole", "prometheus-adapter"): CHART,
    ("prometheus-adapter", "ClusterRoleBinding", "prometheus-adapter"): CHART,
    ("prometheus-adapter", "ClusterRoleBinding", "prometheus-adapter:system:auth-delegator"): CHART,
    ("prometheus-adapter", "RoleBinding", "kube-system/prometheus-adapter-auth-reader"): CHART,
    ("prometheus-adapter", "ClusterRole", "prometheus-adapter-server-resources"): CHART,
    ("prometheus-adapter", "ClusterRoleBinding", "prometheus-adapter-hpa-controller"): CHART,
    ("prometheus-adapter", "ClusterRole", "prometheus-adapter-external-metrics"): VALUES,
    (
        "prometheus-adapter",
        "ClusterRoleBinding",
        "prometheus-adapter-hpa-controller-external-metrics",
    ): VALUES,
    ("prometheus-adapter", "ConfigMap", "monitoring/prometheus-adapter"): VALUES,
    ("prometheus-adapter", "Service", "monitoring/prometheus-adapter"): CHART,
    ("prometheus-adapter", "Deployment", "monitoring/prometheus-adapter"): CHART,
    ("prometheus-adapter", "APIService", "v1beta1.custom.metrics.k8s.io"): CHART,
    ("prometheus-adapter", "APIService", "v1beta1.external.metrics.k8s.io"): VALUES,
    # Prometheus as kube-prometheus-stack lays it out
    ("prometheus", "Namespace", "monitoring"): CHART,
    ("prometheus", "ServiceAccount", "monitoring/kube-prometheus-stack-prometheus"): CHART,
    # ... and named from the recipes' values (fullnameOverride: kube-prometheus) by `sim recipe`
    ("prometheus", "ServiceAccount", "monitoring/kube-prometheus-prometheus"): VALUES,
    ("prometheus", "ClusterRole", "kube-prometheus-prometheus"): VALUES,
    ("prometheus", "ClusterRoleBinding", "kube-prometheus-prometheus"): VALUES,
    ("prometheus", "Prometheus", "monitoring/kube-prometheus-prometheus"): VALUES,
    ("prometheus", "ClusterRole", "kube-prometheus-stack-prometheus"): CHART,
    ("prometheus", "ClusterRoleBinding", "kube-prometheus-stack-prometheus"): CHART,
    ("prometheus", "Service", "monitoring/*"): CHART,
    ("prometheus", "Prometheus", "monitoring/kube-prometheus-stack-prometheus"): CHART,
    (
        "prometheus",
        "ConfigMap",
        "monitoring/kube-prometheus-stack-prometheus-config",
    ): "sim-only: without prometheus-operator the sim runs Prometheus from a plain "
    "configuration (annotation discovery); with the operator it is the chart's Prometheus "
    "object. Issue 33: kube-prometheus-stack ignores prometheus.io annotations",
    (
        "prometheus",
        "StatefulSet",
        "monitoring/prometheus-kube-prometheus-stack-prometheus",
    ): "sim-only: the StatefulSet prometheus-operator would make, made directly when the "
    "operator is not selected",
    # the GPU Operator's DCGM exporter operand
    ("dcgm-exporter", "Namespace", "gpu-operator"): CHART,
    ("dcgm-exporter", "ServiceAccount", "gpu-operator/nvidia-dcgm-exporter"): CHART,
    ("dcgm-exporter", "ClusterRole", "nvidia-dcgm-exporter"): CHART,
    ("dcgm-exporter", "ClusterRoleBinding", "nvidia-dcgm-exporter"): CHART,
    ("dcgm-exporter", "Service", "gpu-operator/nvidia-dcgm-exporter"): CHART,
    ("dcgm-exporter", "DaemonSet", "gpu-operator/nvidia-dcgm-exporter"): CHART,
    ("dcgm-exporter", "ServiceMonitor", "gpu-operator/nvidia-dcgm-exporter"): VALUES,
    # scheduler-plugins (chart layout)
    ("coscheduling", "Namespace", "scheduler-plugins"): CHART,
    ("coscheduling", "CustomResourceDefinition", "*"): RELEASE,
    ("coscheduling", "ServiceAccount", "scheduler-plugins/*"): CHART,
    ("coscheduling", "ClusterRole", "scheduler-plugins-*"): CHART,
    ("coscheduling", "ClusterRoleBinding", "scheduler-plugins-*"): CHART,
    ("coscheduling", "RoleBinding", "kube-system/scheduler-plugins-scheduler-auth-reader"): CHART,
    ("coscheduling", "ConfigMap", "scheduler-plugins/scheduler-config"): CHART,
    ("coscheduling", "Deployment", "scheduler-plugins/*"): CHART,
    # Karpenter with its KWOK provider
    ("karpenter", "CustomResourceDefinition", "*"): RELEASE,
    ("karpenter", "ServiceAccount", "kube-system/karpenter"): CHART,
    ("karpenter", "ClusterRole", "karpenter*"): CHART,
    ("karpenter", "ClusterRoleBinding", "karpenter*"): CHART,
    ("karpenter", "Role", "kube-node-lease/karpenter-lease"): CHART,
    ("karpenter", "Deployment", "kube-system/karpenter"): CHART,
    ("karpenter", "RoleBinding", "kube-node-lease/karpenter-lease"): CHART,
    (
        "karpenter",
        "ConfigMap",
        "kube-system/karpenter-instance-types",
    ): "sim-only: the KWOK provider's instance types (a cloud provider's API on EKS); the "
    "one type is the GPU node profile's",
    (
        "karpenter",
        "KWOKNodeClass",
        "default",
    ): "sim-only: the KWOK provider's node class, where EKS has an EC2NodeClass the "
    "platform's operator creates",
    (
        "karpenter",
        "NodePool",
        "gpu",
    ): "sim-only: until `sim recipe` plays Karpenter NodePools, the pool a platform's "
    "operator creates for GPU nodes (Karpenter's chart creates none)",
    # Gateway API, the Inference Extension's CRDs, Traefik
    ("gateway", "Namespace", "traefik"): CHART,
    ("gateway", "CustomResourceDefinition", "*"): RELEASE,
    ("gateway", "ValidatingAdmissionPolicy", "safe-upgrades.gateway.networking.k8s.io"): RELEASE,
    (
        "gateway",
        "ValidatingAdmissionPolicyBinding",
        "safe-upgrades.gateway.networking.k8s.io",
    ): RELEASE,
    ("gateway", "ServiceAccount", "traefik/traefik"): CHART,
    ("gateway", "ClusterRole", "traefik-gateway"): CHART,
    ("gateway", "ClusterRoleBinding", "traefik-gateway"): CHART,
    ("gateway", "ConfigMap", "traefik/traefik-dynamic"): CHART,
    ("gateway", "Deployment", "traefik/traefik"): CHART,
    ("gateway", "Service", "traefik/traefik"): CHART,
    ("gateway", "GatewayClass", "traefik"): CHART,
    (
        "gateway",
        "Gateway",
        "traefik/inference-gateway",
    ): "sim-only: the Gateway an inference platform's operator creates (gateway charts "
    "install a GatewayClass, not a Gateway); the check is told its name by params",
    (
        "gateway",
        "Secret",
        "traefik/gateway-api-key",
    ): "sim-only: the API key such a Gateway's operator sets up; given to the check as "
    "params.apiKey, as a user would",
    # KubeRay ray-operator's release (its webhook served with a certificate the install
    # issues, as cert-manager would for the chart)
    ("kuberay", "Namespace", "ray-system"): CHART,
    ("kuberay", "CustomResourceDefinition", "*.ray.io"): RELEASE,
    ("kuberay", "ServiceAccount", "ray-system/kuberay-operator"): CHART,
    ("kuberay", "ClusterRole", "kuberay-operator"): RELEASE,
    ("kuberay", "ClusterRoleBinding", "kuberay-operator"): CHART,
    ("kuberay", "Secret", "ray-system/kuberay-webhook-server-cert"): CHART,
    ("kuberay", "Service", "ray-system/kuberay-webhook-service"): RELEASE,
    ("kuberay", "Deployment", "ray-system/kuberay-operator"): CHART,
    (
        "kuberay",
        "ValidatingWebhookConfiguration",
        "kuberay-validating-webhook-configuration",
    ): RELEASE,
    # Kueue's release (manifests.yaml), its webhook served with a certificate the install issues
    ("kueue", "Namespace", "kueue-system"): RELEASE,
    ("kueue", "CustomResourceDefinition", "*.kueue.x-k8s.io"): RELEASE,
    ("kueue", "ServiceAccount", "kueue-system/kueue-controller-manager"): RELEASE,
    ("kueue", "ClusterRole", "kueue-manager-role"): RELEASE,
    ("kueue", "ClusterRoleBinding", "kueue-manager-role"): RELEASE,
    ("kueue", "Role", "kueue-system/kueue-manager-secrets-role"): RELEASE,
    ("kueue", "RoleBinding", "kueue-system/kueue-manager-secrets-role"): RELEASE,
    ("kueue", "Secret", "kueue-system/kueue-webhook-server-cert"): RELEASE,
    ("kueue", "ConfigMap", "kueue-system/kueue-manager-config"): RELEASE,
    ("kueue", "Service", "kueue-system/kueue-webhook-service"): RELEASE,
    ("kueue", "Deployment", "kueue-system/kueue-controller-manager"): RELEASE,
    ("kueue", "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"): RELEASE,
    ("kueue", "ValidatingWebhookConfiguration", "kueue-validating-webhook-configuration"): RELEASE,
    # prometheus-operator as kube-prometheus-stack deploys it (its module's CRDs and role)
    ("prometheus-operator", "Namespace", "monitoring"): CHART,
    ("prometheus-operator", "CustomResourceDefinition", "*.monitoring.coreos.com"): RELEASE,
    ("prometheus-operator", "ClusterRole", "prometheus-operator"): RELEASE,
    ("prometheus-operator", "ClusterRoleBinding", "kube-prometheus-stack-operator"): CHART,
    ("prometheus-operator", "ServiceAccount", "monitoring/kube-prometheus-stack-operator"): CHART,
    ("prometheus-operator", "Deployment", "monitoring/kube-prometheus-stack-operator"): CHART,
    ("prometheus-operator", "ClusterRoleBinding", "kube-prometheus-operator"): VALUES,
    ("prometheus-operator", "ServiceAccount", "monitoring/kube-prometheus-operator"): VALUES,
    ("prometheus-operator", "Deployment", "monitoring/kube-prometheus-operator"): VALUES,
    # Kubeflow's CRDs: the APIs served, nothing reconciling them (documented in the module)
    ("kubeflow-crds", "CustomResourceDefinition", "*.kubeflow.org"): RELEASE,
    # `sim recipe`: what the recipes' GPU Operator and DRA driver values render
    # (simcluster.gpu.operator_values, simcluster.scenarios.recipe)
    ("recipe", "Namespace", "gpu-operator"): CHART,
    ("recipe", "CustomResourceDefinition", "clusterpolicies.nvidia.com"): RELEASE,
    ("recipe", "Deployment", "gpu-operator/gpu-operator"): CHART,
    ("recipe", "ClusterPolicy", "cluster-policy"): VALUES,
    ("recipe", "RuntimeClass", "nvidia"): VALUES,
    ("recipe", "DaemonSet", "gpu-operator/*"): VALUES,  # the operands the values switch on
    ("recipe", "Namespace", "nvidia-dra-driver"): CHART,
    ("recipe", "Deployment", "nvidia-dra-driver/nvidia-dra-driver-gpu-controller"): VALUES,
}
RECIPES = Path(__file__).resolve().parents[3] / "recipes"
# the components whose objects `Context.values`/`releases` change (the others: as installed
# alone), and the chart whose values they read
TAKE_VALUES = {
    "prometheus": "kube-prometheus-stack",
    "prometheus-operator": "kube-prometheus-stack",
    "prometheus-adapter": "prometheus-adapter",
    "dcgm-exporter": "gpu-operator",
}
CACHED = ("kueue", "kuberay", "kubeflow-crds", "prometheus-operator")
SCENARIO = Path(__file__).resolve().parents[3] / "hack" / "sim" / "scenarios" / "gpu-platform.yaml"
# The gpu-platform scenario: the stack the example recipes install, shown running
SCENARIO_SOURCES: dict[tuple[str, str], str] = {
    ("Namespace", "cert-manager"): CHART,
    ("Namespace", "gpu-operator"): CHART,
    ("Namespace", "nvidia-dra-driver"): CHART,
    ("CustomResourceDefinition", "clusterpolicies.nvidia.com"): RELEASE,
    ("Deployment", "cert-manager/cert-manager"): CHART,
    ("Deployment", "gpu-operator/gpu-operator"): CHART,
    # the ClusterPolicy's operands (the GPU Operator makes them from the ClusterPolicy)
    ("DaemonSet", "gpu-operator/nvidia-device-plugin-daemonset"): CHART,
    ("DaemonSet", "gpu-operator/gpu-feature-discovery"): CHART,
    ("DaemonSet", "gpu-operator/nvidia-operator-validator"): CHART,
    ("Deployment", "nvidia-dra-driver/nvidia-dra-driver-gpu-controller"): VALUES,
    # rendered from the header's gpuOperator values (simcluster.gpu.operator_values)
    ("ClusterPolicy", "cluster-policy"): VALUES,
    ("RuntimeClass", "nvidia"): VALUES,  # the operator's, named by operator.runtimeClass
    (
        "RuntimeClass",
        "gvisor",
    ): "sim-only: a sandboxed runtime class (gVisor's runsc, as its install docs name the "
    "handler) for workload-sandboxing; no example recipe installs one",
}


@functools.cache
def _objects() -> tuple[list[tuple[str, str, str]], list[str]]:
    """(component, kind, ns/name) of every object each component creates, alone and (for
    one that follows others) with every component selected (Prometheus made by the
    operator), and the components that could not be rendered (release files not cached)."""
    addresses = {c.name: "http://10.244.0.5:9090" for c in registry.COMPONENTS}
    everything = frozenset(c.name for c in registry.COMPONENTS)
    found: set[tuple[str, str, str]] = set()
    unrendered: list[str] = []
    for comp in registry.COMPONENTS:
        rendered = False
        alone = frozenset({comp.name, *comp.requires})
        # a component that follows others (`after`) may make other objects beside them
        for selected in (alone, everything) if comp.after else (alone,):
            try:
                docs = comp.manifests(Context(selected, addresses=addresses))
            except (FileNotFoundError, StopIteration):
                continue
            rendered = True
            for d in docs:
                meta = d["metadata"]
                where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else (
                    meta["name"])  # fmt: skip
                found.add((comp.name, d["kind"], where))
        if not rendered:
            unrendered.append(comp.name)
    found |= _recipe_objects()
    return sorted(found), unrendered


def _recipe_objects() -> set[tuple[str, str, str]]:
    """What `sim recipe` installs for each shipped recipe: its components configured from the
    recipe's values (`recipe` for the objects it renders itself)."""
    from simcluster.scenarios import recipe

    found: set[tuple[str, str, str]] = set()
    seen: set[tuple[str, str]] = set()
    for path in sorted(RECIPES.glob("*.yaml")):
        plan = recipe.load(path, RECIPES)
        ctx = Context(frozenset(plan.components), addresses={"prometheus": "http://10.244.0.5:9090"},
                      values=plan.values, releases=plan.releases)  # fmt: skip
        made = [("recipe", d) for d in plan.manifests]
        for comp in plan.resolved():
            if comp.name not in TAKE_VALUES:
                continue  # rendered alone above: what it makes does not depend on values
            key = (comp.name, json.dumps(plan.values.get(TAKE_VALUES[comp.name]), sort_keys=True))
            if key in seen:
                continue  # the same values as another recipe's
            seen.add(key)
            try:
                made += [(comp.name, d) for d in comp.manifests(ctx)]
            except (FileNotFoundError, StopIteration):
                continue
        for name, d in made:
            meta = d["metadata"]
            where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else (
                meta["name"])  # fmt: skip
            found.add((name, d["kind"], where))
    return found


def _source(obj: tuple[str, str, str]) -> str | None:
    comp, kind, where = obj
    for (c, k, pattern), source in SOURCES.items():
        if c == comp and k == kind and fnmatch(where, pattern):
            return source
    return None


def test_every_object_the_sim_creates_is_explained() -> None:
    found, unrendered = _objects()
    assert set(unrendered) <= set(CACHED), unrendered
    unexplained = [o for o in found if _source(o) is None]
    assert unexplained == [], "objects the sim creates that nothing explains: " + ", ".join(
        " ".join(o) for o in unexplained
    )


def test_every_sim_only_entry_says_why_and_still_matches() -> None:
    found, unrendered = _objects()
    for (comp, kind, pattern), source in SOURCES.items():
        assert source in (CHART, RELEASE, VALUES) or source.startswith("sim-only: "), source
        if not unrendered:  # with the whole cache: an entry nothing matches is stale
            assert any(o[0] == comp and o[1] == kind and fnmatch(o[2], pattern) for o in found), (
                comp, kind, pattern)  # fmt: skip


def test_no_object_exists_only_for_a_checks_own_metric() -> None:
    # issue 33 #1: the adapter once had a rule serving the check's own gauge
    found, _ = _objects()
    ctx = Context(frozenset({"prometheus", "prometheus-adapter"}),
                  addresses={"prometheus": "http://10.244.0.5:9090"})  # fmt: skip
    docs = registry.BY_NAME["prometheus-adapter"].manifests(ctx)
    assert "aicr_" not in str(docs)
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"]
    # the catch-all rule that served every pod gauge under its own name is gone
    assert 'seriesQuery: \'{namespace!="",pod!=""}\'' not in config
    assert 'seriesQuery: DCGM_FI_DEV_GPU_UTIL{namespace!="",pod!=""}' in config
    assert found


@pytest.mark.parametrize("name", CACHED)
def test_components_rendered_from_the_cache_are_listed_when_it_is_built(name: str) -> None:
    found, unrendered = _objects()
    if name in unrendered:
        pytest.skip(f"{name}'s release files are not in the sim cache (make sim-build)")
    assert [o for o in found if o[0] == name and _source(o) is None] == []


def test_every_object_of_the_gpu_platform_scenario_is_explained() -> None:
    from simcluster.scenarios import named

    docs = named.load(SCENARIO.stem).manifests  # the documents and what its header renders
    made = {
        (
            d["kind"],
            f"{d['metadata']['namespace']}/{d['metadata']['name']}"
            if d["metadata"].get("namespace")
            else d["metadata"]["name"],
        )
        for d in docs
    }
    assert made == set(SCENARIO_SOURCES)
    for source in SCENARIO_SOURCES.values():
        assert source in (CHART, RELEASE, VALUES) or source.startswith("sim-only: "), source
