"""Faults of components: what `hack/sim/sim fault` does to a running component.

What is modelled (and nothing more): a component that is down has its
Deployment scaled to zero, so its pod is deleted and the Service in front of
it has no endpoint (as after a crash loop or an eviction); healing scales it
back to what it had, kept in the annotation `sim.aicr.dev/replicas-before-fault`.
A misconfigured one gets other container args (a new pod rolls out), or its
webhooks another failurePolicy. A fault on the operator's `Prometheus` object
ends with Prometheus running the changed configuration: once the operator has
written it, the Prometheus pod is restarted on it (see `restart_on`).
"""

from __future__ import annotations

import base64
import gzip
import time
from typing import TYPE_CHECKING

import yaml
from kubernetes import client

from simcluster.cluster import kube
from simcluster.components import install

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

BEFORE = "sim.aicr.dev/replicas-before-fault"


def _apps(sim: Sim) -> client.AppsV1Api:
    return client.AppsV1Api(kube.api_client(sim.kubeconfig))


def installed_workloads(sim: Sim, names: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """(namespace, Deployment) of each component in `names` that is installed."""
    running = {c.name for c in install.installed(sim)}
    return [where for component, where in names.items() if component in running]


def stop(sim: Sim, workloads: list[tuple[str, str]]) -> None:
    """Scale each Deployment to zero, remembering its replicas."""
    apps = _apps(sim)
    for ns, name in workloads:
        dep = apps.read_namespaced_deployment(name, ns)
        notes = dep.metadata.annotations or {}
        before = notes.get(BEFORE) or str(dep.spec.replicas or 1)
        apps.patch_namespaced_deployment(
            name, ns, {"metadata": {"annotations": {BEFORE: before}}, "spec": {"replicas": 0}}
        )


def start(sim: Sim, workloads: list[tuple[str, str]]) -> None:
    """Scale each Deployment back to the replicas it had before `stop`."""
    apps = _apps(sim)
    for ns, name in workloads:
        dep = kube.ignore_not_found(
            lambda ns=ns, name=name: apps.read_namespaced_deployment(name, ns)
        )
        if dep is None:
            continue
        before = (dep.metadata.annotations or {}).get(BEFORE)
        if before is None:
            continue
        apps.patch_namespaced_deployment(
            name,
            ns,
            {"metadata": {"annotations": {BEFORE: None}}, "spec": {"replicas": int(before)}},
        )


def set_args(sim: Sim, namespace: str, name: str, args: list[str]) -> None:
    """Replace the first container's args of a Deployment (a new pod rolls out)."""
    apps = _apps(sim)
    dep = apps.read_namespaced_deployment(name, namespace)
    container = dep.spec.template.spec.containers[0].name
    body = {"spec": {"template": {"spec": {"containers": [{"name": container, "args": args}]}}}}
    apps.patch_namespaced_deployment(name, namespace, body)


def set_failure_policy(sim: Sim, config: str, policy: str) -> None:
    """Set every webhook of ValidatingWebhookConfiguration `config` to `policy` (Fail/Ignore)."""
    adm = client.AdmissionregistrationV1Api(kube.api_client(sim.kubeconfig))
    current = adm.read_validating_webhook_configuration(config)
    hooks = [{"name": h.name, "failurePolicy": policy} for h in current.webhooks or []]
    adm.patch_validating_webhook_configuration(config, {"webhooks": hooks})


# ---- the Prometheus that prometheus-operator manages ------------------------------------
PROMETHEUS = ("monitoring", "kube-prometheus-stack-prometheus")  # the `Prometheus` object
DUPLICATE_SECRET = "sim-duplicate-scrape"
DUPLICATE_JOB = "sim-duplicate-pods"


def _prometheus_installed(sim: Sim) -> bool:
    running = {c.name for c in install.installed(sim)}
    return {"prometheus", "prometheus-operator"} <= running


GENERATED = (f"prometheus-{PROMETHEUS[1]}", "prometheus.yaml.gz")  # the operator's config Secret
SETTLE_SECONDS = 120.0  # the operator writing the configuration; the new pod becoming ready


def patch_prometheus(sim: Sim, spec: dict[str, object], required: bool, marker: str) -> bool:
    """Merge `spec` into the `Prometheus` object; Prometheus then runs the result.

    `required` is set when applying a fault (healing skips an absent Prometheus);
    `marker` is text the operator's generated configuration holds while the fault
    is on and lacks once healed (see `restart_on`). Returns False when the
    operator's Prometheus is not installed (`required` raises then).
    """
    if not _prometheus_installed(sim):
        if required:
            raise LookupError("prometheus and prometheus-operator")
        return False
    ns, name = PROMETHEUS
    client.CustomObjectsApi(kube.api_client(sim.kubeconfig)).patch_namespaced_custom_object(
        "monitoring.coreos.com", "v1", ns, "prometheuses", name, {"spec": spec}
    )
    restart_on(sim, marker, present=required)
    return True


def generated_config(core: client.CoreV1Api) -> str:
    """The Prometheus configuration the operator generated ("" before it has)."""
    name, key = GENERATED
    secret = kube.ignore_not_found(lambda: core.read_namespaced_secret(name, PROMETHEUS[0]))
    data = ((secret.data or {}) if secret else {}).get(key)
    return gzip.decompress(base64.b64decode(data)).decode() if data else ""


def restart_on(sim: Sim, marker: str, present: bool) -> None:
    """Wait until the generated configuration has (or lacks) `marker`, then restart
    Prometheus on it and wait until the new pod is ready and its reloader watches.

    The operator only rewrites the configuration Secret (the StatefulSet and its pod
    stay as they are) and the config reloader would pick it up. But v0.85's reloader
    watches the file itself, which the kubelet's atomic swap of the volume replaces:
    after a pod's first change it sees none until its periodic re-read, every
    3 minutes (prometheus-operator PR 7366). A fault is a Prometheus that runs the
    misconfiguration, as on a cluster where it was set long before the check, so the
    pod is restarted on it, which also leaves its reloader following the next change.
    """
    from simcluster.components import prometheus

    api = kube.api_client(sim.kubeconfig)
    core = client.CoreV1Api(api)
    deadline = time.monotonic() + SETTLE_SECONDS
    while (marker in generated_config(core)) != present:
        if time.monotonic() > deadline:
            state = "written" if present else "removed"
            raise install.ComponentError(
                f"prometheus-operator has not {state} {marker!r} in {GENERATED[0]} "
                f"in {SETTLE_SECONDS:.0f} s"
            )
        time.sleep(0.5)
    for pod in core.list_namespaced_pod(PROMETHEUS[0], label_selector=prometheus.SELECTOR).items:
        kube.ignore_not_found(
            lambda pod=pod: core.delete_namespaced_pod(pod.metadata.name, PROMETHEUS[0])
        )
    install.wait_ready(sim, [prometheus.COMPONENT], max(deadline - time.monotonic(), 30.0))


def duplicate_scrape_job() -> dict[str, object]:
    """A catch-all job that scrapes every pod port named `http-metrics` a second time."""
    return {
        "job_name": DUPLICATE_JOB,
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            {
                "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                "regex": "http-metrics",
                "action": "keep",
            },
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        ],
    }


def set_duplicate_scrape(sim: Sim, on: bool) -> None:
    """Add (or remove) the catch-all job through the Prometheus's additionalScrapeConfigs."""
    core = client.CoreV1Api(kube.api_client(sim.kubeconfig))
    ns = PROMETHEUS[0]
    if on:
        if not _prometheus_installed(sim):
            raise LookupError("prometheus and prometheus-operator")
        body = {
            "metadata": {"name": DUPLICATE_SECRET},
            "stringData": {"scrape.yaml": yaml.safe_dump([duplicate_scrape_job()])},
        }
        kube.ignore_not_found(lambda: core.delete_namespaced_secret(DUPLICATE_SECRET, ns))
        core.create_namespaced_secret(ns, body)
        ref = {"name": DUPLICATE_SECRET, "key": "scrape.yaml"}
        patch_prometheus(sim, {"additionalScrapeConfigs": ref}, True, DUPLICATE_JOB)
        return
    patch_prometheus(sim, {"additionalScrapeConfigs": None}, False, DUPLICATE_JOB)
    kube.ignore_not_found(lambda: core.delete_namespaced_secret(DUPLICATE_SECRET, ns))
