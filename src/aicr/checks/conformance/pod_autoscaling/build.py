"""The pure parts of pod-autoscaling: the workload, its HPA, and readings of the HPA's status.

No client and no I/O: manifests and verdict helpers as functions of the API's dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aicr.checks.conformance.pod_autoscaling.params import METRICS as METRICS
from aicr.checks.conformance.pod_autoscaling.window import Window
from aicr.checks.probe_pods import gpu_claim_template, restricted_pod_spec
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration

Obj = dict[str, Any]
IMAGE = "dcgm"  # in aicr/checks/images.yaml: its dcgmproftester12 is the GPU load
NAME = "gpu-autoscaled"  # the Deployment, its HPA, its pods' app label
APP_LABEL = "aicr.dev/app"
CONTAINER = "gpu-load"
CLAIM_TEMPLATE = "one-gpu"
CLAIM = "gpu"
TARGET = 50  # the HPA's target: average GPU utilization (%) per pod
MIN_REPLICAS, MAX_REPLICAS = 1, 2
CUSTOM_METRICS_GROUP = "custom.metrics.k8s.io"
LOAD_UNTIL_ENV = "LOAD_UNTIL"
# The check ends the load once it has seen the scale-up, by creating the ConfigMap STOP: the
# pods mount it as an optional volume, so its key appears in their STOP_DIR at the kubelet's
# next sync of the volume (Kubernetes docs, "ConfigMaps": mounted ConfigMaps are updated
# automatically, within the kubelet sync period, 1m by default, plus its cache's delay).
STOP = f"{NAME}-stop"
STOP_KEY = "stop"
STOP_DIR = "/var/run/aicr-load"
VOLUME = "load-stop"
VOLUME_SYNC_SECONDS = 60  # the kubelet's default syncFrequency: the stop reaches the pods within it
# Each pod loads its GPU with DCGM's load generator until the same moment (epoch seconds,
# set when the Deployment is made) or until the check's stop appears, whichever is first,
# then holds it idle: a pod started by the scale-up stops with the others, so the check
# knows when utilization falls. A load that fails ends the container (a restart shows it),
# so an idle GPU never passes for a load; a load the stop ended is not a failure.
LOAD = f"""\
d=$(( ${LOAD_UNTIL_ENV} - $(date +%s) ))
if [ "$d" -gt 0 ] && [ ! -e {STOP_DIR}/{STOP_KEY} ]; then
  dcgmproftester12 --no-dcgm-validation -t 1004 -d "$d" &
  load=$!
  (while [ ! -e {STOP_DIR}/{STOP_KEY} ]; do sleep 1; done; kill "$load" 2>/dev/null) &
  stop=$!
  wait "$load"
  rc=$?
  kill "$stop" 2>/dev/null
  [ "$rc" -eq 0 ] || [ -e {STOP_DIR}/{STOP_KEY} ] || exit "$rc"
fi
exec sleep infinity
"""


def claim_template() -> Obj:
    """DRA mode: each replica's claim for one whole GPU of the NVIDIA DRA driver."""
    return gpu_claim_template(CLAIM_TEMPLATE, 1, CLAIM)


def deployment(image: str, load_until: int, labels: dict[str, str], dra: bool) -> Obj:
    """One replica, one GPU each, loading it until the check's stop or ``load_until``.

    The stop is the ConfigMap ``STOP``, an optional volume; ``load_until`` is epoch s. Idle after.

    DCGM profiles as root only (DCGM_ST_REQUIRES_ROOT): Pod Security baseline, this
    check's workload namespace level (its catalog GPUs), allows root; the container
    stays unprivileged, with no privilege escalation.
    """
    gpu = {"claims": [{"name": CLAIM}]} if dra else {"limits": {GPU_RESOURCE: "1"}}
    container = {
        "name": CONTAINER,
        "image": image,
        "command": ["sh", "-c", LOAD],
        "env": [{"name": LOAD_UNTIL_ENV, "value": str(load_until)}],
        "volumeMounts": [{"name": VOLUME, "mountPath": STOP_DIR, "readOnly": True}],
        "resources": gpu,
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False},
    }
    spec = restricted_pod_spec([container])
    spec["securityContext"] = {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}
    spec["containers"][0]["securityContext"] = container["securityContext"]
    spec["restartPolicy"] = "Always"
    spec["tolerations"] = [gpu_toleration()]
    spec["volumes"] = [{"name": VOLUME, "configMap": {"name": STOP, "optional": True}}]
    if dra:
        spec["resourceClaims"] = [{"name": CLAIM, "resourceClaimTemplateName": CLAIM_TEMPLATE}]
    selector = {APP_LABEL: NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": MIN_REPLICAS,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": {**labels, **selector}}, "spec": spec},
        },
    }


def stop() -> Obj:
    """The ConfigMap whose key, once the pods' kubelet projects it, ends their load."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": STOP},
            "data": {STOP_KEY: "the check saw the scale-up"}}  # fmt: skip


def hpa(metric: str, stabilization: int) -> Obj:
    """An autoscaling/v2 HPA on the pods' ``metric`` (type Pods) with a set scale-down window."""
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


def pod_metrics(resources: list[str] | None) -> list[str]:
    """The per-pod metrics the custom metrics API's discovery lists (``pods/<name>``)."""
    return sorted(r.partition("/")[2] for r in resources or [] if r.startswith("pods/"))


def listing(wanted: list[str], listed: list[str] | str) -> str:
    """What the custom metrics API's discovery lists of the wanted metrics, as a clause.

    A metric it lists but serves no value of for the pod is known to the adapter (its series
    have no such pod yet); one it does not list has not been listed by the adapter's relist.
    """
    if isinstance(listed, str):
        return f"its per-pod metrics: {listed}"
    shown = ", ".join(listed) or "none"
    known = [m for m in wanted if m in listed]
    if not known:
        return f"its discovery lists none of them (per-pod metrics: {shown})"
    return (
        f"its discovery lists {', '.join(known)}, with no value for the pod (per-pod "
        f"metrics: {shown})"
    )


def within(budget: float, window: Window, *, load_first: bool, rest: bool = False) -> str:
    """``within the metric window (135s = ...)``, or the load's end when that comes first.

    ``rest``: the budget is what is left of the window (the HPA's read, after the metric).
    """
    spent = f"{round(budget, 1):g}s"
    if load_first:
        return f"within {spent}, before the load's end (the metric window: {window.summary})"
    if rest:
        return f"within the {spent} left of the metric window ({window.summary})"
    return f"within the metric window ({window.summary})"


def metric_value(values: Obj | None, pod: str) -> float | None:
    """The value of one pod in a ``MetricValueList`` (None when the list has no such pod)."""
    for item in (values or {}).get("items") or []:
        if (item.get("describedObject") or {}).get("name") == pod:
            return quantity(item.get("value"))
    return None


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
    """The pod runs, is Ready, has an IP and is not going away."""
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
