"""The GPU Operator's DCGM exporter: one pod per GPU node on its pod IP, port 9400.

What is modelled (and nothing more): the operand as the GPU Operator deploys
it (DaemonSet `gpu-operator/nvidia-dcgm-exporter` on nodes labelled
`nvidia.com/gpu.deploy.dcgm-exporter=true`, its ServiceAccount and read
access, the Service `nvidia-dcgm-exporter` annotated for Prometheus, and a
ServiceMonitor when prometheus-operator runs too). dcgm-exporter cannot be
built here (it needs libdcgm), so its image is played by the GPU node model
(simcluster/gpu/dcgm_exporter.py, metrics in simcluster/gpu/dcgm.py).
Faults (GPU node): `exporter-down`, `exporter-unlabelled`, `exporter-stale`.
"""

from __future__ import annotations

from pathlib import Path

from simcluster.components.base import Component, Context, Image, Manifest

NAMESPACE = "gpu-operator"
NAME = "nvidia-dcgm-exporter"
IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"
PORT = 9400
SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "dcgm_exporter.py"
OPERATOR = "prometheus-operator"


def _env(name: str, path: str) -> dict[str, object]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def daemon_set() -> Manifest:
    """One exporter pod per GPU node."""
    labels = {"app": NAME}
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": ["--kubernetes", "--node=$(NODE_NAME)", f"--address=$(POD_IP):{PORT}"],
        "env": [_env("NODE_NAME", "spec.nodeName"), _env("POD_IP", "status.podIP")],
        "ports": [{"name": "metrics", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/health", "port": PORT}, "periodSeconds": 1},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    "nodeSelector": {"nvidia.com/gpu.deploy.dcgm-exporter": "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                     "effect": "NoSchedule"}],
                    "containers": [container],
                },
            },
        },
    }  # fmt: skip


def manifests(ctx: Context) -> list[Manifest]:
    """The operand's objects (and its ServiceMonitor for prometheus-operator)."""
    rb = "rbac.authorization.k8s.io/v1"
    docs: list[Manifest] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": NAME, "namespace": NAMESPACE}},
        {"apiVersion": rb, "kind": "ClusterRole", "metadata": {"name": NAME},
         "rules": [{"apiGroups": [""], "resources": ["nodes", "pods"],
                    "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": rb, "kind": "ClusterRoleBinding", "metadata": {"name": NAME},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
         "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"app": NAME},
                      "annotations": {"prometheus.io/scrape": "true"}},
         "spec": {"selector": {"app": NAME},
                  "ports": [{"name": "gpu-metrics", "port": PORT, "targetPort": PORT}]}},
        daemon_set(),
    ]  # fmt: skip
    if OPERATOR in ctx.selected:
        docs.append({
            "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"app": NAME}},
            "spec": {"selector": {"matchLabels": {"app": NAME}},
                     "endpoints": [{"port": "gpu-metrics", "interval": "1s"}]},
        })  # fmt: skip
    return docs


COMPONENT = Component(
    name="dcgm-exporter",
    summary="the GPU Operator's DCGM exporter, played by the sim's GPU node model",
    pin=None,
    images={"dcgm-exporter": Image("dcgm-exporter", script=SCRIPT)},
    manifests=manifests,
    after=(OPERATOR,),
)
