"""The GPU Operator's DCGM exporter: one pod per GPU node on its pod IP, port 9400.

What is modelled (and nothing more): the operand as the GPU Operator deploys
it (DaemonSet `gpu-operator/nvidia-dcgm-exporter` on nodes labelled
`nvidia.com/gpu.deploy.dcgm-exporter=true`, its ServiceAccount and read
access, the Service `nvidia-dcgm-exporter` annotated for Prometheus, and a
ServiceMonitor when prometheus-operator runs too and the GPU Operator's values
enable it). dcgm-exporter cannot be
built here (it needs libdcgm), so its image is played by the GPU node model
(simcluster/gpu/dcgm_exporter.py, metrics in simcluster/gpu/dcgm.py).
It runs with `KUBERNETES_ENABLE_DRA=true` (GPUs allocated through DRA claims
are mapped to their pods, through the ResourceSlices it may read), as the GPU
Operator's exporter for DRA nodes does.
Its environment adds the values' `dcgmExporter.env` (see below for which values), which
the GPU Operator copies onto the operand's container; among them `DCGM_EXPORTER_INTERVAL`,
the collection interval (ms; dcgm-exporter's default is 30000). When the values set no
interval, the sim's knob `exporter_interval_ms` (1 s, a test-time setting like
Prometheus' 1 s scrape) is set in its place.
Faults (GPU node): `exporter-down`, `exporter-unlabelled`, `exporter-stale`,
`exporter-no-dra`.

The ServiceMonitor is the operator's (gpu-operator v25.10.1
`assets/state-dcgm-exporter/0500_service_monitor.yaml`: port `gpu-metrics`, path
`/metrics`, `jobLabel: app`, its own namespace) edited from the values'
`dcgmExporter.serviceMonitor` as `controllers/object_controls.go` `ServiceMonitor()`
does: made only when `enabled` (the chart's default is false), `honorLabels`,
`additionalLabels` and `relabelings` as given. Its interval is the sim's scrape
knob (1 s) in place of the values' `interval`. The values are the recipe's
(`Context.values["gpu-operator"]`), else the file the demo's recipe references
(`recipes/components/gpu-operator/values-kind.yaml`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simcluster.components.base import (
    POD_IP_ENV,
    RECIPE_COMPONENTS,
    Component,
    Context,
    Image,
    Manifest,
    chart_values,
    dig,
    service_account,
    workload,
)

NAMESPACE = "gpu-operator"
NAME = "nvidia-dcgm-exporter"
IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"
PORT = 9400
SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "dcgm_exporter.py"
OPERATOR = "prometheus-operator"
CHART = "gpu-operator"
# The GPU Operator values the demo's recipe (recipes/kind-inference.yaml) references.
VALUES = RECIPE_COMPONENTS / CHART / "values-kind.yaml"
INTERVAL_ENV = "DCGM_EXPORTER_INTERVAL"


def values_env(values: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The `dcgmExporter.env` entries of the GPU Operator's values (name/value pairs)."""
    env = ((values or {}).get("dcgmExporter") or {}).get("env") or []
    return [dict(e) for e in env if isinstance(e, Mapping) and e.get("name")]


def daemon_set(ctx: Context) -> Manifest:
    """One exporter pod per GPU node."""
    labels = {"app": NAME}
    env = values_env(chart_values(ctx, CHART, VALUES))
    if not any(e["name"] == INTERVAL_ENV for e in env):
        env.append({"name": INTERVAL_ENV, "value": str(ctx.knobs.exporter_interval_ms)})
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": ["--kubernetes", "--node=$(NODE_NAME)", f"--address=$(POD_IP):{PORT}"],
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            POD_IP_ENV,
            {"name": "KUBERNETES_ENABLE_DRA", "value": "true"},
            *env,
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
        daemon_set(ctx),
    ]
    monitor = service_monitor(ctx)
    if OPERATOR in ctx.selected and monitor is not None:
        docs.append(monitor)
    return docs


def service_monitor(ctx: Context) -> Manifest | None:
    """The operator's ServiceMonitor as the values' ``dcgmExporter.serviceMonitor`` edit it.

    None when the values leave it disabled (the chart's default).
    """
    given = dig(chart_values(ctx, CHART, VALUES), "dcgmExporter", "serviceMonitor", default={})
    if not isinstance(given, dict) or not given.get("enabled"):
        return None
    endpoint: dict[str, object] = {
        "port": "gpu-metrics",
        "path": "/metrics",
        "interval": ctx.knobs.scrape_interval,
    }
    if given.get("honorLabels") is not None:
        endpoint["honorLabels"] = bool(given["honorLabels"])
    if given.get("relabelings"):
        endpoint["relabelings"] = list(given["relabelings"])
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"app": NAME, **(given.get("additionalLabels") or {})},
        },
        "spec": {
            "endpoints": [endpoint],
            "jobLabel": "app",
            "namespaceSelector": {"matchNames": [NAMESPACE]},
            "selector": {"matchLabels": {"app": NAME}},
        },
    }


COMPONENT = Component(
    name="dcgm-exporter",
    summary="the GPU Operator's DCGM exporter, played by the sim's GPU node model",
    pin=None,
    images={"dcgm-exporter": Image("dcgm-exporter", script=SCRIPT)},
    manifests=manifests,
    after=(OPERATOR,),
)
