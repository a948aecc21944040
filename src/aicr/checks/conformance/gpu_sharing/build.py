"""The pure part of gpu-sharing: the strategies nodes advertise, the probe pods, the verdicts.

No client and no I/O: functions of the API's dicts and of what the probes printed,
tested as tables. What is read (GPU feature discovery's labels and the device
plugin's resources, k8s-device-plugin's ``internal/lm`` and README):

- MIG: an allocatable ``nvidia.com/mig-<profile>`` (``mig.strategy=mixed``), or
  ``nvidia.com/mig.strategy=single`` with the product label naming the profile
  (``NVIDIA-H100-80GB-HBM3-MIG-1g.10gb``) and ``nvidia.com/gpu`` counting MIG
  devices. ``mig.strategy`` alone says nothing: GFD sets it on nodes whose GPUs are
  not partitioned too.
- Replicas: ``nvidia.com/gpu.sharing-strategy`` ``time-slicing`` or ``mps`` with
  ``nvidia.com/gpu.replicas`` above 1, the units being ``nvidia.com/gpu.shared``
  under ``renameByDefault``, else ``nvidia.com/gpu``; ``nvidia.com/gpu.count`` is
  the physical GPUs.
- GKE's own sharing, which its device plugin and node labels carry instead of
  GFD's (GKE docs, "About GPU sharing strategies in GKE", "Time-sharing GPUs on
  GKE"): MIG partitions as ``cloud.google.com/gke-gpu-partition-size`` (a profile,
  ``1g.5gb``) with ``nvidia.com/gpu`` counting partitions; time-sharing and MPS as
  ``cloud.google.com/gke-gpu-sharing-strategy`` ``time-sharing`` or ``mps`` with
  ``cloud.google.com/gke-max-shared-clients-per-gpu`` clients per GPU, each a unit
  of ``nvidia.com/gpu``. Read only where GFD's labels advertise nothing alike.
- DRA sharing (NVIDIA/k8s-dra-driver-gpu 25.12.0): a claim's opaque ``GpuConfig``
  (``resource.nvidia.com/v1beta1``) may set ``sharing.strategy`` ``TimeSlicing`` or
  ``MPS`` (``api/nvidia.com/resource/v1beta1/sharing.go``), each behind an alpha
  feature gate that is off by default, ``TimeSlicingSettings`` and ``MPSSupport``
  (``pkg/featuregates/featuregates.go``); with its gate off the kubelet plugin fails
  to prepare such a claim (``validate.go``: ``unknown GPU sharing strategy``). The
  chart sets the gates from its ``featureGates`` values as the ``FEATURE_GATES``
  variable of the kubelet plugin DaemonSet's ``gpus`` container (image
  ``k8s-dra-driver-gpu``; ``templates/kubeletplugin.yaml``): a strategy is
  advertised where that variable turns its gate on and the driver publishes whole
  GPUs in a node's ResourceSlices.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from aicr.checks.probe_pods import gpu_claim, pinned_to, restricted_pod_spec
from aicr.kube import events as kube_events
from aicr.kube import names as k8s_names
from aicr.kube import pod_status
from aicr.kube.gpus import (
    DRA_DRIVER,
    GPU_RESOURCE,
    gpu_toleration,
    quantity,
    whole_gpus_by_node,
)
from aicr.parsers import ParseError
from aicr.parsers.nvidia_smi import ListedGpu, parse_list

Obj = dict[str, Any]
IMAGE = "cuda-base"  # in aicr/checks/images.yaml
CONTAINER = "nvidia-smi"
SHARED_RESOURCE = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
SHARING_LABEL = "nvidia.com/gpu.sharing-strategy"
SOFTWARE = ("time-slicing", "mps")
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
GKE_SHARING_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
GKE_SOFTWARE = ("time-sharing", "mps")
LISTED = "aicr-listed"  # printed after nvidia-smi -L with its exit code: the listing is whole
NOT_INJECTED = "127"
HOLD_SECONDS = 600  # replica pods stay up (holding their replica) until cleanup deletes them
DRA_PLUGIN_IMAGE = "k8s-dra-driver-gpu"  # the chart's kubelet plugin image repository
DRA_PLUGIN_CONTAINER = "gpus"  # its container that prepares GPU claims
DRA_GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}  # strategy -> gate
DRA_PODS = 2  # pods sharing the one claim
DRA_REQUEST = "gpu"
CONFIG_API = "resource.nvidia.com/v1beta1"
# the kubelet's Warning event when a DRA driver's plugin could not prepare a pod's claim
PREPARE_FAILED = "FailedPrepareDynamicResources"


@dataclass(frozen=True)
class Offer:
    """One sharing strategy as one node advertises it."""

    kind: str  # "MIG", "time-slicing", "mps", "DRA TimeSlicing", "DRA MPS"
    node: str
    resource: str  # what a pod asks for
    units: int  # allocatable
    profile: str = ""  # MIG profile
    gpus: int = 0  # physical GPUs behind the replicas
    replicas: int = 1

    @property
    def name(self) -> str:
        """The strategy, as the message names it: ``MIG 1g.10gb``, ``time-slicing``."""
        return f"MIG {self.profile}" if self.kind == "MIG" else self.kind

    @property
    def dra(self) -> bool:
        """A sharing strategy of the DRA driver (one claim, its GpuConfig)."""
        return self.kind.startswith("DRA ")

    @property
    def need(self) -> int:
        """Units the proof takes on one node: a MIG device, one claimed GPU, or GPUs + 1."""
        return 1 if self.kind == "MIG" or self.dra else self.gpus + 1

    def describe(self) -> str:
        """What the node advertises, for the evidence."""
        if self.kind == "MIG":
            return f"{self.name}: {self.resource} {self.units}"
        if self.dra:
            return f"{self.name}: {self.units} whole GPUs in {self.resource} ResourceSlices"
        return (
            f"{self.name}: {self.resource} {self.units} ({self.replicas} replicas of "
            f"{self.gpus} GPUs)"
        )


def _labels(node: Obj) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def offers(node: Obj) -> list[Offer]:
    """The sharing strategies one Node advertises (its labels and allocatable)."""
    name = str((node.get("metadata") or {}).get("name"))
    labels = _labels(node)
    alloc = (node.get("status") or {}).get("allocatable") or {}
    found = [
        Offer("MIG", name, str(k), quantity(v), profile=str(k)[len(MIG_PREFIX) :])
        for k, v in sorted(alloc.items())
        if str(k).startswith(MIG_PREFIX)
    ]
    product = labels.get(PRODUCT_LABEL, "")
    if labels.get(MIG_STRATEGY_LABEL) == "single" and "-MIG-" in product:
        profile = product.split("-MIG-", 1)[1].removesuffix("-SHARED")
        found.append(Offer("MIG", name, GPU_RESOURCE, quantity(alloc.get(GPU_RESOURCE)), profile))
    strategy, replicas = labels.get(SHARING_LABEL, ""), quantity(labels.get(REPLICAS_LABEL))
    if strategy in SOFTWARE and replicas > 1 and "-MIG-" not in product:
        resource = SHARED_RESOURCE if SHARED_RESOURCE in alloc else GPU_RESOURCE
        units = quantity(alloc.get(resource))
        gpus = quantity(labels.get(COUNT_LABEL)) or units // replicas
        found.append(Offer(strategy, name, resource, units, gpus=gpus, replicas=replicas))
    return found + _gke_offers(name, labels, alloc, found)


def _gke_offers(name: str, labels: dict[str, str], alloc: Obj, found: list[Offer]) -> list[Offer]:
    """GKE's own MIG and time-sharing/MPS labels, where GFD's advertise nothing alike."""
    out: list[Offer] = []
    units = quantity(alloc.get(GPU_RESOURCE))
    partition = labels.get(GKE_PARTITION_LABEL, "")
    if partition and not any(o.kind == "MIG" and o.resource == GPU_RESOURCE for o in found):
        out.append(Offer("MIG", name, GPU_RESOURCE, units, profile=partition))
    strategy, clients = labels.get(GKE_SHARING_LABEL, ""), quantity(labels.get(GKE_CLIENTS_LABEL))
    replicas_found = any(o.kind != "MIG" for o in found)
    if strategy in GKE_SOFTWARE and clients > 1 and not partition and not replicas_found:
        out.append(Offer(strategy, name, GPU_RESOURCE, units, gpus=units // clients,
                         replicas=clients))  # fmt: skip
    return out


def dra_gates(daemonsets: list[Obj]) -> dict[str, bool]:
    """The sharing gates the DRA driver's kubelet plugin runs with ({} where none runs)."""
    for ds in daemonsets:
        template = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        for c in template.get("containers") or []:
            if c.get("name") != DRA_PLUGIN_CONTAINER or DRA_PLUGIN_IMAGE not in str(c.get("image")):
                continue
            env = {str(e.get("name")): str(e.get("value") or "") for e in c.get("env") or []}
            pairs = [p.split("=", 1) for p in env.get("FEATURE_GATES", "").split(",") if "=" in p]
            given = {k.strip(): v.strip().lower() == "true" for k, v in pairs}
            return {gate: given.get(gate, False) for gate in DRA_GATES.values()}
    return {}


def dra_offers(daemonsets: list[Obj], slices: list[Obj]) -> list[Offer]:
    """The DRA driver's sharing strategies whose gates are on, on each node it publishes GPUs."""
    on = dra_gates(daemonsets)
    gpus = whole_gpus_by_node(slices)
    return [
        Offer(f"DRA {strategy}", node, DRA_DRIVER, units, gpus=units)
        for strategy, gate in DRA_GATES.items()
        if on.get(gate)
        for node, units in sorted(gpus.items())
        if units > 0
    ]


def groups(nodes: list[Obj], dra: list[Offer] | None = None) -> dict[str, list[Offer]]:
    """Every strategy advertised (by name, in order) and the nodes offering it."""
    out: dict[str, list[Offer]] = {}
    for n in sorted(nodes, key=lambda n: str(n["metadata"]["name"])):
        for o in offers(n):
            out.setdefault(o.name, []).append(o)
    for o in dra or []:
        out.setdefault(o.name, []).append(o)
    return dict(sorted(out.items()))


def requested(pods: list[Obj], resource: str) -> dict[str, int]:
    """Units of ``resource`` the non-terminated pods on each node hold."""
    used: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if not node or pod_status.finished(p):
            continue
        for c in (p.get("spec") or {}).get("containers") or []:
            res = c.get("resources") or {}
            want = (res.get("limits") or {}).get(resource) or (res.get("requests") or {}).get(
                resource
            )
            used[node] = used.get(node, 0) + quantity(want)
    return used


def pod_name(offer: Offer, i: int = 0) -> str:
    """The probe pod's name: one per MIG profile, or the i-th replica pod of the strategy."""
    what = offer.profile.replace(".", "-").replace("+", "-") if offer.kind == "MIG" else offer.kind
    return k8s_names.bounded(f"share-{what.lower().replace(' ', '-')}-{i}")


def claim_name(offer: Offer) -> str:
    """The one ResourceClaim the DRA strategy's pods share."""
    return k8s_names.bounded(f"share-{offer.kind.lower().replace(' ', '-')}")


def shared_claim(offer: Offer) -> Obj:
    """A claim for one whole GPU whose opaque GpuConfig asks for the offer's sharing strategy."""
    claim = gpu_claim(claim_name(offer), 1, DRA_REQUEST)
    strategy = offer.kind.removeprefix("DRA ")
    parameters = {"apiVersion": CONFIG_API, "kind": "GpuConfig", "sharing": {"strategy": strategy}}
    claim["spec"]["devices"]["config"] = [
        {"requests": [DRA_REQUEST], "opaque": {"driver": DRA_DRIVER, "parameters": parameters}}
    ]
    return claim


def prepare_failures(events: list[Obj], pods: list[str]) -> str:
    """What the kubelet said when it could not prepare these pods' claim, each message once.

    The pods of one claim get the same message (it names the claim), so it is quoted
    once with the pods it was said of; "" when the kubelet said nothing of the kind.
    """
    said: dict[str, list[str]] = {}
    for pod in pods:
        found = kube_events.latest(events, pod, PREPARE_FAILED)
        if found:
            said.setdefault(found, []).append(pod)
    return "; ".join(f"the kubelet of {', '.join(p)}: {m}" for m, p in said.items())


def probe_pod(offer: Offer, image: str, i: int = 0) -> Obj:
    """A pod on ``offer.node`` given one unit of ``offer.resource`` that lists what it sees.

    A MIG pod runs ``nvidia-smi -L`` and ends; a replica pod prints the listing and
    its exit code, then holds its replica until deleted, so all of them run at once.
    """
    if offer.kind == "MIG":
        command = ["nvidia-smi", "-L"]
    else:
        command = ["sh", "-c", f'nvidia-smi -L; echo "{LISTED} $?"; exec sleep {HOLD_SECONDS}']
    resources: Obj = (
        {"claims": [{"name": DRA_REQUEST}]} if offer.dra else {"limits": {offer.resource: "1"}}
    )
    container = {"name": CONTAINER, "image": image, "command": command, "resources": resources}
    spec = restricted_pod_spec([container])
    spec["affinity"] = pinned_to(offer.node)
    spec["tolerations"] = [gpu_toleration()]
    if offer.dra:
        spec["resourceClaims"] = [{"name": DRA_REQUEST, "resourceClaimName": claim_name(offer)}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name(offer, i)},
        "spec": spec,
    }


def _seen(gpus: list[ListedGpu]) -> str:
    parts = [
        f"{g.uuid} ({g.name})" + "".join(f", MIG {m.profile} {m.uuid}" for m in g.migs)
        for g in gpus
    ]
    return "; ".join(parts) or "no GPU"


def judge_mig(offer: Offer, exit_code: int | None, log: str) -> tuple[list[str], str]:
    """``(problems, what the pod saw)``: exactly one MIG device, of the offer's profile."""
    if exit_code != 0:
        first = next((line.strip() for line in log.splitlines() if line.strip()), "no output")
        return [f"nvidia-smi -L exited {exit_code}: {first}"], first
    try:
        gpus = parse_list(log)
    except ParseError as exc:
        return [f"cannot read nvidia-smi -L: {exc}"], "unreadable"
    seen = _seen(gpus)
    migs = [m for g in gpus for m in g.migs]
    if not gpus:
        return [f"the pod given 1 {offer.resource} sees no GPU"], seen
    if not migs:
        return [f"the pod given 1 {offer.resource} sees no MIG device, only {seen}"], seen
    if len(migs) != 1:
        return [f"the pod given 1 {offer.resource} sees {len(migs)} MIG devices"], seen
    if migs[0].profile != offer.profile:
        return [f"the pod asked for MIG {offer.profile} and sees MIG {migs[0].profile}"], seen
    return [], seen


@dataclass(frozen=True)
class ReplicaView:
    """What one replica pod printed: the GPUs it listed, or why it listed none."""

    pod: str
    gpus: tuple[ListedGpu, ...] = ()
    problem: str = ""


def read_replica(pod: str, log: str) -> ReplicaView:
    """One replica pod's listing (the lines before LISTED) and nvidia-smi's exit code."""
    head, marker, tail = log.partition(LISTED)
    if not marker:
        return ReplicaView(pod, problem="printed no listing")
    code = tail.split()[0] if tail.split() else "?"
    if code == NOT_INJECTED:  # the shell's "not found": the runtime gave the pod no GPU
        return ReplicaView(pod, problem="sees no GPU: nvidia-smi was not injected (exit 127)")
    if code != "0":
        first = next((line.strip() for line in head.splitlines() if line.strip()), "no output")
        return ReplicaView(pod, problem=f"nvidia-smi -L exited {code}: {first}")
    try:
        return ReplicaView(pod, tuple(parse_list(head)))
    except ParseError as exc:
        return ReplicaView(pod, problem=f"cannot read nvidia-smi -L: {exc}")


def _one_gpu_each(views: list[ReplicaView]) -> tuple[list[str], str]:
    """``(problems, each pod's view)``: a pod that listed nothing, or not exactly one GPU."""
    seen = "; ".join(f"{v.pod}: {v.problem or _seen(list(v.gpus))}" for v in views)
    problems = [f"{v.pod} {v.problem}" for v in views if v.problem]
    problems += [
        f"{v.pod} sees {'no GPU' if not v.gpus else f'{len(v.gpus)} GPUs'}"
        for v in views
        if not v.problem and len(v.gpus) != 1
    ]
    return problems, seen


def judge_replicas(offer: Offer, views: list[ReplicaView]) -> tuple[list[str], str]:
    """``(problems, each pod's view)``: every pod sees one GPU, and some GPU is seen twice."""
    problems, seen = _one_gpu_each(views)
    if problems:
        return problems, seen
    holders = Counter(v.gpus[0].uuid for v in views)
    most = holders.most_common(1)[0][1]
    if most < 2:
        return [
            f"{len(views)} pods given {offer.resource} see {len(holders)} different GPUs on a "
            f"node of {offer.gpus}: no GPU is shared"
        ], seen
    return [], seen


def judge_shared_claim(offer: Offer, views: list[ReplicaView]) -> tuple[list[str], str]:
    """``(problems, each pod's view)``: every pod of the one claim sees the same one GPU."""
    problems, seen = _one_gpu_each(views)
    if problems:
        return problems, seen
    uuids = sorted({v.gpus[0].uuid for v in views})
    if len(uuids) != 1:
        return [
            f"{len(views)} pods sharing claim {claim_name(offer)} see {len(uuids)} different "
            f"GPUs: {', '.join(uuids)}"
        ], seen
    return [], seen


def shared_gpu(views: list[ReplicaView]) -> tuple[str, list[str]]:
    """The GPU most pods saw and those pods (after ``judge_replicas`` found no problem)."""
    holders = Counter(v.gpus[0].uuid for v in views)
    uuid = holders.most_common(1)[0][0]
    return uuid, [v.pod for v in views if v.gpus[0].uuid == uuid]
