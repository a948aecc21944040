"""Faults of components: what `hack/sim/sim fault` does to a running component.

What is modelled (and nothing more): a component that is down has its
Deployment scaled to zero, so its pod is deleted and the Service in front of
it has no endpoint (as after a crash loop or an eviction); healing scales it
back to what it had, kept in the annotation `sim.aicr.dev/replicas-before-fault`.
A misconfigured one gets other container args (a new pod rolls out), or its
webhooks another failurePolicy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml
from kubernetes import client

from simcluster import kube
from simcluster.components import install

if TYPE_CHECKING:
    from simcluster.cluster import Sim

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
        dep = kube.ignore_not_found(lambda ns=ns, name=name: apps.read_namespaced_deployment(
            name, ns))  # fmt: skip
        if dep is None:
            continue
        before = (dep.metadata.annotations or {}).get(BEFORE)
        if before is None:
            continue
        apps.patch_namespaced_deployment(
            name, ns, {"metadata": {"annotations": {BEFORE: None}},
                       "spec": {"replicas": int(before)}}
        )  # fmt: skip


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


def patch_prometheus(sim: Sim, spec: dict[str, object], required: bool) -> bool:
    """Merge `spec` into the `Prometheus` object; the operator rolls the change out.

    Returns False when the operator's Prometheus is not installed (`required` raises then).
    """
    if not _prometheus_installed(sim):
        if required:
            raise LookupError("prometheus and prometheus-operator")
        return False
    ns, name = PROMETHEUS
    client.CustomObjectsApi(kube.api_client(sim.kubeconfig)).patch_namespaced_custom_object(
        "monitoring.coreos.com", "v1", ns, "prometheuses", name, {"spec": spec})  # fmt: skip
    return True


def duplicate_scrape_job() -> dict[str, object]:
    """A catch-all job that scrapes every pod port named `http-metrics` a second time."""
    return {
        "job_name": DUPLICATE_JOB,
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            {"source_labels": ["__meta_kubernetes_pod_container_port_name"],
             "regex": "http-metrics", "action": "keep"},
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        ],
    }  # fmt: skip


def set_duplicate_scrape(sim: Sim, on: bool) -> None:
    """Add (or remove) the catch-all job through the Prometheus's additionalScrapeConfigs."""
    core = client.CoreV1Api(kube.api_client(sim.kubeconfig))
    ns = PROMETHEUS[0]
    if on:
        if not _prometheus_installed(sim):
            raise LookupError("prometheus and prometheus-operator")
        body = {"metadata": {"name": DUPLICATE_SECRET},
                "stringData": {"scrape.yaml": yaml.safe_dump([duplicate_scrape_job()])}}
        kube.ignore_not_found(lambda: core.delete_namespaced_secret(DUPLICATE_SECRET, ns))
        core.create_namespaced_secret(ns, body)
        patch_prometheus(sim, {"additionalScrapeConfigs": {"name": DUPLICATE_SECRET,
                                                           "key": "scrape.yaml"}}, True)
        return
    patch_prometheus(sim, {"additionalScrapeConfigs": None}, False)
    kube.ignore_not_found(lambda: core.delete_namespaced_secret(DUPLICATE_SECRET, ns))
