"""The GPU Operator's DCGM exporter: one pod per GPU node on its pod IP, port 9400.

What is modelled (and nothing more): the operand as the GPU Operator deploys
it (DaemonSet `gpu-operator/nvidia-dcgm-exporter` on nodes labelled
`nvidia.com/gpu.deploy.dcgm-exporter=true`, its ServiceAccount and read
access, the Service `nvidia-dcgm-exporter` annotated for Prometheus, and a
ServiceMonitor when prometheus-operator runs too). dcgm-exporter cannot be
built here (it needs libdcgm), so its image is played by the GPU node model
(simcluster/gpu/dcgm_exporter.py, metrics in simcluster/gpu/dcgm.py).
It runs with `KUBERNETES_ENABLE_DRA=true` (GPUs allocated through DRA claims
are mapped to their pods, through the ResourceSlices it may read), as the GPU
Operator's exporter for DRA nodes does.
Faults (GPU node): `exporter-down`, `exporter-unlabelled`, `exporter-stale`,
`exporter-no-dra`.
"""

from __future__ import annotations

from pathlib import Path

from simcluster.components.base import (
    POD_IP_ENV,
    Component,
    Context,
    Image,
    Manifest,
    service_account,
    workload,
)

NAMESPACE = "gpu-operator"
NAME = "nvidia-dcgm-exporter"
IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"
PORT = 9400
SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "dcgm_exporter.py"
OPERATOR = "prometheus-operator"


def daemon_set() -> Manifest:
    """One exporter pod per GPU node."""
    labels = {"app": NAME}
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": ["--kubernetes", "--node=$(NODE_NAME)", f"--address=$(POD_IP):{PORT}"],
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            POD_IP_ENV,
            {"name": "KUBERNETES_ENABLE_DRA", "value": "true"},
        ],
        "ports": [{"name": "metrics", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/health", "port": PORT}, "periodSeconds": 1},
    }
    return workload(
        "DaemonSet",
        NAME,
        NAMESPACE,
        labels,
        {
            "serviceAccountName": NAME,
            "nodeSelector": {"nvidia.com/gpu.deploy.dcgm-exporter": "true"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "containers": [container],
        },
    )


def manifests(ctx: Context) -> list[Manifest]:
    """The operand's objects (and its ServiceMonitor for prometheus-operator)."""
    docs: list[Manifest] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *service_account(
            NAME,
            NAMESPACE,
            [
                {
                    "apiGroups": [""],
                    "resources": ["nodes", "pods"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["resource.k8s.io"],
                    "resources": ["resourceslices"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        ),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": {"app": NAME},
                "annotations": {"prometheus.io/scrape": "true"},
            },
            "spec": {
                "selector": {"app": NAME},
                "ports": [{"name": "gpu-metrics", "port": PORT, "targetPort": PORT}],
            },
        },
        daemon_set(),
    ]
    if OPERATOR in ctx.selected:
        docs.append(
            {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "ServiceMonitor",
                "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"app": NAME}},
                "spec": {
                    "selector": {"matchLabels": {"app": NAME}},
                    "endpoints": [{"port": "gpu-metrics", "interval": "1s"}],
                },
            }
        )
    return docs


COMPONENT = Component(
    name="dcgm-exporter",
    summary="the GPU Operator's DCGM exporter, played by the sim's GPU node model",
    pin=None,
    images={"dcgm-exporter": Image("dcgm-exporter", script=SCRIPT)},
    manifests=manifests,
    after=(OPERATOR,),
)
