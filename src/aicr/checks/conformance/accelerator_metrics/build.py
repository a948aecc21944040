"""The pure parts of accelerator-metrics: per-GPU verdicts on exporter pages, the load probe.

No client and no I/O: functions of parsed pages (``aicr.parsers.dcgm``) and the API's
dicts, tested as tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aicr.checks import dcgm_load
from aicr.checks.probe_pods import (
    gpu_claim_template,
    pinned_to,
    restricted_pod_spec,
)
from aicr.kube import pod_status
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration
from aicr.parsers.dcgm import Page, Sample

Obj = dict[str, Any]
UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
REQUIRED = (UTIL, FB_USED, FB_FREE)
RECORDED = {
    "DCGM_FI_DEV_GPU_TEMP": "temperature",
    "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": "interconnect",
}
GPU_LABELS = ("gpu", "UUID")
LOAD_POD = LOAD_CONTAINER = "gpu-load"
LOAD_IMAGE = "dcgm"  # in aicr/checks/images.yaml
LOAD_TEMPLATE = "gpu-load"  # DRA mode: the load pod's ResourceClaimTemplate
LOAD_CLAIM = "gpu"  # the pod's claim entry, the container's claim and the request
# What dcgm-exporter adds to the series of a GPU it maps to a pod through a DRA claim
DRA_LABELS = (
    "dra_claim_name",
    "dra_claim_namespace",
    "dra_driver_name",
    "dra_pool_name",
    "dra_device_name",
)


@dataclass(frozen=True)
class Claimed:
    """DRA mode: the device the load pod's claim was allocated, and its GPU's UUID."""

    claim: str  # namespace/name of the generated ResourceClaim
    pool: str
    device: str
    uuid: str

    def __str__(self) -> str:
        return f"{self.pool}/{self.device} of claim {self.claim}"


def per_gpu(page: Page, name: str) -> dict[str, Sample]:
    """The series of `name` that carry both per-GPU labels and a number, by GPU UUID."""
    return {
        s.labels["UUID"]: s
        for s in page.samples
        if s.name == name and all(s.labels.get(k) for k in GPU_LABELS) and math.isfinite(s.value)
    }


def judge_page(page: Page, gpus: int) -> list[str]:
    """What is wrong with one node's page, given the GPUs the node has (empty: nothing)."""
    problems = []
    for name in REQUIRED:
        named = [s for s in page.samples if s.name == name]
        found = per_gpu(page, name)
        if not named:
            problems.append(
                f"{name} is only named in HELP/TYPE lines, with no sample"
                if name in page.declared
                else f"no {name} series"
            )
        elif not found:
            problems.append(f"{len(named)} {name} series, none with per-GPU labels (gpu, UUID)")
        elif len(found) < gpus:
            problems.append(f"{name} for {len(found)} of {gpus} GPUs")
    return problems


def describe(page: Page) -> str:
    """What a node's page holds, for evidence: GPUs, readings, the optional series seen."""
    util = per_gpu(page, UTIL)
    used, free = per_gpu(page, FB_USED), per_gpu(page, FB_FREE)
    parts = [f"{len(util)} GPUs"]
    if util:
        ordered = sorted(util.values(), key=_gpu)
        parts.append(
            "utilization " + ", ".join(f"{s.labels['gpu']}: {s.value:g}%" for s in ordered)
        )
    if used and free:
        parts.append(
            f"framebuffer used {sum(s.value for s in used.values()):g} MiB, "
            f"free {sum(s.value for s in free.values()):g} MiB"
        )
    seen = [what for name, what in RECORDED.items() if per_gpu(page, name)]
    parts.append(
        ("recorded: " + ", ".join(seen)) if seen else "no temperature, power or interconnect series"
    )
    return "; ".join(parts)


def _gpu(s: Sample) -> int:
    try:
        return int(s.labels.get("gpu", "0"))
    except ValueError:
        return 0


def collected(result: list[Obj]) -> set[str]:
    """GPU UUIDs in a Prometheus instant-query vector (`data.result`)."""
    return {str(r.get("metric", {}).get("UUID")) for r in result if r.get("metric", {}).get("UUID")}


def judge_collected(wanted: dict[str, set[str]], result: list[Obj]) -> list[str]:
    """Nodes whose GPUs (UUIDs scraped from their exporter) Prometheus does not have."""
    have = collected(result)
    return [
        f"{node}: {len(uuids - have)} of {len(uuids)} GPUs not collected"
        for node, uuids in sorted(wanted.items())
        if uuids - have
    ]


def newest_stamp(page: Page) -> float | None:
    """The newest explicit sample timestamp on the page (None: the page carries none)."""
    stamps = [s.timestamp for s in page.samples if s.timestamp is not None]
    return max(stamps) if stamps else None


def stale(before: Page, after: Page) -> float | None:
    """The frozen timestamp when `after`'s samples are stamped no later than `before`'s.

    A live exporter either stamps nothing (the scrape time counts) or stamps
    each sample when it was read; samples whose stamps stop advancing are a
    frozen page, whatever values they show.
    """
    first, last = newest_stamp(before), newest_stamp(after)
    return last if first is not None and last is not None and last <= first else None


def held_by(page: Page, namespace: str, pod: str) -> Sample | None:
    """The utilization series the exporter attributes to pod `namespace/pod`, if any."""
    return next((s for s in per_gpu(page, UTIL).values() if attributed(s, namespace, pod)), None)


def attributed(series: Sample, namespace: str, pod: str) -> bool:
    """The exporter labels the series with pod `namespace/pod` (it maps the GPU to it)."""
    return (series.labels.get("namespace"), series.labels.get("pod")) == (namespace, pod)


def load_series(page: Page, namespace: str, claimed: Claimed | None) -> Sample | None:
    """The load's GPU series: by the claim's device in DRA mode, else by attribution."""
    if claimed is None:
        return held_by(page, namespace, LOAD_POD)
    return per_gpu(page, UTIL).get(claimed.uuid)


def holder(series: Sample) -> str:
    """Who the exporter says holds the series' GPU, with its DRA labels, for evidence."""
    who = series.labels.get("pod")
    if not who:
        return "no pod"
    where = f"pod {series.labels.get('namespace')}/{who}"
    dra = [f"{k}={series.labels[k]}" for k in DRA_LABELS if series.labels.get(k)]
    return where + (f" ({', '.join(dra)})" if dra else "")


def load_answer(seen: Sample | None, claimed: Claimed | None) -> str:
    """What the exporter showed for the load's GPU when it did not pass, for evidence."""
    if claimed is None:
        return (
            f"exporter: {seen.value:g}% for the load pod's GPU"
            if seen
            else "the exporter attributes no GPU to the load pod"
        )
    if seen is None:
        return f"the exporter serves no {UTIL} series for GPU {claimed.uuid} ({claimed})"
    return f"exporter: {seen.value:g}% for GPU {claimed.uuid} ({claimed}), held by {holder(seen)}"


def claim_of(pod: Obj | None) -> str | None:
    """The name of the ResourceClaim generated for the load pod's claim entry, once made."""
    for s in ((pod or {}).get("status") or {}).get("resourceClaimStatuses") or []:
        if s.get("name") == LOAD_CLAIM and s.get("resourceClaimName"):
            return str(s["resourceClaimName"])
    return None


def query_value(result: list[Obj]) -> float | None:
    """The value of the first series of an instant-query vector."""
    for r in result:
        try:
            return float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
    return None


def is_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_running(pod: Obj) -> bool:
    """The pod's phase is Running."""
    return (pod.get("status") or {}).get("phase") == "Running"


def load_claim_template(labels: dict[str, str]) -> Obj:
    """DRA mode: the load pod's claim for one whole GPU of the recipe's DeviceClass.

    The generated claim carries `labels` (the run's), so run cleanup finds it too.
    """
    return gpu_claim_template(LOAD_TEMPLATE, 1, LOAD_CLAIM, labels)


def load_pod(image: str, node: str, seconds: int, dra: bool = False) -> Obj:
    """A pod holding one GPU of `node` busy for `seconds` (DCGM's load generator), as root.

    The GPU comes from the device plugin (`nvidia.com/gpu`), or in DRA mode
    from a claim made from `load_claim_template`.
    """
    command = ["dcgmproftester12", "--no-dcgm-validation", "-t", "1004", "-d", str(seconds)]
    gpu = {"claims": [{"name": LOAD_CLAIM}]} if dra else {"limits": {GPU_RESOURCE: "1"}}
    container = {"name": LOAD_CONTAINER, "image": image, "command": command, "resources": gpu}
    spec = restricted_pod_spec([container])
    # DCGM profiles as root only (DCGM_ST_REQUIRES_ROOT, exit 227: `dcgm_load`): Pod
    # Security baseline, this check's workload namespace level (its catalog GPUs), allows
    # root; the container stays unprivileged, with no privilege escalation.
    spec["securityContext"] = {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}
    spec["containers"][0]["securityContext"] = {
        "privileged": False,
        "allowPrivilegeEscalation": False,
    }
    spec["tolerations"] = [gpu_toleration()]
    spec["affinity"] = pinned_to(node)
    if dra:
        spec["resourceClaims"] = [{"name": LOAD_CLAIM, "resourceClaimTemplateName": LOAD_TEMPLATE}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": LOAD_POD}, "spec": spec}


# The exporter reads a GPU at most one interval after the load starts, and the reading
# before that one may straddle the load's start (DCGM_FI_DEV_GPU_UTIL is a sample-period
# figure); `collect_seconds` beyond two intervals covers Prometheus' scrape and the query.
WAIT_INTERVALS = 2


def rise_bound(interval_ms: int, collect_seconds: float) -> float:
    """How long utilization may take to rise under load: two collection intervals and more."""
    return WAIT_INTERVALS * interval_ms / 1000 + collect_seconds


def load_duration(load_seconds: int, bound: float) -> int:
    """How long the load runs: ``loadSeconds``, or the whole wait when that is longer."""
    return max(load_seconds, math.ceil(bound))


def load_ended(pod: Obj, log: str) -> str | None:
    """Why the load pod's load generator stopped (None while it has not): its exit, named."""
    state = pod_status.terminated(pod)
    if state is None:
        return None
    return dcgm_load.exit_reason(int(state.get("exitCode", -1)), log, " before utilization rose")
