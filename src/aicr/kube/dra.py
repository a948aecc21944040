"""The DRA API (``resource.k8s.io``) at whichever version a cluster serves, seen as v1.

Kubernetes serves DRA as ``v1beta1`` from 1.32, adds ``v1beta2`` in 1.33 and ``v1``
(GA) in 1.34. Checks read and write v1 shapes; the client discovers the newest
version the cluster serves (``pick``) and converts objects on the way in and out
(``to_v1``, ``from_v1``), as the API server converts between its own versions.

The shapes, from the Kubernetes API reference (v1.32 ``resource.k8s.io/v1beta1``,
v1.33 ``v1beta2``, v1.34 ``v1``):

- A ResourceClaim's (and a ResourceClaimTemplate's ``spec.spec``) device request:
  in v1beta1 ``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
  ``adminAccess`` and ``tolerations`` sit on the request itself; in v1beta2 and v1
  they sit under ``exactly`` (``ExactDeviceRequest``), beside ``firstAvailable``.
  The subrequests of ``firstAvailable`` have the flat shape in every version.
- A ResourceSlice's device: in v1beta1 ``attributes``, ``capacity``,
  ``consumesCounters``, ``nodeName``, ``nodeSelector``, ``allNodes`` and ``taints``
  sit under ``basic`` (``BasicDevice``); in v1beta2 and v1 on the device itself.
- Everything else the checks read (the allocation's ``results``: request,
  driver, pool, device; ``reservedFor``; a DeviceClass's selectors) has one shape.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
GROUP = "resource.k8s.io"
VERSIONS = ("v1", "v1beta2", "v1beta1")  # newest first: the one a check uses is the first served
V1 = f"{GROUP}/v1"
KINDS = ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass")
# ExactDeviceRequest's fields (v1beta2, v1), which v1beta1 keeps on the DeviceRequest
EXACT = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations")
# BasicDevice's fields (v1beta1), which v1beta2 and v1 keep on the Device
BASIC = (
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
)


def pick(served: list[str] | None) -> str | None:
    """The newest DRA version among ``served`` (a group's versions), as ``group/version``."""
    for version in VERSIONS:
        if version in (served or []):
            return f"{GROUP}/{version}"
    return None


def is_dra(api_version: str) -> bool:
    """The object's apiVersion is the DRA group's."""
    return api_version.partition("/")[0] == GROUP


def _requests(obj: Obj) -> list[Obj]:
    """The device requests of a claim or a claim template (mutable, in place)."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    requests = (spec.get("devices") or {}).get("requests")
    return [r for r in requests or [] if isinstance(r, dict)]


def _devices(obj: Obj) -> list[Obj]:
    """A ResourceSlice's devices (mutable, in place)."""
    devices = (obj.get("spec") or {}).get("devices")
    return [d for d in devices or [] if isinstance(d, dict)]


def to_v1(obj: Obj, version: str | None = None) -> Obj:
    """``obj`` as the v1 API shows it; ``version`` is the one it was read at (else its own).

    Objects of other groups, or already v1 or v1beta2 in shape, come back unchanged
    but for the apiVersion (a copy either way).
    """
    out = copy.deepcopy(obj)
    given = version or str(out.get("apiVersion") or "")
    if not is_dra(given):
        return out
    if "apiVersion" in out:
        out["apiVersion"] = V1
    if given.partition("/")[2] != "v1beta1":
        return out
    kind = out.get("kind")
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for r in _requests(out):
            exact = {k: r.pop(k) for k in EXACT if k in r}
            if exact and "firstAvailable" not in r:
                r["exactly"] = exact
            elif exact:  # a request is one or the other; keep what it gave
                r.update(exact)
    elif kind == "ResourceSlice":
        for d in _devices(out):
            basic = d.pop("basic", None)
            if isinstance(basic, dict):
                d.update(basic)
    return out


def from_v1(obj: Obj, version: str) -> Obj:
    """A v1-shaped ``obj`` as ``version`` (``resource.k8s.io/v1beta1`` ...) takes it (a copy)."""
    out = copy.deepcopy(obj)
    if not is_dra(str(out.get("apiVersion") or "")):
        return out
    out["apiVersion"] = version
    if version.partition("/")[2] != "v1beta1":
        return out
    kind = out.get("kind")
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for r in _requests(out):
            exact = r.pop("exactly", None)
            if isinstance(exact, dict):
                r.update(exact)
    elif kind == "ResourceSlice":
        for d in _devices(out):
            basic = {k: d.pop(k) for k in BASIC if k in d}
            if basic:
                d["basic"] = basic
    return out


def listed_v1(
    list_at: Callable[[str], list[Obj]], not_served: Callable[[Exception], bool]
) -> list[Obj]:
    """Objects listed at the newest version served (``list_at(version)``), as v1 shows them.

    ``not_served`` tells an error that means "this version is not served" (a 404)
    from one to raise; none served at all is no objects.
    """
    for version in VERSIONS:
        try:
            items = list_at(version)
        except Exception as exc:
            if not_served(exc):
                continue
            raise
        return [to_v1(i, f"{GROUP}/{version}") for i in items]
    return []
