"""The pure parts of pod-autoscaling: the workload, its HPA, and readings of the HPA's status.

No client and no I/O: manifests and verdict helpers as functions of the API's dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aicr.checks.probe_pods import gpu_claim_template, restricted_pod_spec
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration

Obj = dict[str, Any]
IMAGE = "python"  # in aicr/checks/images.yaml
NAME = "gpu-autoscaled"  # the Deployment, its HPA, its pods' app label
APP_LABEL = "aicr.dev/app"
CLAIM_TEMPLATE = "one-gpu"
CLAIM = "gpu"
PORT = 8080
TARGET = 10  # the HPA's target average value per pod
HIGH = 40  # raised: one pod alone asks for 4 replicas, capped at MAX_REPLICAS
LOW = 0
MIN_REPLICAS, MAX_REPLICAS = 1, 2
CUSTOM_METRICS_GROUP = "custom.metrics.k8s.io"

# A gauge on /metrics whose value a PUT to /load sets (stdlib only: any Python image runs it).
# It listens on the pod's own IP, so pods that share a network namespace cannot collide.
SERVER = """\
import http.server, os
metric, port = os.environ["METRIC"], int(os.environ["PORT"])
state = {"value": "0"}
class Handler(http.server.BaseHTTPRequestHandler):
    def send(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path != "/metrics":
            return self.send(404)
        self.send(200, (f"# HELP {metric} The load pod-autoscaling sets; its HPA scales on it.\\n"
                        f"# TYPE {metric} gauge\\n{metric} {state['value']}\\n").encode())
    def do_PUT(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode().strip()
        if self.path != "/load":
            return self.send(404)
        try:
            float(raw)
        except ValueError:
            return self.send(400, b"not a number\\n")
        state["value"] = raw
        self.send(204)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer((os.environ["POD_IP"], port), Handler).serve_forever()
"""


def claim_template() -> Obj:
    """DRA mode: each replica's claim for one whole GPU of the NVIDIA DRA driver."""
    return gpu_claim_template(CLAIM_TEMPLATE, 1, CLAIM)


def deployment(image: str, metric: str, labels: dict[str, str], dra: bool) -> Obj:
    """One replica serving ``metric`` (0 until set), one GPU each, scraped by annotation."""
    gpu = {"claims": [{"name": CLAIM}]} if dra else {"limits": {GPU_RESOURCE: "1"}}
    container = {
        "name": "server",
        "image": image,
        "command": ["python3", "-c", SERVER],
        "env": [
            {"name": "METRIC", "value": metric},
            {"name": "PORT", "value": str(PORT)},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ],
        "ports": [{"name": "metrics", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/metrics", "port": PORT}, "periodSeconds": 1},
        "resources": gpu,
    }
    spec = restricted_pod_spec([container])
    spec["restartPolicy"] = "Always"
    spec["tolerations"] = [gpu_toleration()]
    if dra:
        spec["resourceClaims"] = [{"name": CLAIM, "resourceClaimTemplateName": CLAIM_TEMPLATE}]
    selector = {APP_LABEL: NAME}
    scrape = {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(PORT),
        "prometheus.io/path": "/metrics",
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": MIN_REPLICAS,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": {**labels, **selector}, "annotations": scrape},
                "spec": spec,
            },
        },
    }


def hpa(metric: str, stabilization: int) -> Obj:
    """An autoscaling/v2 HPA on the pods' ``metric`` (type Pods) with a short scale-down window."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": NAME},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": NAME},
            "minReplicas": MIN_REPLICAS,
            "maxReplicas": MAX_REPLICAS,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": metric},
                        "target": {"type": "AverageValue", "averageValue": str(TARGET)},
                    },
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": stabilization}},
        },
    }


# ---- the custom metrics API -------------------------------------------------------------


def custom_metrics_api(apiservices: list[Obj]) -> Obj | None:
    """The APIService serving ``custom.metrics.k8s.io`` (the highest version priority)."""
    serving = [a for a in apiservices if (a.get("spec") or {}).get("group") == CUSTOM_METRICS_GROUP]
    serving.sort(key=lambda a: -int((a.get("spec") or {}).get("versionPriority") or 0))
    return serving[0] if serving else None


def available(apiservice: Obj) -> tuple[bool, str]:
    """Whether the API server reaches the APIService's backend, and its condition's words."""
    for c in (apiservice.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Available":
            words = " ".join(str(c.get(k)) for k in ("reason", "message") if c.get(k))
            return c.get("status") == "True", words or f"Available={c.get('status')}"
    return False, "no Available condition"


def describe_apiservice(apiservice: Obj) -> str:
    """``v1beta1.custom.metrics.k8s.io -> monitoring/prometheus-adapter:443, Available``."""
    spec = apiservice.get("spec") or {}
    svc = spec.get("service") or {}
    backend = (
        f"service {svc.get('namespace')}/{svc.get('name')}:{svc.get('port', 443)}"
        if svc
        else "served by the API server itself"
    )
    ok, words = available(apiservice)
    return f"APIService {apiservice['metadata']['name']} ({backend}): " + (
        "Available" if ok else f"not Available: {words}"
    )


# ---- the HPA's status -------------------------------------------------------------------

_SUFFIX = {
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")


def quantity(raw: Any) -> float | None:
    """A Kubernetes quantity ("40", "15500m", "2k") as a number; None when unreadable."""
    m = _QUANTITY.match(str(raw).strip())
    if not m:
        return None
    try:
        return float(m.group(1)) * _SUFFIX[m.group(2) or ""]
    except ValueError:
        return None


def observed(hpa: Obj, metric: str) -> float | None:
    """The per-pod average of ``metric`` the HPA last read (``status.currentMetrics``)."""
    for m in (hpa.get("status") or {}).get("currentMetrics") or []:
        pods = m.get("pods") or {}
        if m.get("type") == "Pods" and (pods.get("metric") or {}).get("name") == metric:
            return quantity((pods.get("current") or {}).get("averageValue"))
    return None


def condition(hpa: Obj, kind: str) -> Obj | None:
    """The HPA's condition of type ``kind`` (AbleToScale, ScalingActive, ScalingLimited)."""
    return next(
        (c for c in (hpa.get("status") or {}).get("conditions") or [] if c.get("type") == kind),
        None,
    )


def conditions_text(hpa: Obj) -> str:
    """The HPA's conditions in its own words: ``ScalingActive=False FailedGetPodsMetric: ...``."""
    parts = []
    for c in (hpa.get("status") or {}).get("conditions") or []:
        head = f"{c.get('type')}={c.get('status')}" + (f" {c['reason']}" if c.get("reason") else "")
        parts.append(head + (f": {c['message']}" if c.get("message") else ""))
    return "; ".join(parts) or "the HPA has reported no condition yet"


def readable(hpa: Obj, metric: str) -> bool:
    """The HPA reads the metric: ScalingActive is True and it has a value of ``metric``."""
    active = condition(hpa, "ScalingActive")
    return bool(active and active.get("status") == "True") and observed(hpa, metric) is not None


def replicas(hpa: Obj) -> tuple[int | None, int | None]:
    """(desired, current) replicas in the HPA's status."""
    status = hpa.get("status") or {}
    return status.get("desiredReplicas"), status.get("currentReplicas")


@dataclass(frozen=True)
class Reading:
    """What the HPA showed at one moment."""

    at: str  # ISO 8601 UTC
    metric: float | None
    desired: int | None
    current: int | None
    note: str = ""  # what the check did at this moment, if anything

    def line(self) -> str:
        """``12:00:01.250Z metric 40 desired 2 current 1``, or the note."""
        when = self.at.partition("T")[2] or self.at
        if self.note:
            return f"{when} {self.note}"
        shown = "-" if self.metric is None else f"{self.metric:g}"
        return f"{when} metric {shown} desired {self.desired} current {self.current}"


def reading(hpa: Obj, metric: str, at: str) -> Reading:
    """The HPA's observed metric and replicas at ``at``."""
    desired, current = replicas(hpa)
    return Reading(at, observed(hpa, metric), desired, current)


def changed(readings: list[Reading], new: Reading) -> bool:
    """A reading worth keeping: one with a status that differs from the last HPA reading."""
    if (new.metric, new.desired, new.current) == (None, None, None):
        return False  # the controller has not looked at the HPA yet
    last = next((r for r in reversed(readings) if not r.note), None)
    return last is None or (last.metric, last.desired, last.current) != (
        new.metric,
        new.desired,
        new.current,
    )


def is_serving(pod: Obj) -> bool:
    """The pod runs, is Ready (its server answers /metrics), has an IP and is not going away."""
    status = pod.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return (
        status.get("phase") == "Running"
        and ready
        and bool(status.get("podIP"))
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
    )


def scaled_down(deployment: Obj) -> bool:
    """The Deployment is back at one replica and has no other pod left."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    return spec.get("replicas") == MIN_REPLICAS and status.get("replicas") == MIN_REPLICAS


def off_gpu(pods: list[Obj], gpu_nodes: set[str]) -> list[str]:
    """``pod on node`` for each pod not on a GPU node."""
    out = []
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node not in gpu_nodes:
            out.append(f"{p['metadata']['name']} on {node or 'no node'}")
    return out
