"""The AI operators robust-controller knows, as data: where they run, what they serve, what to send.

No client and no I/O. Each ``Operator`` names the recipe component that deploys
it, its controller Deployment, its CRDs, the validating webhook judged, an
object the CRD schema accepts but that webhook must refuse (and the rule it
breaks), the CPU-only objects that make a valid custom resource (the last one
is the resource whose reconcile is awaited), when that resource is ready, and
the label that marks the pods and Services the operator makes for it. The facts
come from each project's published CRDs, webhook registrations and validators:
KubeRay v1.5.0 (ray-operator), Dynamo (deploy/cloud/operator: the
``vdynamographdeployment.kb.io`` webhook, "spec.services must have at least one
service"), Kubeflow Trainer v2 (manifests/base and pkg/webhooks at commit
8c0f5059: TrainingRuntime replicated jobs of an ancestor step "always must be 1").
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aicr.checks.probe_pods import place, restricted_pod_spec
from aicr.kube.placement import Placement

Obj = dict[str, Any]
INVALID = "aicr-invalid"  # the invalid object's name (a dry run: never stored)
VALID = "aicr-valid"  # the valid custom resource's name
CPU = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
TRAINER_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_GROUP = "trainer.kubeflow.org"


@dataclass(frozen=True)
class Workload:
    """What a builder needs: the image, the labels every pod carries, where pods may go.

    The probe session places only pod templates at ``spec.template``; the
    operators' templates sit deeper, so the builders place them themselves.
    """

    image: str
    labels: dict[str, str]
    placement: Placement = field(default_factory=Placement)


@dataclass(frozen=True)
class Operator:
    """One operator robust-controller can judge (see the module docstring)."""

    key: str  # what ``params.operator`` names
    title: str
    component: str  # the recipe component that deploys it
    namespace: str  # its namespace when the recipe does not say
    deployment: str  # its controller Deployment
    crds: tuple[str, ...]
    webhook: str  # the validating webhook the invalid object must be refused by
    rule: str  # the webhook rule the invalid object breaks
    image: str  # the pinned workload image (aicr/checks/images.yaml)
    invalid: Callable[[Workload], Obj]
    valid: Callable[[Workload], list[Obj]]
    ready: Callable[[Obj], bool]
    ready_means: str  # what ``ready`` waits for, for evidence
    child_label: str  # label whose value is the resource's name on the pods it makes
    child_kinds: tuple[str, ...]

    def child_selector(self) -> str:
        """The label selector of the valid resource's children."""
        return f"{self.child_label}={VALID}"


def condition(obj: Obj, kind: str) -> str | None:
    """The status of condition ``kind`` ("True", "False", ...), or None when absent."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return str(c.get("status"))
    return None


def last_status(obj: Obj | None) -> str:
    """How far a custom resource got: its state and conditions, or that it has no status."""
    if obj is None:
        return "the resource is gone"
    status = obj.get("status") or {}
    parts = [f"state {status['state']}"] if status.get("state") else []
    for c in status.get("conditions") or []:
        said = f" ({c['reason']})" if c.get("reason") else ""
        parts.append(f"{c.get('type')}={c.get('status')}{said}")
    return ", ".join(parts) if parts else "no status (never reconciled)"


def _pod(
    work: Workload,
    container: Obj,
    restart: str | None = None,
    uid: int | None = None,
) -> Obj:
    """A pod template restricted Pod Security admits, labelled for the run."""
    spec = restricted_pod_spec([{"resources": copy.deepcopy(CPU), **container}])
    if restart is None:
        del spec["restartPolicy"]  # Deployments and Ray pick their own
    else:
        spec["restartPolicy"] = restart
    if uid is not None:
        spec["securityContext"].update(runAsUser=uid, runAsGroup=uid)
    placed = place({"kind": "Pod", "spec": spec}, work.placement)["spec"]
    return {"metadata": {"labels": dict(work.labels)}, "spec": placed}


# ---- KubeRay ---------------------------------------------------------------------------------
RAY_UID = 1000  # the ray user of the rayproject/ray images


def _ray_cluster(work: Workload, name: str, groups: list[str]) -> Obj:
    pod = _pod(work, {"name": "ray-head", "image": work.image}, uid=RAY_UID)
    worker = _pod(work, {"name": "ray-worker", "image": work.image}, uid=RAY_UID)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": pod},
            "workerGroupSpecs": [
                {
                    "groupName": g,
                    "replicas": 0,
                    "minReplicas": 0,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": worker,
                }
                for g in groups
            ],
        },
    }


KUBERAY = Operator(
    key="kuberay",
    title="KubeRay",
    component="kuberay-operator",
    namespace="ray-system",
    deployment="kuberay-operator",
    crds=("rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io"),
    webhook="vraycluster.kb.io",
    rule="worker group names must be unique (two worker groups named workers)",
    image="ray",
    invalid=lambda w: _ray_cluster(w, INVALID, ["workers", "workers"]),
    valid=lambda w: [_ray_cluster(w, VALID, [])],
    ready=lambda o: (o.get("status") or {}).get("state") == "ready",
    ready_means="status.state ready (the head pod running and ready)",
    child_label="ray.io/cluster",
    child_kinds=("Pod", "Service"),
)


# ---- Dynamo ----------------------------------------------------------------------------------
def _graph(work: Workload, name: str, services: dict[str, Obj]) -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"services": services},
    }


def _frontend(work: Workload) -> Obj:
    """A CPU-only frontend service: its pod spec inline, the container as ``mainContainer``."""
    spec = _pod(work, {"name": "main", "image": work.image})["spec"]
    main = spec.pop("containers")[0]
    return {
        "componentType": "frontend",
        "replicas": 1,
        "extraPodMetadata": {"labels": dict(work.labels)},
        "extraPodSpec": {**spec, "mainContainer": main},
    }


DYNAMO = Operator(
    key="dynamo",
    title="Dynamo",
    component="dynamo-platform",
    namespace="dynamo-system",
    deployment="dynamo-platform-dynamo-operator-controller-manager",
    crds=("dynamographdeployments.nvidia.com", "dynamocomponentdeployments.nvidia.com"),
    webhook="vdynamographdeployment.kb.io",
    rule="spec.services must have at least one service (an empty services map)",
    image="dynamo-vllm",
    invalid=lambda w: _graph(w, INVALID, {}),
    valid=lambda w: [_graph(w, VALID, {"Frontend": _frontend(w)})],
    ready=lambda o: condition(o, "Ready") == "True",
    ready_means="condition Ready=True",
    child_label="nvidia.com/dynamo-graph-deployment-name",
    child_kinds=("Pod",),
)


# ---- Kubeflow Trainer ------------------------------------------------------------------------
def _runtime(work: Workload, name: str, replicas: int) -> Obj:
    pod = _pod(
        work,
        {
            "name": "node",
            "image": work.image,
            "command": ["sh", "-c", "echo aicr robust-controller"],
        },
        restart="Never",
    )
    job = {
        "name": "node",
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {TRAINER_ANCESTOR: "trainer", **work.labels}},
            "spec": {"template": pod},
        },
    }
    return {
        "apiVersion": f"{TRAINER_GROUP}/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"replicatedJobs": [job]}}},
    }


def _train_job(runtime: str) -> Obj:
    ref = {"name": runtime, "kind": "TrainingRuntime", "apiGroup": TRAINER_GROUP}
    return {
        "apiVersion": f"{TRAINER_GROUP}/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": VALID},
        "spec": {"runtimeRef": ref},
    }


TRAINER = Operator(
    key="trainer",
    title="Kubeflow Trainer",
    component="kubeflow-trainer",
    namespace="kubeflow-system",
    deployment="kubeflow-trainer-controller-manager",
    crds=(
        "trainjobs.trainer.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org",
    ),
    webhook="validator.trainingruntime.trainer.kubeflow.org",
    rule="a replicated job of the trainer ancestor step always must have 1 replica (it has 2)",
    image="ubuntu",
    invalid=lambda w: _runtime(w, INVALID, replicas=2),
    valid=lambda w: [_runtime(w, VALID, replicas=1), _train_job(VALID)],
    ready=lambda o: condition(o, "Complete") == "True",
    ready_means="condition Complete=True (its one CPU pod ran to completion)",
    child_label="jobset.sigs.k8s.io/jobset-name",
    child_kinds=("Pod",),
)

OPERATORS = (KUBERAY, DYNAMO, TRAINER)
BY_KEY = {o.key: o for o in OPERATORS}
