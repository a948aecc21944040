"""Pure functions that build every object a run applies: no client, no I/O.

Apply order matters and is the order ``render_run`` returns: the run namespace and
its inputs first, then per check its ServiceAccount, RBAC, result ConfigMap,
workload namespace and finally its Job (a Job created before its ServiceAccount
would have its pod refused by admission).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

from aicr import __version__
from aicr import defaults as d
from aicr.catalog.model import workload_pod_security
from aicr.kube import names
from aicr.kube.placement import Placement
from aicr.plan import Plan, PlannedCheck
from aicr.runner.context import RunContext

PROMETHEUS_COMPONENT = "kube-prometheus-stack"
PROMETHEUS_LABELS = {"app.kubernetes.io/name": "prometheus"}
HOSTNAME_TOPOLOGY = "kubernetes.io/hostname"
CONTAINER = "check"
RUN_VOLUME = "run"
TMP_VOLUME = "tmp"

Manifest = dict[str, Any]


@dataclass(frozen=True)
class PrometheusTarget:
    """Where the Prometheus pods are, as far as the run could find out.

    ``replicas`` is the number of Prometheus pods found; None when nobody looked
    (``--dry-run``), which renders the intended required affinity.
    """

    namespace: str | None
    replicas: int | None = None

    @property
    def required(self) -> bool:
        """Pin to the Prometheus node only when there is exactly one to pin to."""
        return self.namespace is not None and self.replicas in (None, 1)


def prometheus_namespace(ctx: RunContext) -> str | None:
    """The namespace of the recipe's kube-prometheus-stack component, if it declares one."""
    component = ctx.recipe.component(PROMETHEUS_COMPONENT)
    return component.namespace if component and component.is_enabled else None


def _meta(name: str, labels: dict[str, str], namespace: str | None = None) -> Manifest:
    meta: Manifest = {"name": name, "labels": dict(labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def namespace(run_id: str, name: str, *, part: str, pod_security: str = "restricted") -> Manifest:
    """A namespace the run creates, labelled with the run and its Pod Security level."""
    labels = {
        **names.run_labels(run_id),
        names.PART_LABEL: part,
        "pod-security.kubernetes.io/enforce": pod_security,
        "pod-security.kubernetes.io/warn": pod_security,
        "pod-security.kubernetes.io/audit": pod_security,
    }
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, labels)}


def _tolerations(placement: Placement) -> list[dict[str, str]]:
    return [t.as_dict() for t in placement.tolerations]


def run_info(ctx: RunContext) -> dict[str, Any]:
    """``run.json``: what a check needs to know about its run beyond recipe and config."""
    info: dict[str, Any] = {
        "runId": ctx.run_id,
        "namespace": ctx.namespace,
        "toolVersion": __version__,
        "recipeSource": ctx.recipe_source,
        "workloads": {
            "nodeSelector": dict(ctx.workloads.node_selector),
            "tolerations": _tolerations(ctx.workloads),
        },
    }
    if ctx.check_inputs:
        info["checkInputs"] = ctx.check_inputs
    return info


def _dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def inputs_configmap(ctx: RunContext) -> Manifest:
    """The run ConfigMap: recipe, snapshot (when there is one), config and run.json."""
    data = {
        "recipe.yaml": _dump_yaml(
            ctx.recipe.model_dump(mode="json", by_alias=True, exclude_none=True)
        ),
        "config.yaml": _dump_yaml(
            ctx.config.model_dump(mode="json", by_alias=True, exclude_none=True)
        ),
        "run.json": json.dumps(run_info(ctx), indent=2, sort_keys=True) + "\n",
    }
    if ctx.snapshot is not None:
        data["snapshot.yaml"] = _dump_yaml(
            ctx.snapshot.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
    labels = {**names.run_labels(ctx.run_id), names.PART_LABEL: "inputs"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(names.inputs_name(ctx.run_id), labels, ctx.namespace),
        "data": data,
    }


def _check_labels(ctx: RunContext, check: PlannedCheck, part: str) -> dict[str, str]:
    return {**names.check_labels(ctx.run_id, check.name, check.phase.value), names.PART_LABEL: part}


def service_account(ctx: RunContext, check: PlannedCheck) -> Manifest:
    """The check's own identity; nothing but the rules below is bound to it."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _meta(
            names.check_name(ctx.run_id, check.name),
            _check_labels(ctx, check, "check"),
            ctx.namespace,
        ),
        "automountServiceAccountToken": False,
    }


def _rules(spec_rules: Any, ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    """The catalog's rules; ``ownName`` ones name the check's run-unique workload namespace."""
    out = []
    for rule in spec_rules:
        item: Manifest = {
            "apiGroups": list(rule.api_groups),
            "resources": list(rule.resources),
            "verbs": list(rule.verbs),
        }
        if rule.own_name:
            item["resourceNames"] = [names.workload_namespace(ctx.run_id, check.name)]
        elif rule.resource_names:
            item["resourceNames"] = list(rule.resource_names)
        out.append(item)
    return out


def _subject(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    return [
        {
            "kind": "ServiceAccount",
            "name": names.check_name(ctx.run_id, check.name),
            "namespace": ctx.namespace,
        }
    ]


def _binding(
    kind: str, role_kind: str, ctx: RunContext, check: PlannedCheck, namespace: str | None
) -> Manifest:
    name = names.check_name(ctx.run_id, check.name)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, _check_labels(ctx, check, "check"), namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": _subject(ctx, check),
    }


def cluster_rbac(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    """ClusterRole + binding holding exactly the catalog's ``access`` rules (none if empty)."""
    if not check.spec.access:
        return []
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(
            names.check_name(ctx.run_id, check.name), _check_labels(ctx, check, "check")
        ),
        "rules": _rules(check.spec.access, ctx, check),
    }
    return [role, _binding("ClusterRoleBinding", "ClusterRole", ctx, check, None)]


def result_rbac(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    """Role + binding in the run namespace: write this check's own result object, nothing else.

    The orchestrator creates the (empty) result ConfigMap, so the check needs no
    ``create`` at all and ``resourceNames`` pins it to its own object: a check can
    neither forge another check's result nor fill the namespace.
    """
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(
            names.check_name(ctx.run_id, check.name),
            _check_labels(ctx, check, "check"),
            ctx.namespace,
        ),
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": [names.result_name(ctx.run_id, check.name)],
                "verbs": ["get", "patch", "update"],
            }
        ],
    }
    return [role, _binding("RoleBinding", "Role", ctx, check, ctx.namespace)]


def secret_rbac(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    """A Role + binding per ``paramSecrets`` entry: ``get`` on exactly one Secret.

    The Secret is the one ``params.<entry>.secretRef`` names, in its own namespace
    (nothing when the param is unset).
    """
    out: list[Manifest] = []
    params = ctx.config.check(check.name).params
    labels = _check_labels(ctx, check, "check")
    for entry in check.spec.param_secrets:
        secret_ref = (params.get(entry) or {}).get("secretRef") or {}
        namespace, secret = secret_ref.get("namespace"), secret_ref.get("name")
        if not namespace or not secret:
            continue
        name = f"{names.check_name(ctx.run_id, check.name)}-{entry.lower()}"
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(name, labels, namespace),
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["secrets"],
                    "resourceNames": [secret],
                    "verbs": ["get"],
                }
            ],
        }
        binding = _binding("RoleBinding", "Role", ctx, check, namespace)
        binding["metadata"]["name"] = binding["roleRef"]["name"] = name
        out += [role, binding]
    return out


def result_configmap(ctx: RunContext, check: PlannedCheck) -> Manifest:
    """The empty result object the check fills in."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(
            names.result_name(ctx.run_id, check.name),
            _check_labels(ctx, check, "result"),
            ctx.namespace,
        ),
        "data": {},
    }


def workload_objects(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    """The check's run-unique workload namespace with its ``workloadAccess`` rules inside.

    The run creates the namespace (not the check): whoever creates a namespace gets
    no rights in it, so a check could only use one it made itself with cluster-wide
    rules, which least privilege forbids.
    """
    if not check.spec.workload_access:
        return []
    ns = names.workload_namespace(ctx.run_id, check.name)
    labels = {**_check_labels(ctx, check, "workloads")}
    level = ctx.workload_pod_security.get(check.name) or workload_pod_security(check.spec)
    namespace_obj = namespace(ctx.run_id, ns, part="workloads", pod_security=level)
    namespace_obj["metadata"]["labels"].update(labels)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(names.check_name(ctx.run_id, check.name), labels, ns),
        "rules": _rules(check.spec.workload_access, ctx, check),
    }
    return [namespace_obj, role, _binding("RoleBinding", "Role", ctx, check, ns)]


def _affinity_term(target: PrometheusTarget) -> Manifest:
    term: Manifest = {
        "labelSelector": {"matchLabels": dict(PROMETHEUS_LABELS)},
        "topologyKey": HOSTNAME_TOPOLOGY,
    }
    if target.namespace:
        term["namespaces"] = [target.namespace]
    else:
        term["namespaceSelector"] = {}  # Prometheus's namespace unknown: any namespace
    return term


def prometheus_affinity(target: PrometheusTarget, pinned: bool) -> Manifest:
    """Pod affinity to the Prometheus pod: required when there is exactly one, else preferred.

    ``pinned`` (the user gave ``--orchestrator-node-selector``) also softens it: the
    user's explicit placement wins over ours instead of making the pod unschedulable.
    """
    term = _affinity_term(target)
    if target.required and not pinned:
        return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": term}
            ]
        }
    }


def _security_context() -> Manifest:
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": d.RUN_AS_USER,
        "runAsGroup": d.RUN_AS_USER,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _env(ctx: RunContext, check: PlannedCheck) -> list[Manifest]:
    def field(name: str, path: str) -> Manifest:
        return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}

    return [
        {"name": d.RESULT_CONFIGMAP_ENV, "value": names.result_name(ctx.run_id, check.name)},
        {"name": d.RUN_DIR_ENV, "value": d.RUN_DIR},
        {"name": d.CHECK_TIMEOUT_ENV, "value": str(int(check.timeout.total_seconds()))},
        {"name": "HOME", "value": "/tmp"},  # the root filesystem is read-only
        field("AICR_NODE_NAME", "spec.nodeName"),
        field("AICR_POD_NAME", "metadata.name"),
    ]


def _token_volume() -> Manifest:
    """The check's token, mounted explicitly (the ServiceAccount does not automount)."""
    return {
        "name": "token",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ]
        },
    }


def job(ctx: RunContext, check: PlannedCheck, prometheus: PrometheusTarget | None) -> Manifest:
    """The check's Job: one pod, no retries, bounded by the check's timeout."""
    name = names.check_name(ctx.run_id, check.name)
    labels = _check_labels(ctx, check, "check")
    resources = {"cpu": check.spec.resources.cpu, "memory": check.spec.resources.memory}
    container: Manifest = {
        "name": CONTAINER,
        "image": ctx.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["aicr", "check", "run", check.name],
        "env": _env(ctx, check),
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "securityContext": _security_context(),
        "terminationMessagePath": d.TERMINATION_LOG,
        # A crash before the check writes its summary still leaves the log tail.
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [
            {"name": RUN_VOLUME, "mountPath": d.RUN_DIR, "readOnly": True},
            {"name": TMP_VOLUME, "mountPath": "/tmp"},
            {
                "name": "token",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
    }
    pod_spec: Manifest = {
        "serviceAccountName": name,
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": d.TERMINATION_GRACE_SECONDS,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": d.RUN_AS_USER,
            "runAsGroup": d.RUN_AS_USER,
            "fsGroup": d.RUN_AS_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [
            {"name": RUN_VOLUME, "configMap": {"name": names.inputs_name(ctx.run_id)}},
            {"name": TMP_VOLUME, "emptyDir": {"sizeLimit": "256Mi"}},
            _token_volume(),
        ],
    }
    if check.host_paths:
        _mount_host_paths(check, container, pod_spec)
    if check.node:
        pod_spec["affinity"] = _on_node(check.node)
    if ctx.orchestrator.tolerations:
        pod_spec["tolerations"] = _tolerations(ctx.orchestrator)
    if ctx.orchestrator.node_selector:
        pod_spec["nodeSelector"] = dict(ctx.orchestrator.node_selector)
    if check.spec.queries_prometheus:
        target = prometheus or PrometheusTarget(prometheus_namespace(ctx))
        pod_spec["affinity"] = prometheus_affinity(target, bool(ctx.orchestrator.node_selector))
    if ctx.image_pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": s} for s in ctx.image_pull_secrets]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(name, labels, ctx.namespace),
        "spec": {
            "backoffLimit": 0,
            "completions": 1,
            "parallelism": 1,
            "activeDeadlineSeconds": max(1, int(check.timeout.total_seconds())),
            "ttlSecondsAfterFinished": d.JOB_TTL_SECONDS,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }


def _mount_host_paths(check: PlannedCheck, container: Manifest, pod_spec: Manifest) -> None:
    """Read-only hostPath mounts of exactly the check's paths, each at its own place."""
    for i, host in enumerate(check.host_paths):
        name = f"host-{i}"
        kind = "Directory" if host.folder else "File"
        pod_spec["volumes"].append({"name": name, "hostPath": {"path": host.path, "type": kind}})
        container["volumeMounts"].append({"name": name, "mountPath": host.path, "readOnly": True})


def _on_node(node: str) -> Manifest:
    """Required affinity to one node by name, through the scheduler (as a DaemonSet pod)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


# Shared by every run in a namespace on purpose: it is how they keep out of each
# other's way (aicr.runner.gpu_lease), so unlike everything else it is not run-unique
# and carries no run's label (one run's cleanup must not delete the others' holdings).
GPU_LEASE_NAME = "aicr-exclusive-gpus"
RESERVATIONS_ANNOTATION = "aicr.dev/gpu-reservations"


def gpu_lease(namespace: str, holdings: dict[str, Any]) -> Manifest:
    """The Lease recording every GPU reservation of every run in ``namespace``.

    ``holdings`` maps ``<run id>/<check>`` to what that check holds; the renew
    time is added when it is applied.
    """
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": GPU_LEASE_NAME,
            "namespace": namespace,
            "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY},
            "annotations": {RESERVATIONS_ANNOTATION: json.dumps(holdings, sort_keys=True)},
        },
        "spec": {
            "holderIdentity": ",".join(sorted(holdings)),
            "leaseDurationSeconds": d.GPU_LEASE_SECONDS,
        },
    }


def check_objects(
    ctx: RunContext, check: PlannedCheck, prometheus: PrometheusTarget | None = None
) -> list[Manifest]:
    """Everything one check needs, in apply order, its Job last."""
    return [
        service_account(ctx, check),
        *cluster_rbac(ctx, check),
        *result_rbac(ctx, check),
        *secret_rbac(ctx, check),
        result_configmap(ctx, check),
        *workload_objects(ctx, check),
        job(ctx, check, prometheus),
    ]


def run_objects(ctx: RunContext) -> list[Manifest]:
    """What the whole run shares: its namespace (created only when absent) and its inputs."""
    return [
        namespace(ctx.run_id, ctx.namespace, part="run"),
        inputs_configmap(ctx),
    ]


def render_run(
    plan: Plan, ctx: RunContext, prometheus: PrometheusTarget | None = None
) -> list[Manifest]:
    """Every object the run would apply, in apply order (what ``--dry-run`` prints)."""
    out = run_objects(ctx)
    needs = {
        names.holder_id(ctx.run_id, c.name): {"need": c.reserves}
        for c in plan.checks
        if c.gpus is not None and c.skip_reason is None
    }
    if needs:  # what the run adds to the Lease; the nodes are decided as each check starts
        out.append(gpu_lease(ctx.namespace, needs))
    for check in plan.checks:
        if check.skip_reason is None:
            out.extend(check_objects(ctx, check, prometheus))
    return out


class _ReadableDumper(yaml.SafeDumper):
    """Multi-line strings (the recipe inside the inputs ConfigMap) as literal blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str)


def to_yaml(objects: list[Manifest]) -> str:
    """A multi-document YAML stream of ``objects``, readable by a security reviewer."""
    return yaml.dump_all(objects, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True)
