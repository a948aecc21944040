"""The pure parts of dra-support: the API's resources, slices per node, the probe, its verdict.

No client and no I/O: functions of the API's dicts, tested as tables.
"""

from __future__ import annotations

from typing import Any

from aicr.checks.probe_pods import gpu_claim, restricted_pod_spec
from aicr.checks.smi_xml import first_line, read_probe
from aicr.kube.gpus import device_uuid, gpu_toleration
from aicr.kube.gpus import whole_gpus_by_node as whole_gpus_by_node

Obj = dict[str, Any]
API = "resource.k8s.io/v1"
RESOURCES = ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")
LIFECYCLE_CLAIM = "dra-lifecycle"
GPU_CLAIM = POD = "dra-gpu"
CONTAINER = "nvidia-smi"
COMMAND = ["nvidia-smi", "-q", "-x"]
REQUEST = "gpu"
IMAGE = "cuda-base"  # in aicr/checks/images.yaml


def missing_resources(served: list[str] | None) -> list[str]:
    """The DRA resources API discovery does not list (all of them when the API is not served)."""
    return [r for r in RESOURCES if r not in (served or [])]


def lifecycle_claim() -> Obj:
    """The claim created, read back and deleted to show the API works in the run namespace."""
    return gpu_claim(LIFECYCLE_CLAIM, 1, REQUEST)


def probe_claim() -> Obj:
    """The claim for one GPU the probe pod uses."""
    return gpu_claim(GPU_CLAIM, 1, REQUEST)


def probe_pod(image: str) -> Obj:
    """A pod whose one container uses the claim and lists the GPUs it sees."""
    container = {
        "name": CONTAINER,
        "image": image,
        "command": list(COMMAND),
        "resources": {"claims": [{"name": REQUEST}]},
    }
    spec = restricted_pod_spec([container])
    spec["tolerations"] = [gpu_toleration()]
    spec["resourceClaims"] = [{"name": REQUEST, "resourceClaimName": GPU_CLAIM}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD}, "spec": spec}


def judge_probe(
    device: Obj, node: str | None, pod: Obj, exit_code: int, log: str
) -> tuple[list[str], str]:
    """``(problems, what was seen)``: the pod ran on the device's node and saw only that device."""
    uuid = device_uuid(device)
    ran_on = (pod.get("spec") or {}).get("nodeName")
    report = read_probe(exit_code, log)
    if isinstance(report, str):
        return [report], first_line(log)
    seen = f"ran on {ran_on}; saw {', '.join(g.uuid for g in report.gpus) or 'no GPU'}"
    problems = []
    if ran_on != node:
        problems.append(f"the pod ran on {ran_on}, the device is on {node}")
    if not uuid:
        problems.append(f"device {device.get('name')} publishes no uuid attribute to compare")
    elif [g.uuid for g in report.gpus] != [uuid]:
        problems.append(
            f"the container saw {', '.join(g.uuid for g in report.gpus) or 'no GPU'}"
            f", not exactly the allocated {uuid}"
        )
    return problems, seen
