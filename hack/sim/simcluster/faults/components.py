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
from collections.abc import Mapping
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


class NotRecorded(LookupError):
    """An installed component whose install applied no such object, or several."""


def recorded(sim: Sim, component: str, kind: str) -> tuple[str, str]:
    """(namespace, name) of the one `kind` object the install of `component` applied.

    The run's journal has what the install applied, named as the recipe's values
    name it under `sim recipe` (`fullnameOverride` ...), so a fault acts on the
    object that is there, not on the default release's name. NotRecorded when the
    journal holds none or several.
    """
    refs = install.journal(sim).get(component, [])
    found = [(str(r.get("namespace")), str(r["name"])) for r in refs if r.get("kind") == kind]
    if len(found) != 1:
        named = ", ".join(f"{ns}/{name}" for ns, name in found)
        raise NotRecorded(
            f"the install of {component} applied {len(found)} {kind} objects"
            + (f" ({named})" if named else "")
            + ", expected exactly one"
        )
    return found[0]


def installed_workloads(
    sim: Sim, names: Mapping[str, tuple[str, str] | None]
) -> list[tuple[str, str]]:
    """(namespace, Deployment) of each component in `names` that is installed; a component
    given None has the one Deployment its install applied (`recorded`)."""
    running = {c.name for c in install.installed(sim)}
    return [
        where or recorded(sim, component, "Deployment")
        for component, where in names.items()
        if component in running
    ]


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
DUPLICATE_SECRET = "sim-duplicate-scrape"
DUPLICATE_JOB = "sim-duplicate-pods"


def _prometheus_installed(sim: Sim) -> bool:
    running = {c.name for c in install.installed(sim)}
    return {"prometheus", "prometheus-operator"} <= running


GENERATED_KEY = "prometheus.yaml.gz"  # in the operator's config Secret (`generated_secret`)
SETTLE_SECONDS = 120.0  # the operator writing the configuration; the new pod becoming ready


def prometheus_object(sim: Sim) -> tuple[str, str]:
    """(namespace, name) of the `Prometheus` object the install of prometheus applied:
    ``<fullname>-prometheus`` of the recipe's values, or the default release's."""
    return recorded(sim, "prometheus", "Prometheus")


def generated_secret(name: str) -> str:
    """The Secret the operator writes the configuration of `Prometheus` `name` into:
    ``prometheus-<name>`` (prometheus-operator v0.85 pkg/prometheus/common.go,
    `ConfigSecretName`)."""
    return f"prometheus-{name}"


def patch_prometheus(sim: Sim, spec: dict[str, object], required: bool, marker: str) -> bool:
    """Merge `spec` into the `Prometheus` object; Prometheus then runs the result.

    `required` is set when applying a fault (healing skips an absent Prometheus);
    `marker` is text the operator's generated configuration holds while the fault
    is on and lacks once healed (see `restart_on`). Returns False when the
    operator's Prometheus is not installed (`required` raises LookupError then);
    NotRecorded when it is but its install applied no `Prometheus`, or several.
    """
    if not _prometheus_installed(sim):
        if required:
            raise LookupError("prometheus and prometheus-operator")
        return False
    ns, name = prometheus_object(sim)
    client.CustomObjectsApi(kube.api_client(sim.kubeconfig)).patch_namespaced_custom_object(
        "monitoring.coreos.com", "v1", ns, "prometheuses", name, {"spec": spec}
    )
    restart_on(sim, (ns, name), marker, present=required)
    return True


def generated_config(core: client.CoreV1Api, where: tuple[str, str]) -> str:
    """The configuration the operator generated for `Prometheus` `where` ("" before it has)."""
    ns, name = where
    secret = kube.ignore_not_found(lambda: core.read_namespaced_secret(generated_secret(name), ns))
    data = ((secret.data or {}) if secret else {}).get(GENERATED_KEY)
    return gzip.decompress(base64.b64decode(data)).decode() if data else ""


def restart_on(sim: Sim, where: tuple[str, str], marker: str, present: bool) -> None:
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
    ns, name = where
    while (marker in generated_config(core, where)) != present:
        if time.monotonic() > deadline:
            state = "written" if present else "removed"
            raise install.ComponentError(
                f"prometheus-operator has not {state} {marker!r} in {generated_secret(name)} "
                f"in {SETTLE_SECONDS:.0f} s"
            )
        time.sleep(0.5)
    for pod in core.list_namespaced_pod(ns, label_selector=prometheus.SELECTOR).items:
        kube.ignore_not_found(lambda pod=pod: core.delete_namespaced_pod(pod.metadata.name, ns))
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
    from simcluster.components import prometheus

    core = client.CoreV1Api(kube.api_client(sim.kubeconfig))
    if not _prometheus_installed(sim):
        if on:
            raise LookupError("prometheus and prometheus-operator")
        # healing after prometheus was removed: its Secret may outlive it
        kube.ignore_not_found(
            lambda: core.delete_namespaced_secret(DUPLICATE_SECRET, prometheus.NAMESPACE)
        )
        return
    ns = prometheus_object(sim)[0]
    if on:
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
