"""KubeRay's ray-operator v1.5 (built from its Go module) with its validating webhook on.

What is modelled (and nothing more): the operator Deployment
`kuberay-operator` in `ray-system`, its ServiceAccount, the release's
ClusterRole and CRDs (RayCluster, RayJob, RayService), and, with
`ENABLE_WEBHOOKS=true` as the chart sets it for webhooks, the RayCluster
validating webhook served on 9443 through the Service
`kuberay-webhook-service` with a certificate the install issues. v1.5 serves
only the RayCluster webhook, so only that one is registered. Metrics and
health listen on the pod IP; the webhook server takes 9443 on every address
(v1.5 has no flag for its host). Ray pods themselves are not run: a RayCluster
is reconciled into pods the sim shows as running.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simcluster.components import objects
from simcluster.components.base import Component, Context, Image, Manifest
from simcluster.components.webhook_certs import answers, point_webhooks, serving, webhook_service

NAMESPACE = "ray-system"
NAME = "kuberay-operator"
SERVICE = "kuberay-webhook-service"
CERT_SECRET = "kuberay-webhook-server-cert"
# The release image is quay.io/kuberay/operator; the runtime maps images by their last path
# component, and `operator` would take every other operator image, so the sim names it so.
IMAGE = "quay.io/kuberay/kuberay-operator:v1.5.0"
LABELS = {"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/component": "kuberay-operator"}
WEBHOOK_PORT = 9443
HEALTH_PORT = 8082
SERVED_HOOKS = frozenset({"vraycluster.kb.io"})


def upstream() -> Path:
    """The release's manifests, copied into the cache beside the binary."""
    return COMPONENT.bin_dir().parent / "upstream"


WEBHOOK_CONFIG = "kuberay-validating-webhook-configuration"
NOWHERE = "sim-reconciles-nothing"  # a namespace that never exists


def args(reconciling: bool = True) -> list[str]:
    """The operator's flags; not reconciling, it watches only a namespace that never exists."""
    out = [
        "--metrics-addr=$(POD_IP):8080",
        f"--health-probe-bind-address=$(POD_IP):{HEALTH_PORT}",
        "--enable-leader-election=false",
    ]
    return out if reconciling else [*out, f"--watch-namespace={NOWHERE}"]


def deployment() -> Manifest:
    """The operator, webhooks on."""
    container = {
        "name": "kuberay-operator",
        "image": IMAGE,
        "args": args(),
        "env": [objects.pod_ip_env(), {"name": "ENABLE_WEBHOOKS", "value": "true"}],
        "ports": [{"name": "webhook-server", "containerPort": WEBHOOK_PORT}],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": HEALTH_PORT},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "volumeMounts": [
            {"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": True}
        ],
    }
    volumes = [{"name": "cert", "secret": {"secretName": CERT_SECRET}}]
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes)


def served(hook: dict[str, Any]) -> bool:
    """True for the webhooks v1.5 registers a handler for."""
    return hook.get("name") in SERVED_HOOKS


def manifests(ctx: Context) -> list[Manifest]:
    """Namespace, CRDs, RBAC, the issued certificate, the operator and its webhook."""
    src = upstream()
    role = objects.first(objects.documents(src / "role.yaml"), "ClusterRole")
    cert = serving(CERT_SECRET, SERVICE, NAMESPACE)
    hooks = point_webhooks(
        objects.documents(src / "manifests.yaml"),
        SERVICE,
        NAMESPACE,
        cert.ca_bundle,
        keep=served,
        prefix="kuberay-",
    )
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *objects.documents(src / "bases"),
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", NAME, role["rules"], (NAMESPACE, NAME)),
        cert.secret,
        webhook_service(SERVICE, NAMESPACE, LABELS, WEBHOOK_PORT),
        deployment(),
        *hooks,
    ]


def ready(api: Any) -> str | None:
    """Ready once a RayCluster passes its webhook (a server-side dry run)."""
    pod = {"spec": {"containers": [{"name": "ray", "image": "docker.io/rayproject/ray:2.46.0"}]}}
    probe = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "sim-ready"},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": pod}},
    }
    return answers(api, probe, NAMESPACE)


COMPONENT = Component(
    name="kuberay",
    summary="KubeRay ray-operator v1.5 with its RayCluster validating webhook",
    pin="KUBERAY_VERSION",
    images={"kuberay-operator": Image("ray-operator")},
    manifests=manifests,
    ready=ready,
)
