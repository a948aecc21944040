"""prometheus-adapter v0.12.0: the custom metrics API (custom.metrics.k8s.io) from Prometheus.

What is modelled (and nothing more): the Deployment
`monitoring/prometheus-adapter` with its ServiceAccount, RBAC (auth delegation,
the authentication-reader Role, read access, and the custom-metrics reader role
bound to the HPA controller), its rules ConfigMap, the Service and the
APIService `v1beta1.custom.metrics.k8s.io`, as the community chart lays them
out, built from the adapter's Go module (`build.sh`). It queries Prometheus
at its pod IP (the sim has no cluster DNS; on a cluster the chart gives the
Service's DNS name). Rules: the chart's default, every `*_total` counter with
namespace and pod labels served as `*_per_second`. Test-time knobs: a 15 s rate
window and a 5 s relist interval, so a new series is served within seconds.
Fault `adapter-down`: the Deployment is scaled to zero (the APIService goes
unavailable, as when the adapter crashes), healed by scaling back to one.
"""

from __future__ import annotations

from typing import Any

import yaml

from simcluster.components.base import Component, Context, Image, Manifest

NAMESPACE = "monitoring"
NAME = "prometheus-adapter"
IMAGE = "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"
PORT = 6443
API_SERVICE = "v1beta1.custom.metrics.k8s.io"
RATE_WINDOW = "15s"
RELIST = "5s"


def rules() -> dict[str, Any]:
    """The adapter's rules: counters with namespace and pod labels, as per-second rates."""
    return {
        "rules": [
            {
                "seriesQuery": '{__name__=~".+_total",namespace!="",pod!=""}',
                "resources": {"overrides": {"namespace": {"resource": "namespace"},
                                            "pod": {"resource": "pod"}}},
                "name": {"matches": "^(.*)_total$", "as": "${1}_per_second"},
                "metricsQuery": f"sum(rate(<<.Series>>{{<<.LabelMatchers>>}}[{RATE_WINDOW}])) "
                                "by (<<.GroupBy>>)",
            }
        ]
    }  # fmt: skip


def rbac() -> list[Manifest]:
    """What the chart grants the adapter, and the HPA controller's read access to its API."""
    rb = "rbac.authorization.k8s.io/v1"
    sa = [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    reader = f"{NAME}-server-resources"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": NAME, "namespace": NAMESPACE}},
        {"apiVersion": rb, "kind": "ClusterRole", "metadata": {"name": f"{NAME}-resource-reader"},
         "rules": [{"apiGroups": [""], "resources": ["namespaces", "pods", "services", "nodes"],
                    "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": rb, "kind": "ClusterRoleBinding",
         "metadata": {"name": f"{NAME}-resource-reader"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": f"{NAME}-resource-reader"}, "subjects": sa},
        {"apiVersion": rb, "kind": "ClusterRoleBinding",
         "metadata": {"name": f"{NAME}:system:auth-delegator"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "system:auth-delegator"}, "subjects": sa},
        {"apiVersion": rb, "kind": "RoleBinding",
         "metadata": {"name": f"{NAME}-auth-reader", "namespace": "kube-system"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "extension-apiserver-authentication-reader"}, "subjects": sa},
        {"apiVersion": rb, "kind": "ClusterRole", "metadata": {"name": reader},
         "rules": [{"apiGroups": ["custom.metrics.k8s.io"], "resources": ["*"],
                    "verbs": ["*"]}]},
        {"apiVersion": rb, "kind": "ClusterRoleBinding",
         "metadata": {"name": "hpa-controller-custom-metrics"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": reader},
         "subjects": [{"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler",
                       "namespace": "kube-system"}]},
    ]  # fmt: skip


def deployment(prometheus_url: str) -> Manifest:
    """The adapter's Deployment, pointed at Prometheus."""
    labels = {"app.kubernetes.io/name": NAME}
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": [
            f"--prometheus-url={prometheus_url}",
            f"--metrics-relist-interval={RELIST}",
            "--config=/etc/adapter/config.yaml",
            f"--secure-port={PORT}",
            "--bind-address=$(POD_IP)",
            "--cert-dir=/var/run/serving-cert",
            "--v=2",
        ],
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "ports": [{"name": "https", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": PORT, "scheme": "HTTPS"},
                           "periodSeconds": 1, "failureThreshold": 60},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/adapter"},
                         {"name": "serving-cert", "mountPath": "/var/run/serving-cert"}],
    }  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    "nodeSelector": {"aicr.dev/node-group": "system"},
                    "containers": [container],
                    "volumes": [
                        {"name": "config", "configMap": {"name": NAME}},
                        {"name": "serving-cert", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def manifests(ctx: Context) -> list[Manifest]:
    """Everything the chart creates, pointed at the running Prometheus."""
    prometheus = ctx.addresses.get("prometheus")
    if prometheus is None:
        raise ValueError("prometheus-adapter needs a running Prometheus (it requires prometheus)")
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *rbac(),
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": NAME, "namespace": NAMESPACE},
         "data": {"config.yaml": yaml.safe_dump(rules(), sort_keys=False)}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": NAME, "namespace": NAMESPACE},
         "spec": {"selector": {"app.kubernetes.io/name": NAME},
                  "ports": [{"port": 443, "targetPort": PORT}]}},
        deployment(prometheus),
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
         "metadata": {"name": API_SERVICE},
         "spec": {"service": {"name": NAME, "namespace": NAMESPACE, "port": 443},
                  "group": "custom.metrics.k8s.io", "version": "v1beta1",
                  "insecureSkipTLSVerify": True, "groupPriorityMinimum": 100,
                  "versionPriority": 100}},
    ]  # fmt: skip


COMPONENT = Component(
    name="prometheus-adapter",
    summary="prometheus-adapter v0.12.0: custom metrics API from Prometheus (Go module)",
    pin="PROMETHEUS_ADAPTER_VERSION",
    images={"prometheus-adapter": Image("adapter")},
    manifests=manifests,
    requires=("prometheus",),
)
