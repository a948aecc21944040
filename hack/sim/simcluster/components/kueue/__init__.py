"""Kueue v0.17 (built from its Go module), as its release manifests install it.

What is modelled (and nothing more): the `kueue-controller-manager`
Deployment in `kueue-system` with its ServiceAccount, the release's own
manager ClusterRole and secrets Role, its CRDs and its validating and mutating webhooks,
served on the pod IP (port 9443) through the Service
`kueue-webhook-service`, with a serving certificate the install issues (as
cert-manager would; Kueue's internal certificate rotation is off). Only the
`batch/job` integration is enabled, so only the webhooks of Kueue's own
objects and of Jobs are registered. Test-time knob: `waitForPodsReady` with a
20 s timeout (all-or-nothing start of admitted workloads). The CRDs are served
without their conversion webhook: both versions exist, v1beta2 is the one to
use. The visibility API is off (`VisibilityOnDemand=false`). Fault
`queue-jobs-unmanaged`: the manager restarts with a second Configuration of
the same ConfigMap whose `integrations.frameworks` lists only JobSet (a
platform that queues JobSets and left `batch/job` out): Kueue 0.17 still
registers its Job webhook, without the options the integration would give it,
and it panics on every Job, so the API server refuses every Job its webhooks
match (`admission webhook "mjob.kb.io" denied the request: panic: ...`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simcluster.components import objects, pod_ip_config
from simcluster.components.base import Component, Context, Image, Manifest
from simcluster.components.webhook_certs import answers, point_webhooks, serving, webhook_service

NAMESPACE = "kueue-system"
NAME = "kueue-controller-manager"
SERVICE = "kueue-webhook-service"
CERT_SECRET = "kueue-webhook-server-cert"
CONFIG = "kueue-manager-config"
CONFIG_FILE = "controller_manager_config.yaml"
NO_JOBS_FILE = "controller_manager_config_no_jobs.yaml"  # the queue-jobs-unmanaged fault's
IMAGE = "registry.k8s.io/kueue/kueue:v0.17.0"
API = "kueue.x-k8s.io/v1beta2"
LABELS = {"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue"}
WEBHOOK_PORT = 9444  # KubeRay's webhook server takes 9443 on every address of the shared namespace
HEALTH_PORT = 8081
PODS_READY_TIMEOUT = "20s"
# The API groups whose webhooks have a handler with only `batch/job` enabled.
SERVED_GROUPS = frozenset({"kueue.x-k8s.io", "batch"})
JOB_FRAMEWORK = "batch/job"
JOBSET_FRAMEWORK = "jobset.x-k8s.io/jobset"  # its CRD is not installed: Kueue waits for it


def upstream() -> Path:
    """The release's manifests, copied into the cache beside the binary."""
    return COMPONENT.bin_dir().parent / "upstream"


def config_text(jobs: bool = True) -> str:
    """The manager's Configuration; `@POD_IP@` is the pod's own address.

    Without ``jobs`` its integrations leave `batch/job` out (only JobSet).
    """
    ip = pod_ip_config.PLACEHOLDER
    cfg = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": f"{ip}:{HEALTH_PORT}"},
        "metrics": {"bindAddress": f"{ip}:8443"},
        "webhook": {
            "host": ip,
            "port": WEBHOOK_PORT,
            "certDir": "/tmp/k8s-webhook-server/serving-certs",
        },
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "waitForPodsReady": {"timeout": PODS_READY_TIMEOUT, "blockAdmission": True},
        "integrations": {"frameworks": [JOB_FRAMEWORK if jobs else JOBSET_FRAMEWORK]},
    }
    return yaml.safe_dump(cfg, sort_keys=False)


def rbac(role_rules: list[dict[str, Any]], secret_rules: list[dict[str, Any]]) -> list[Manifest]:
    """ServiceAccount, the release's manager ClusterRole and its secrets Role, bound to it."""
    account = (NAMESPACE, NAME)
    return [
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", "kueue-manager-role", role_rules, account),
        *objects.bound_role("Role", "kueue-manager-secrets-role", secret_rules, account, NAMESPACE),
    ]


def args(jobs: bool = True) -> list[str]:
    """The manager's args: its Configuration (the one without `batch/job` when ``jobs`` is off)."""
    return [
        f"--config=/config/{CONFIG_FILE if jobs else NO_JOBS_FILE}",
        "--zap-log-level=2",
        "--feature-gates=VisibilityOnDemand=false",
    ]


def deployment() -> Manifest:
    """The controller manager; webhook and metrics certificates from the issued Secret."""
    certs = [
        {"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": True},
        {"name": "cert", "mountPath": "/etc/kueue/metrics/certs", "readOnly": True},
    ]
    container = {
        "name": "manager",
        "image": IMAGE,
        "args": args(),
        "ports": [{"name": "webhook-server", "containerPort": WEBHOOK_PORT}],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": HEALTH_PORT},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": HEALTH_PORT},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
        },
        "volumeMounts": [pod_ip_config.mount(), *certs],
    }
    volumes = [
        *pod_ip_config.volumes(CONFIG),
        {"name": "cert", "secret": {"secretName": CERT_SECRET}},
    ]
    init = pod_ip_config.init_container(CONFIG_FILE, NO_JOBS_FILE)
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes, init=[init])


def served(hook: dict[str, Any]) -> bool:
    """True when the webhook's handler exists with only `batch/job` enabled."""
    groups = {g for rule in hook.get("rules") or [] for g in rule.get("apiGroups") or []}
    return bool(groups) and groups <= SERVED_GROUPS


def manifests(ctx: Context) -> list[Manifest]:
    """Everything the install creates, CRDs first, webhooks last (once their Service exists)."""
    src = upstream()
    role = objects.first(objects.documents(src / "role.yaml"), "ClusterRole")
    secrets = objects.first(objects.documents(src / "manager_secrets_role.yaml"), "Role")
    cert = serving(CERT_SECRET, SERVICE, NAMESPACE)
    hooks = point_webhooks(
        objects.documents(src / "manifests.yaml"),
        SERVICE,
        NAMESPACE,
        cert.ca_bundle,
        keep=served,
        prefix="kueue-",
    )
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *objects.documents(src / "bases"),
        *rbac(role["rules"], secrets["rules"]),
        cert.secret,
        # both Configurations: the one in use, and the one the queue-jobs-unmanaged fault takes
        objects.configmap(
            CONFIG, NAMESPACE, CONFIG_FILE, config_text(), {NO_JOBS_FILE: config_text(jobs=False)}
        ),
        webhook_service(SERVICE, NAMESPACE, LABELS, WEBHOOK_PORT),
        deployment(),
        *hooks,
    ]


def ready(api: Any) -> str | None:
    """Ready once a ResourceFlavor passes its webhooks (a server-side dry run)."""
    return answers(
        api, {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "sim-ready"}}
    )


COMPONENT = Component(
    name="kueue",
    summary="Kueue v0.17 job queueing (quota admission, all-or-nothing start), webhooks on its pod",
    pin="KUEUE_VERSION",
    images={"kueue": Image("kueue")},
    manifests=manifests,
    ready=ready,
)
