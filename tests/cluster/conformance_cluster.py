"""The healthy simulated GPU cluster a whole conformance run needs, and that run's inputs.

Shared by the CNCF submission test, the conformance bench and the demo (`hack/demo.py`).

The GPU Operator's operands and the DRA driver are stand-in DaemonSets whose pods
really run on the GPU nodes (`gpu_operator.gpu_node_daemon_set`). The operator's
stand-ins have their own namespace: the sim's dcgm-exporter component owns
`gpu-operator`, and a stand-in of the same name would replace it. The RuntimeClasses
are the GPU Operator's `nvidia` (secure-accelerator-access) and gVisor's `runsc`
(workload-sandboxing; the sim runs pods under the real gVisor). Each piece is applied
by `healthy` and removed by `teardown`.

The run's inputs: `COMPONENTS`, the sim's real components the conformance checks judge
with device-plugin GPUs; `recipe`, the recipe naming them; `QUICK_PARAMS`, shorter
windows than the checks' defaults where the sim's components answer at once; and
`run_config`, the ValidateConfig holding what the components publish and those params.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployhelp import recipe_text
from gpu_operator import CRD, daemon_sets_ready, deployment, gpu_node_daemon_set, policy_served
from gpu_operator import policy as cluster_policy
from harness import SimCluster
from kubernetes import client
from manifests import GPU_RUNTIME_CLASS
from simcluster.components.dcgm_exporter import PORT as EXPORTER_PORT

from aicr.checks.gpu_operator import OPERANDS

OPERATOR_NS = "gpu-operator"  # the GPU Operator's own, where the dcgm-exporter component runs
STAND_IN_NS, DRA_NS = "gpu-operator-stand-ins", "nvidia-dra-driver"
DRA_PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin"
SANDBOX = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "gvisor"},
           "handler": "runsc"}  # fmt: skip
RUNTIME_CLASSES = (GPU_RUNTIME_CLASS, SANDBOX)
EXPORTER = "app=nvidia-dcgm-exporter"
# The real components every conformance check exercises (as `hack/sim/sim up --with` names
# them): KubeRay (robust-controller), Traefik on the Gateway API CRDs (inference-gateway),
# Kueue (gang-scheduling), Prometheus and its adapter (pod-autoscaling, ai-service-metrics),
# dcgm-exporter (accelerator-metrics) and Karpenter (cluster-autoscaling).
COMPONENTS = (
    "kuberay", "gateway", "kueue", "prometheus", "prometheus-adapter", "dcgm-exporter", "karpenter"
)  # fmt: skip
# The recipe's entries for those beside the GPU Operator and the DRA driver.
PLATFORM = (
    "- name: kuberay-operator\n  namespace: ray-system\n"
    "- name: traefik\n  namespace: traefik\n"
    "- name: kueue\n  namespace: kueue-system\n"
)
# Windows the sim's components allow shorter than the checks' defaults.
QUICK_PARAMS: dict[str, dict[str, Any]] = {
    "inference-gateway": {"routeSeconds": 30},
    "gang-scheduling": {"observeSeconds": 5, "startSeconds": 60, "admissionSeconds": 20},
    "accelerator-metrics": {"loadSeconds": 20, "collectSeconds": 30},
    "ai-service-metrics": {"discoverSeconds": 60, "countSeconds": 20},
    "cluster-autoscaling": {"scaleUpSeconds": 90, "scaleDownSeconds": 90},
    # the load outlasts the first pod's start, one adapter relist (30 s, the recipes'
    # values) and the scale-up; the pipeline after it takes seconds
    "pod-autoscaling": {"loadSeconds": 75, "metricSeconds": 60, "scaleUpSeconds": 60,
                        "scaleDownSeconds": 45},
}


def gpu_components(mode: str, operator_ns: str = OPERATOR_NS) -> str:
    """The recipe's GPU Operator and DRA driver (component list items), set up for ``mode``."""
    on, off = ("true", "false") if mode == "dra" else ("false", "true")
    return (
        f"- name: gpu-operator\n  namespace: {operator_ns}\n"
        f"  overrides: {{devicePlugin: {{enabled: {off}}}}}\n"
        f"- name: nvidia-dra-driver-gpu\n  namespace: {DRA_NS}\n"
        f"  overrides: {{resources: {{gpus: {{enabled: {on}}}}}, "
        f"gpuResourcesEnabledOverride: {on}}}\n"
    )


def recipe(checks: list[str], mode: str, operator_ns: str = OPERATOR_NS) -> str:
    """The recipe of a conformance run of ``checks``: the GPU Operator (in ``operator_ns``)
    and the DRA driver set up for ``mode``, KubeRay, Traefik and Kueue."""
    return recipe_text(gpu_components(mode, operator_ns) + PLATFORM, checks, phase="conformance")


def run_config(
    cluster: SimCluster, params: dict[str, dict[str, Any]], vendor: dict[str, str] | None = None
) -> dict[str, Any]:
    """What the components publish (`sim config`), ``params`` per check, and with ``vendor``
    the CNCF submission's vendor metadata. accelerator-metrics is told where the exporter
    runs (OPERATOR_NS), whichever namespace the recipe gives the GPU Operator."""
    config = cluster.validate_config()
    checks = config["spec"]["validate"]["checks"]
    checks.setdefault("accelerator-metrics", {}).setdefault("params", {})["exporterNamespace"] = (
        OPERATOR_NS
    )
    for check, values in params.items():
        checks.setdefault(check, {}).setdefault("params", {}).update(values)
    if vendor is not None:
        config["spec"]["validate"]["evidence"] = {"cncf": {"vendor": vendor}}
    return config


def healthy(cluster: SimCluster, mode: str, operands: bool = True) -> None:
    """GPUs in ``mode``, the DRA kubelet plugin ready on the GPU nodes, the RuntimeClasses.

    With ``operands`` also the GPU Operator, its ClusterPolicy and its operands, in
    STAND_IN_NS (the checks that judge them need a recipe naming that namespace).
    """
    if cluster.mode != mode:
        cluster.set_mode(mode)
    spaces = (STAND_IN_NS, DRA_NS) if operands else (DRA_NS,)
    for ns in spaces:
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    if operands:
        cluster.apply(CRD)
        cluster.wait_for(lambda: policy_served(cluster), 30, message="ClusterPolicy CRD served")
        cluster.apply([deployment("gpu-operator"), *(gpu_node_daemon_set(o.app) for o in OPERANDS)],
                      STAND_IN_NS)  # fmt: skip
        cluster.apply(cluster_policy("ready"))
    cluster.apply(gpu_node_daemon_set(DRA_PLUGIN), DRA_NS)
    cluster.apply(list(RUNTIME_CLASSES))
    for ns in spaces:
        cluster.wait_for(lambda ns=ns: daemon_sets_ready(cluster, ns), 120,
                         message=f"DaemonSets in {ns} ready")  # fmt: skip


def teardown(cluster: SimCluster, operands: bool = True) -> None:
    """Everything `healthy` made goes; the cluster is back in its initial mode."""
    for ns in (STAND_IN_NS, DRA_NS) if operands else (DRA_NS,):
        cluster.delete_namespace(ns, wait=False)
    if operands:
        client.ApiextensionsV1Api(cluster.api()).delete_custom_resource_definition(
            CRD["metadata"]["name"]
        )
    for runtime_class in RUNTIME_CLASSES:
        try:
            client.NodeV1Api(cluster.api()).delete_runtime_class(runtime_class["metadata"]["name"])
        except client.ApiException as e:
            if e.status != 404:  # another test's fixture may have removed its own already
                raise
    cluster.reset()


def exporters_ready(cluster: SimCluster) -> None:
    """Wait until every GPU node's dcgm-exporter pod is Ready: after a heal (e.g. of
    `exporter-down`) its socket reopens, but readiness returns a probe period later."""

    def ready() -> bool:
        pods = cluster.core().list_namespaced_pod(OPERATOR_NS, label_selector=EXPORTER).items
        return {p.spec.node_name for p in pods if any(
            c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
        } >= set(SimCluster.gpu_nodes)  # fmt: skip

    cluster.wait_for(ready, timeout=60, message="every GPU node's exporter to be Ready")


def exporters_serve(cluster: SimCluster, shows: Callable[[str], bool], what: str) -> None:
    """Wait until every GPU node's exporter page `shows` a fault just applied.

    The exporter, like dcgm-exporter, applies what it reads at its next collection,
    and its loop runs late on a loaded machine: a test that scrapes at once may still
    get the page from before the fault. Pages are read from inside the cluster's
    network namespace (`SimCluster.http_get`).
    """
    core = cluster.core()

    def served() -> bool:
        pods = core.list_namespaced_pod(OPERATOR_NS, label_selector=EXPORTER).items
        ips = {p.spec.node_name: p.status.pod_ip for p in pods if p.status.pod_ip}
        if set(ips) < set(SimCluster.gpu_nodes):
            return False
        for node in SimCluster.gpu_nodes:
            status, body = cluster.http_get(f"http://{ips[node]}:{EXPORTER_PORT}/metrics")
            if status != 200 or not shows(body):
                return False
        return True

    cluster.wait_for(served, timeout=30, interval=0.5,
                     message=f"every GPU node's exporter to serve {what}")  # fmt: skip
