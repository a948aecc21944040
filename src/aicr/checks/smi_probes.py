"""nvidia-smi probes on GPU nodes: which nodes to probe, the probe pod, reading its answer.

Shared by check-nvidia-smi and driver-runtime-management.

No client and no I/O here, so every rule is tested on plain dicts. Which nodes
have free GPUs is ``aicr.kube.gpu_inventory``'s arithmetic. Labels,
namespace and ``--node-selector`` / ``--toleration`` placement are added by the
probe session when the objects are created.
"""

from __future__ import annotations

from typing import Any

from aicr.checks.probe_pods import gpu_claim as probe_claim
from aicr.checks.probe_pods import pinned_to, restricted_pod_spec
from aicr.checks.smi_xml import first_line, read_probe
from aicr.kube import names as k8s_names
from aicr.kube.gpu_inventory import Target
from aicr.kube.gpus import DRIVER_FULL_LABEL, GPU_RESOURCE, gpu_toleration, same_driver

Obj = dict[str, Any]
CONTAINER = "nvidia-smi"
COMMAND = ["nvidia-smi", "-q", "-x"]
IMAGE = "cuda-base"  # in aicr/checks/images.yaml
CLAIM_REQUEST = "gpus"


def claim_name(node: str) -> str:
    """The ResourceClaim of the probe on ``node`` (DRA mode)."""
    return k8s_names.bounded(f"nvidia-smi-{node}")


def gpu_claim(target: Target) -> Obj:
    """A ResourceClaim for ``target.gpus`` whole GPUs of the NVIDIA DRA driver."""
    return probe_claim(claim_name(target.node), target.gpus, CLAIM_REQUEST)


def pod_name(node: str) -> str:
    """The probe pod's name for ``node``."""
    return k8s_names.bounded(f"nvidia-smi-{node}")


def probe_pod(target: Target, image: str, dra: bool = False) -> Obj:
    """The pod that runs nvidia-smi on one node with ``target.gpus`` GPUs (limit, or claim)."""
    container: Obj = {
        "name": CONTAINER,
        "image": image,
        "command": list(COMMAND),
        "resources": {"limits": {GPU_RESOURCE: str(target.gpus)}},
    }
    if dra:
        container["resources"] = {"claims": [{"name": CLAIM_REQUEST}]}
    spec = restricted_pod_spec([container])
    spec["affinity"] = pinned_to(target.node)
    spec["tolerations"] = [gpu_toleration()]
    if dra:
        spec["resourceClaims"] = [
            {"name": CLAIM_REQUEST, "resourceClaimName": claim_name(target.node)}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name(target.node)},
        "spec": spec,
    }


def judge(target: Target, exit_code: int | None, log: str) -> tuple[list[str], str]:
    """``(problems, what was seen)`` for one node's probe."""
    report = read_probe(exit_code, log)
    if isinstance(report, str):
        return [report], first_line(log)
    seen = (
        f"{len(report.gpus)} GPUs ({', '.join(sorted({g.name for g in report.gpus})) or '-'}), "
        f"driver {report.driver}, CUDA {report.cuda or 'unknown'}"
    )
    migs = [m for g in report.gpus for m in g.migs]
    if migs:  # what the partitions are: the XML names no profile, so SMs and memory
        sizes = sorted({(m.multiprocessors, m.memory_total_mib) for m in migs}, key=str)
        seen += (
            f"; MIG on, {len(migs)} MIG devices ("
            + ", ".join(
                f"{sm if sm is not None else '?'} SMs {mib if mib is not None else '?'} MiB"
                for sm, mib in sizes
            )
            + ")"
        )
    problems = []
    if len(report.gpus) != target.gpus:
        problems.append(f"nvidia-smi sees {len(report.gpus)} GPUs, {target.gpus} were allocated")
    if target.driver is None:
        problems.append(
            f"the node has no {DRIVER_FULL_LABEL} label to compare driver {report.driver}"
        )
    elif not same_driver(report.driver, target.driver):
        problems.append(f"driver {report.driver} loaded, the node's labels say {target.driver}")
    return problems, seen
