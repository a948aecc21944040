"""Deployment-phase checks through ``aicr validate`` and real Jobs: healthy and broken scenarios.

Each scenario builds the objects a real install would have (KWOK makes their pods
Running and Ready, so the real controllers report them available), runs one check
and asserts the CTRF status and message, then removes what it made.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_check
from gpu_operator import (
    CRD,
    IMAGE,
    daemon_set,
    deployment,
    install_operator,
    operator_component,
    wait_available,
)
from harness import SimCluster
from kubernetes import client

from aicr.errors import InvalidRequestError


@pytest.fixture(scope="module", autouse=True)
def remove_crd(sim_cluster: SimCluster) -> Iterator[None]:
    """The ClusterPolicy CRD some scenarios install goes away with this module."""
    yield
    api = client.ApiextensionsV1Api(sim_cluster.api())
    try:
        api.delete_custom_resource_definition(CRD["metadata"]["name"])
    except client.ApiException as exc:
        if exc.status != 404:
            raise


@pytest.fixture
def operator_ns(cluster: SimCluster) -> Iterator[str]:
    """A namespace playing gpu-operator, plus the ClusterPolicy CRD; policies removed after."""
    cluster.apply(CRD)
    cluster.wait_for(lambda: _policies(cluster) is not None, message="ClusterPolicy CRD served")
    with cluster.namespace("gpuop") as ns:
        yield ns
    api = client.CustomObjectsApi(cluster.api())
    for p in _policies(cluster) or []:
        api.delete_cluster_custom_object("nvidia.com", "v1", "clusterpolicies",
                                         p["metadata"]["name"])  # fmt: skip


def _policies(cluster: SimCluster) -> list[dict[str, Any]] | None:
    api = client.CustomObjectsApi(cluster.api())
    items: list[dict[str, Any]] = api.list_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies")["items"]  # fmt: skip
    return items


# ---- operator-health --------------------------------------------------------------------------
def test_operator_health_passes_on_a_healthy_operator(
    cluster: SimCluster, operator_ns: str, tmp_path: Path
) -> None:
    install_operator(cluster, operator_ns)
    wait_available(cluster, operator_ns, ["gpu-operator"])
    test = run_check(cluster, tmp_path, "operator-health", operator_component(operator_ns))
    assert test["status"] == "passed", test["message"]
    assert test["message"].startswith("GPU Operator healthy: ")
    assert "ClusterPolicy cluster-policy" in test["extra"]["evidence"][0]["asked"]


def test_operator_health_fails_on_a_policy_not_ready(
    cluster: SimCluster, operator_ns: str, tmp_path: Path
) -> None:
    install_operator(cluster, operator_ns, state="notReady")
    wait_available(cluster, operator_ns, ["gpu-operator"])
    test = run_check(cluster, tmp_path, "operator-health", operator_component(operator_ns))
    assert test["status"] == "failed"
    assert test["message"] == (
        "GPU Operator unhealthy: ClusterPolicy cluster-policy: state is notReady, not ready"
    )


def test_operator_health_names_an_unavailable_operator_and_its_pod(
    cluster: SimCluster, operator_ns: str, tmp_path: Path
) -> None:
    install_operator(cluster, operator_ns, node_selector={"no-such": "node"})
    wait_available(cluster, operator_ns, [])  # the DaemonSet ready: only the operator is broken
    test = run_check(cluster, tmp_path, "operator-health", operator_component(operator_ns))
    assert test["status"] == "failed"
    assert test["message"].startswith(
        f"GPU Operator unhealthy: Deployment {operator_ns}/gpu-operator: 0/1 replicas available; "
        f"Pod {operator_ns}/gpu-operator-"
    )
    assert test["message"].endswith(": is Pending")


# ---- gpu-operator-version ---------------------------------------------------------------------
CONSTRAINT = "    - {name: Deployment.gpu-operator.version, value: '>= v25.3.0'}\n"


@pytest.mark.parametrize(
    ("dep", "status", "message"),
    [
        ({}, "passed", "GPU Operator v25.10.1 (image tag of container gpu-operator ({image}) of "
         "{ns}/gpu-operator) satisfies >= v25.3.0"),
        ({"labels": {"app.kubernetes.io/version": "v24.9.2"}}, "failed",
         "GPU Operator v24.9.2 (label app.kubernetes.io/version of {ns}/gpu-operator) does not "
         "satisfy >= v25.3.0"),
        (None, "failed", "no GPU Operator Deployment found in namespace {ns}"),
    ],
    ids=["satisfied", "too-old", "absent"],
)  # fmt: skip
def test_gpu_operator_version(
    cluster: SimCluster, namespace: str, tmp_path: Path, dep: dict[str, Any] | None,
    status: str, message: str,
) -> None:
    if dep is not None:
        cluster.apply(deployment("gpu-operator", **dep), namespace)
    test = run_check(cluster, tmp_path, "gpu-operator-version", operator_component(namespace),
                     CONSTRAINT)  # fmt: skip
    assert (test["status"], test["message"]) == (
        status, message.format(ns=namespace, image=IMAGE))


# ---- expected-resources -----------------------------------------------------------------------
def service(name: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}}  # fmt: skip


def component(ns: str, resources: list[tuple[str, str]]) -> str:
    text = f"- name: demo\n  namespace: {ns}\n  expectedResources:\n"
    return text + "".join(f"  - {{kind: {k}, name: {n}}}\n" for k, n in resources)


def install_demo(cluster: SimCluster, ns: str) -> None:
    cluster.apply([
        deployment("web", image="registry.example/web:1"), daemon_set("agent"),
        service("web", "web"), service("nobody", "nothing-matches"),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"}, "data": {}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {}},
    ], ns)  # fmt: skip
    wait_available(cluster, ns, ["web"])

    def endpoints() -> bool:
        slices = client.DiscoveryV1Api(cluster.api()).list_namespaced_endpoint_slice(
            ns, label_selector="kubernetes.io/service-name=web").items
        return any(s.endpoints for s in slices)

    cluster.wait_for(endpoints, 60, message="EndpointSlice of web")


def test_expected_resources_passes_when_every_object_is_healthy(
    cluster: SimCluster, namespace: str, tmp_path: Path
) -> None:
    install_demo(cluster, namespace)
    wanted = [("Deployment", "web"), ("DaemonSet", "agent"), ("Service", "web"),
              ("ConfigMap", "conf"), ("Secret", "creds"),
              ("CustomResourceDefinition", "clusterpolicies.nvidia.com")]  # fmt: skip
    cluster.apply(CRD)
    test = run_check(cluster, tmp_path, "expected-resources", component(namespace, wanted))
    assert test["status"] == "passed", test["message"]
    assert test["message"] == "7 objects of 1 components exist and are healthy"
    asked = test["extra"]["evidence"][0]["asked"]
    assert asked.startswith(f"Namespace {namespace}; Deployment {namespace}/web; ")


def test_expected_resources_names_missing_and_endpointless_objects(
    cluster: SimCluster, namespace: str, tmp_path: Path
) -> None:
    install_demo(cluster, namespace)
    wanted = [("Service", "nobody"), ("Secret", "absent"), ("Deployment", "web")]
    test = run_check(cluster, tmp_path, "expected-resources", component(namespace, wanted))
    assert test["status"] == "failed"
    assert test["message"] == (
        f"1/1 components not as expected: demo: Service {namespace}/nobody: has no ready "
        f"endpoints, Secret {namespace}/absent: not found"
    )


def test_expected_resources_refuses_unsupported_kinds_and_empty_namespaces(
    cluster: SimCluster, namespace: str, tmp_path: Path
) -> None:
    components = component(namespace, [("Ingress", "web")])
    components += f"- name: idle\n  namespace: {namespace}\n"
    test = run_check(cluster, tmp_path, "expected-resources", components)
    assert test["status"] == "failed"
    assert test["message"].startswith(
        f"2/2 components not as expected: demo: Ingress {namespace}/web: kind Ingress is not one "
        "aicr can judge (supported: "
    )
    assert test["message"].endswith(
        f"idle: namespace {namespace} has no Deployment, DaemonSet, StatefulSet or running pod, "
        "and the recipe declares no expectedResources: nothing shows the component runs"
    )


# ---- gpu-allocation-policy ---------------------------------------------------------------------
DP_RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: true}}\n"
)
DRA_RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: false}}\n"
    "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver\n"
    "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n"
)
GPU_NODES = "gpu-h100-0, gpu-h100-1"


@pytest.mark.parametrize(
    ("mode", "recipe", "status", "message"),
    [
        ("device-plugin", DP_RECIPE, "passed",
         f"device-plugin mode on 2 GPU nodes ({GPU_NODES}), as the recipe resolves"),
        ("dra", DRA_RECIPE, "passed",
         f"dra mode on 2 GPU nodes ({GPU_NODES}), as the recipe resolves"),
        ("dual", DP_RECIPE, "failed", "recipe resolves to device-plugin mode, but ResourceSlices "
         f"also publish whole GPUs for: {GPU_NODES}"),
        ("device-plugin", DRA_RECIPE, "failed", "recipe resolves to dra mode, but GPU nodes "
         f"without a ResourceSlice of whole GPUs: {GPU_NODES}; GPU nodes still advertising "
         f"nvidia.com/gpu: {GPU_NODES}; DeviceClass gpu.nvidia.com does not exist"),
        ("dra", DP_RECIPE, "failed", "recipe resolves to device-plugin mode, but GPU nodes not "
         f"advertising nvidia.com/gpu: {GPU_NODES}; ResourceSlices also publish whole GPUs for: "
         f"{GPU_NODES}"),
    ],
    ids=["dp", "dra", "dual-cluster", "dra-recipe-dp-cluster", "dp-recipe-dra-cluster"],
)  # fmt: skip
def test_gpu_allocation_policy(
    cluster: SimCluster, tmp_path: Path, mode: str, recipe: str, status: str, message: str
) -> None:
    if cluster.mode != mode:
        cluster.set_mode(mode)
    test = run_check(cluster, tmp_path, "gpu-allocation-policy", recipe)
    assert (test["status"], test["message"]) == (status, message)


def test_gpu_allocation_policy_refuses_a_dual_recipe_before_any_job(
    cluster: SimCluster, tmp_path: Path
) -> None:
    dual = DP_RECIPE + DRA_RECIPE[DRA_RECIPE.index("- name: nvidia-dra-driver-gpu") :]
    before = {n.metadata.name for n in cluster.core().list_namespace().items}
    with pytest.raises(InvalidRequestError, match="whole GPUs are advertised twice"):
        run_check(cluster, tmp_path, "gpu-allocation-policy", dual,
                  namespace="aicr-refused-run")  # fmt: skip
    assert {n.metadata.name for n in cluster.core().list_namespace().items} == before
