"""Which GPUs each container gets: the device plugin's index assignment, DRA claims, leaks.

- Device plugin: every bound pod requesting `nvidia.com/gpu` is admitted on
  its node as the kubelet's device manager does, with the lowest free indices
  per container; a GPU is never handed to two pods (unless the node has the
  `shared-device` fault) and is free again when the pod ends or goes away.
- DRA: a container gets the devices of the ResourceClaims it references in
  `resources.claims`, as the scheduler allocated them, from this node's pool
  only (a claim allocated elsewhere never prepares here).
- What the container finally sees (`visible`) adds the toolkit's behaviour and
  the node's leak faults: `device-leak` (every container sees every GPU),
  `runtimeclass-leak` (naming the GPU RuntimeClass is enough to see them all),
  `permissive-toolkit` (an unprivileged container's own
  `NVIDIA_VISIBLE_DEVICES=all` is honoured).
- Shared GPUs (`simcluster.gpu.sharing`): on a node whose sharing is resolved,
  the plugin hands out units of each advertised resource (`nvidia.com/gpu`,
  `nvidia.com/gpu.shared`, `nvidia.com/mig-<profile>`): free units only, those
  of the GPUs least in use first (replicas spread over the GPUs), each unit a
  whole GPU or a MIG device; `replicas-not-shared` hands a GPU to one pod only.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simcluster.gpu.sharing import GPU, MIG_PREFIX, REPLICAS_NOT_SHARED, SHARED, Device

GPU_RESOURCE = "nvidia.com/gpu"
DRA_DRIVER = "gpu.nvidia.com"
TERMINAL = ("Succeeded", "Failed")


def gpu_limit(container: dict[str, Any]) -> int:
    """The container's `nvidia.com/gpu` limit (0 without one)."""
    limits = (container.get("resources") or {}).get("limits") or {}
    return int(str(limits.get(GPU_RESOURCE, "0")))


def wants(container: dict[str, Any]) -> dict[str, int]:
    """Every NVIDIA device-plugin resource the container limits, and how many."""
    limits = (container.get("resources") or {}).get("limits") or {}
    return {
        str(k): int(str(v))
        for k, v in limits.items()
        if (k in (GPU, SHARED) or str(k).startswith(MIG_PREFIX)) and int(str(v)) > 0
    }


@dataclass(frozen=True)
class Grant:
    """One GPU handed to one container of one pod on one node."""

    node: str
    index: int  # the host GPU
    uid: str
    container: str
    device: Device | None = None  # what the unit is, on a node with units
    unit: tuple[str, int] | None = None  # (resource, its unit's position)


Units = dict[str, list[Device]]


@dataclass
class DevicePlugin:
    """Index assignment of one cluster's simulated device plugins (one per node)."""

    grants: list[Grant] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(
        self,
        pod: dict[str, Any],
        shared: bool = False,
        units: Units | None = None,
        faults: tuple[str, ...] = (),
    ) -> None:
        """Assign the lowest free indices (or, given `units`, free units) to a bound pod."""
        node, uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
        if units is not None:
            with self.lock:
                for c in pod["spec"].get("containers") or []:
                    for resource, n in wants(c).items():
                        self._grant(node, uid, c["name"], resource, n, units, faults, shared)
            return
        with self.lock:
            taken = set() if shared else {g.index for g in self.grants if g.node == node}
            for c in pod["spec"].get("containers") or []:
                free = (i for i in itertools.count() if i not in taken)
                for i in itertools.islice(free, gpu_limit(c)):
                    taken.add(i)
                    self.grants.append(Grant(node, i, uid, c["name"]))

    def _grant(
        self,
        node: str,
        uid: str,
        container: str,
        resource: str,
        n: int,
        units: Units,
        faults: tuple[str, ...],
        shared: bool,
    ) -> None:
        here = [g for g in self.grants if g.node == node]
        taken = set() if shared else {g.unit for g in here}
        load: dict[int, int] = {}
        for g in here:
            load[g.index] = load.get(g.index, 0) + 1
        free = [
            (i, d) for i, d in enumerate(units.get(resource) or []) if (resource, i) not in taken
        ]
        if REPLICAS_NOT_SHARED in faults:  # a GPU for one pod only: the unheld ones, once each
            unheld: dict[int, tuple[int, Device]] = {}
            for i, d in free:
                if not load.get(d.gpu):
                    unheld.setdefault(d.gpu, (i, d))
            free = list(unheld.values())
        free.sort(key=lambda u: (load.get(u[1].gpu, 0), u[0]))
        if len(free) < n:
            return  # not enough units: the container gets none (the kubelet would not admit it)
        for i, d in free[:n]:
            self.grants.append(Grant(node, d.gpu, uid, container, d, (resource, i)))
            load[d.gpu] = load.get(d.gpu, 0) + 1

    def devices_of(self, node: str, uid: str, container: str) -> list[Device]:
        """The units' devices the container was given on `node` (none without units)."""
        with self.lock:
            return [
                g.device
                for g in self.grants
                if (g.node, g.uid, g.container) == (node, uid, container) and g.device
            ]

    def release(self, uid: str) -> None:
        """Free every GPU the pod with this uid holds."""
        with self.lock:
            self.grants = [g for g in self.grants if g.uid != uid]

    def holds(self, uid: str) -> bool:
        """True when the pod with this uid was admitted with GPUs."""
        with self.lock:
            return any(g.uid == uid for g in self.grants)

    def of(self, node: str, uid: str, container: str) -> list[int]:
        """Indices the container was given on `node`, lowest first."""
        with self.lock:
            return sorted(
                g.index
                for g in self.grants
                if (g.node, g.uid, g.container) == (node, uid, container)
            )

    def observe(
        self,
        pod: dict[str, Any],
        deleted: bool,
        shared_on: Callable[[str], bool],
        units_on: Callable[[str], tuple[Units | None, tuple[str, ...]]] | None = None,
    ) -> None:
        """Track one pod event: admit a live GPU pod, release an ended or deleted one.

        `shared_on(node)` says whether the node hands out GPUs already in use
        (the `shared-device` fault); `units_on(node)` its units and GPU faults
        (units None: indices, as without sharing). Both are asked only when a pod
        is admitted.
        """
        uid = pod["metadata"]["uid"]
        node = (pod.get("spec") or {}).get("nodeName")
        if deleted or (pod.get("status") or {}).get("phase") in TERMINAL:
            self.release(uid)
        elif (
            node
            and not self.holds(uid)
            and any(wants(c) for c in pod["spec"].get("containers") or [])
        ):
            units, faults = units_on(node) if units_on else (None, ())
            self.admit(pod, shared_on(node), units, faults)


def claim_names(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """ResourceClaim object names the container references (spec or generated from templates)."""
    wanted = {r["name"] for r in (container.get("resources") or {}).get("claims") or []}
    by_pod_name = {
        c["name"]: c.get("resourceClaimName") for c in pod["spec"].get("resourceClaims") or []
    }
    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        by_pod_name[s["name"]] = by_pod_name.get(s["name"]) or s.get("resourceClaimName")
    return [str(by_pod_name[n]) for n in sorted(wanted) if by_pod_name.get(n)]


def claim_devices(claim: dict[str, Any], node: str) -> list[int]:
    """GPU indices a claim's allocation holds in `node`'s pool."""
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
        "results"
    ) or []
    return sorted(
        int(str(r["device"]).split("-", 1)[1])
        for r in results
        if r.get("driver") == DRA_DRIVER
        and r.get("pool") == node
        and str(r.get("device", "")).startswith("gpu-")
    )


def claim_resources(claim: dict[str, Any], node: str) -> dict[str, Any]:
    """What the kubelet's pod-resources API lists for one claim prepared on `node`.

    The claim's name and namespace, and each allocated device of `node`'s pools
    (driver, pool, device), as `ListPodResources` reports DRA devices
    (`KubeletPodResourcesDynamicResources`, on by default since Kubernetes 1.34).
    """
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
        "results"
    ) or []
    meta = claim.get("metadata") or {}
    prepared = [
        {"driverName": r.get("driver"), "poolName": r.get("pool"), "deviceName": r.get("device")}
        for r in results
        if r.get("pool") == node
    ]
    return {
        "claimName": meta.get("name"),
        "claimNamespace": meta.get("namespace"),
        "claimResources": prepared,
    }


@dataclass(frozen=True)
class Request:
    """What decides the GPUs one container sees."""

    allocated: list[int]
    count: int  # GPUs on the node
    faults: tuple[str, ...] = ()
    env_all: bool = False  # the pod's own env says NVIDIA_VISIBLE_DEVICES=all
    privileged: bool = False
    gpu_runtime_class: bool = False  # the pod names the GPU RuntimeClass


def visible(r: Request) -> list[int]:
    """Indices of the GPUs the container sees."""
    every = list(range(r.count))
    if "device-leak" in r.faults:
        return every
    if r.gpu_runtime_class and not r.allocated and "runtimeclass-leak" in r.faults:
        return every
    if r.env_all and not r.allocated and (r.privileged or "permissive-toolkit" in r.faults):
        return every
    return sorted(set(r.allocated))
