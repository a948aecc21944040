"""The serving stack the benchmark drives: which one, its manifests, and when it is ready.

Three ways, by what the recipe declares:

- ``dynamo-platform`` enabled: the check deploys a Dynamo graph of its own
  (``DynamoGraphDeployment``, ``nvidia.com/v1alpha1``: a frontend and one vLLM
  decode worker with one GPU) in its workload namespace, once the cluster
  serves the CRD; the frontend's Service is ``<graph>-frontend``.
- a ``vllm`` component (its name or chart) whose ``expectedResources`` name a
  Service: the check finds that stack and benchmarks it as deployed.
- neither: the check deploys a plain vLLM Deployment and Service with one GPU.

Pure functions of dicts: no client, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from aicr.checks import health
from aicr.kube.gpus import gpu_toleration
from aicr.kube.pod_status import where
from aicr.recipe.model import ComponentRef, Recipe

Obj = dict[str, Any]
DYNAMO_COMPONENT = "dynamo-platform"
DYNAMO_CRD = "dynamographdeployments.nvidia.com"
DYNAMO_API = "nvidia.com/v1alpha1"
GRAPH_KIND = "DynamoGraphDeployment"
NAME = "aicr-inference"
PORT = 8000
CACHE_MOUNT = "/models"
APP_LABEL = "app.kubernetes.io/name"
GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Stack:
    """The stack to benchmark: where it lives, what judges it ready, what reaches it."""

    flavour: Literal["dynamo", "vllm"]
    deployed: bool  # created by the check (else found as the recipe deployed it)
    namespace: str
    workload_kind: str  # Deployment or DynamoGraphDeployment
    workload: str
    service: str
    objects: list[Obj] = field(default_factory=list)  # what the check creates, in order

    def __str__(self) -> str:
        what = "Dynamo graph" if self.flavour == "dynamo" else "vLLM"
        how = "deployed by the check" if self.deployed else "as the recipe deployed it"
        return (
            f"{what} {self.workload_kind} {self.namespace}/{self.workload}, Service "
            f"{self.service} ({how})"
        )


@dataclass(frozen=True)
class Serving:
    """What a deployed stack runs."""

    model: str
    image: str
    labels: dict[str, str]  # the run's labels, also on pod templates (cleanup finds the pods)
    cache_storage_class: str | None = None
    cache_size: str = "100Gi"
    env: list[dict[str, str]] = field(default_factory=list)  # the model source's (source.py)


def vllm_component(recipe: Recipe) -> ComponentRef | None:
    """The recipe's enabled vLLM component that names a Service, if any."""
    for c in recipe.component_refs:
        named = "vllm" in c.name or "vllm" in (c.chart or "")
        if c.is_enabled and named and any(r.kind == "Service" for r in c.expected_resources or []):
            return c
    return None


def wants_dynamo(recipe: Recipe) -> bool:
    """The recipe deploys the Dynamo platform."""
    c = recipe.component(DYNAMO_COMPONENT)
    return bool(c and c.is_enabled)


def found(component: ComponentRef) -> Stack:
    """The recipe's own vLLM stack: its Service, and its Deployment when it names one."""
    refs = component.expected_resources or []
    svc = next(r for r in refs if r.kind == "Service")
    ns = svc.namespace or component.namespace or "default"
    deploy = next((r for r in refs if r.kind == "Deployment"), None)
    return Stack(
        "vllm",
        False,
        ns,
        "Deployment" if deploy else "Service",
        deploy.name if deploy else svc.name,
        svc.name,
    )


def _cache(serving: Serving) -> tuple[list[Obj], Obj]:
    """The model cache: a claim of the given class, else an emptyDir; (objects, volume)."""
    if not serving.cache_storage_class:
        return [], {"name": "models", "emptyDir": {}}
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"{NAME}-models"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": serving.cache_storage_class,
            "resources": {"requests": {"storage": serving.cache_size}},
        },
    }
    return [claim], {"name": "models", "persistentVolumeClaim": {"claimName": f"{NAME}-models"}}


def vllm(namespace: str, serving: Serving) -> Stack:
    """A plain vLLM Deployment (one GPU, ready on ``/health``) and its Service."""
    claims, volume = _cache(serving)
    selector = {APP_LABEL: NAME}
    container = {
        "name": "vllm",
        "image": serving.image,
        "command": [
            "vllm",
            "serve",
            serving.model,
            "--port",
            str(PORT),
            "--served-model-name",
            serving.model,
        ],
        "env": [{"name": "HF_HOME", "value": f"{CACHE_MOUNT}/hf"}, *serving.env],
        "ports": [{"name": "http", "containerPort": PORT}],
        "readinessProbe": {
            "httpGet": {"path": "/health", "port": PORT},
            "periodSeconds": 5,
            "failureThreshold": 3,
        },
        "resources": {"limits": {GPU: 1}},
        "volumeMounts": [{"name": "models", "mountPath": CACHE_MOUNT}],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": {**serving.labels, **selector}},
                "spec": {
                    "containers": [container],
                    "volumes": [volume],
                    "tolerations": [gpu_toleration()],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME},
        "spec": {
            "selector": selector,
            "ports": [{"name": "http", "port": PORT, "targetPort": "http"}],
        },
    }
    return Stack("vllm", True, namespace, "Deployment", NAME, NAME, [*claims, service, deployment])


def dynamo(namespace: str, serving: Serving) -> Stack:
    """A Dynamo graph: a frontend on port 8000 and one vLLM decode worker with one GPU."""
    claims, volume = _cache(serving)

    def main(command: list[str]) -> Obj:
        return {
            "mainContainer": {
                "image": serving.image,
                "command": command,
                "volumeMounts": [{"name": "models", "mountPath": CACHE_MOUNT}],
            },
            "volumes": [volume],
            "tolerations": [gpu_toleration()],
        }

    graph = {
        "apiVersion": DYNAMO_API,
        "kind": GRAPH_KIND,
        "metadata": {"name": NAME},
        "spec": {
            "backendFramework": "vllm",
            "envs": [{"name": "HF_HOME", "value": f"{CACHE_MOUNT}/hf"}, *serving.env],
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "labels": serving.labels,
                    "extraPodSpec": main(
                        ["python3", "-m", "dynamo.frontend", "--http-port", str(PORT)]
                    ),
                },
                "VllmDecodeWorker": {
                    "componentType": "worker",
                    "replicas": 1,
                    "labels": serving.labels,
                    "resources": {"limits": {"gpu": "1"}},
                    "extraPodSpec": main(
                        ["python3", "-m", "dynamo.vllm", "--model", serving.model]
                    ),
                },
            },
        },
    }
    return Stack("dynamo", True, namespace, GRAPH_KIND, NAME, f"{NAME}-frontend", [*claims, graph])


def graph_ready(obj: Obj) -> bool:
    """A Dynamo graph is ready: state ``successful``, or its Ready condition is True."""
    status = obj.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return status.get("state") == "successful" or ready


def graph_state(obj: Obj | None) -> str:
    """A graph's own account of itself: its state and conditions."""
    if obj is None:
        return "not found"
    state = (obj.get("status") or {}).get("state")
    conditions = where(obj)
    return f"state {state}, {conditions}" if state else conditions


def ready(stack: Stack, obj: Obj) -> bool:
    """The stack's workload object says it is ready."""
    if stack.workload_kind == GRAPH_KIND:
        return graph_ready(obj)
    if stack.workload_kind == "Deployment":
        return not health.deployment(obj)
    return True  # a Service alone: its endpoints decide


def status_of(stack: Stack, obj: Obj | None, pods: list[Obj]) -> str:
    """Why the stack is not ready, in its own words: the workload's status, then its pods'."""
    if stack.workload_kind == GRAPH_KIND:
        own = graph_state(obj)
    elif obj is None:
        own = "not found"
    else:
        own = "; ".join(health.deployment(obj)) or "available"
        own += f" ({where(obj)})"
    lines = [f"{stack.workload_kind} {stack.namespace}/{stack.workload}: {own}"]
    lines += [f"pod {p['metadata']['name']}: {where({**p, 'kind': 'Pod'})}" for p in pods]
    return "; ".join(lines)


def endpoint_urls(slices: list[Obj]) -> list[str]:
    """``http://ADDRESS:PORT`` for every ready endpoint of a Service's EndpointSlices."""
    urls = []
    for s in slices:
        ports = [p for p in s.get("ports") or [] if p.get("port")]
        port = next((p for p in ports if p.get("name") == "http"), ports[0] if ports else None)
        if port is None:
            continue
        for ep in s.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready") is False:
                continue
            for address in ep.get("addresses") or []:
                host = f"[{address}]" if ":" in address else address
                urls.append(f"http://{host}:{port['port']}")
    return sorted(set(urls))
