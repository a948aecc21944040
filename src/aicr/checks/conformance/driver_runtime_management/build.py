"""The pure part of driver-runtime-management: the advertised driver, the probe's verdict.

No client and no I/O: functions of the API's dicts, tested as tables.
"""

from __future__ import annotations

from typing import Any

from aicr.checks.smi_xml import read_probe
from aicr.kube.gpu_inventory import Target, driver_label
from aicr.kube.gpus import DRA_DRIVER, DRIVER_FULL_LABEL, is_whole_gpu, same_driver

Obj = dict[str, Any]
IMAGE = "ubuntu"  # in aicr/checks/images.yaml
NOT_INJECTED = 127  # the shell's "command not found"


def slice_drivers(slices: list[Obj]) -> dict[str, str]:
    """The ``driverVersion`` the NVIDIA DRA driver publishes for each node's whole GPUs."""
    found: dict[str, str] = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") != DRA_DRIVER or not spec.get("nodeName"):
            continue
        for d in spec.get("devices") or []:
            version = ((d.get("attributes") or {}).get("driverVersion") or {}).get("version")
            if is_whole_gpu(d) and version:
                found.setdefault(str(spec["nodeName"]), str(version))
    return found


def advertised(node: Obj, slice_driver: str | None) -> tuple[str | None, str]:
    """``(version, where it came from)``: GFD's labels first, then the node's ResourceSlice."""
    label = driver_label(node)
    if label:
        return label, f"label {DRIVER_FULL_LABEL} (or its parts)"
    if slice_driver:
        return slice_driver, "ResourceSlice driverVersion"
    return None, "nothing"


def judge(target: Target, source: str, exit_code: int | None, log: str) -> tuple[list[str], str]:
    """``(problems, what was seen)`` for one node's probe."""
    if exit_code == NOT_INJECTED:
        return ["nvidia-smi was not injected into the container by the runtime"], "not found"
    report = read_probe(exit_code, log)
    if isinstance(report, str):
        return [report], "no report"
    seen = f"driver {report.driver}, {len(report.gpus)} GPU"
    if target.driver is None:
        return [
            f"the platform advertises no driver version for the node (no "
            f"{DRIVER_FULL_LABEL} label, no ResourceSlice driverVersion) to compare "
            f"{report.driver} with"
        ], seen
    if not same_driver(report.driver, target.driver):
        return [
            f"driver {report.driver} loaded, the platform advertises {target.driver} ({source})"
        ], seen
    return [], seen
