"""DCGM exporter metrics of one GPU node, in Prometheus text format (pure: no client, no I/O).

What is modelled (and nothing more): the series dcgm-exporter's default counter
set publishes per GPU, with its label set (`gpu`, `UUID`, `pci_bus_id`,
`device`, `modelName`, `Hostname`, `DCGM_FI_DRIVER_VERSION`, and `namespace`,
`pod`, `container` of the pod the exporter maps the GPU to from the kubelet's
pod-resources API; for a GPU mapped through a DRA claim also `dra_claim_name`,
`dra_claim_namespace`, `dra_driver_name`, `dra_pool_name`, `dra_device_name`).
Readings follow use, whoever the exporter attributes the GPU to: a GPU a
running container loads (DCGM's `dcgmproftester12`, the GPU model's load) is
busy (utilization 100 %, 60 % of its framebuffer used, hot, near its power
limit); a free one, or one held by a container that runs no load, idles. Faults of the
node: `exporter-unlabelled` drops the per-GPU labels (series without `gpu` and
`UUID`), `exporter-stale` freezes every sample at the moment the fault was
seen, with that moment as an explicit timestamp.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from simcluster.gpu.smi import bus_id, gpu_uuid


@dataclass(frozen=True)
class Claimed:
    """How a GPU reached its holder through DRA: the claim and the allocated device."""

    claim: str
    namespace: str
    driver: str
    pool: str
    device: str

    def labels(self) -> dict[str, str]:
        """The labels dcgm-exporter adds for it."""
        return {
            "dra_claim_name": self.claim,
            "dra_claim_namespace": self.namespace,
            "dra_device_name": self.device,
            "dra_driver_name": self.driver,
            "dra_pool_name": self.pool,
        }


@dataclass(frozen=True)
class Holder:
    """The container the exporter maps a GPU to (and the claim, for a DRA device)."""

    namespace: str
    pod: str
    container: str
    claimed: Claimed | None = None


@dataclass(frozen=True)
class Metric:
    """One DCGM field: its name, type, help text (as dcgm-exporter prints it)."""

    name: str
    kind: str
    help: str


METRICS = (
    Metric("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    Metric("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    Metric("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    Metric("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    Metric("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    Metric("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    Metric("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    Metric("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    Metric("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    Metric(
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "counter",
        "Total number of NVLink bandwidth counters for all lanes.",
    ),
)


def readings(memory_mib: int, busy: bool, uptime: float) -> dict[str, float]:
    """The value of each field for one GPU."""
    used = int(memory_mib * 0.6) if busy else 0
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1980 if busy else 345,
        "DCGM_FI_DEV_MEM_CLOCK": 2619 if busy else 1593,
        "DCGM_FI_DEV_GPU_TEMP": 67 if busy else 31,
        "DCGM_FI_DEV_POWER_USAGE": 612.5 if busy else 71.3,
        "DCGM_FI_DEV_GPU_UTIL": 100 if busy else 0,
        "DCGM_FI_DEV_MEM_COPY_UTIL": 42 if busy else 0,
        "DCGM_FI_DEV_FB_FREE": memory_mib - used,
        "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_XID_ERRORS": 0,
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": int(uptime) * (2_400_000 if busy else 1_000),
    }


def _labels(pairs: Mapping[str, str]) -> str:
    body = ",".join(f'{k}="{v}"' for k, v in pairs.items())
    return "{" + body + "}"


def render(
    profile: Mapping[str, object],
    busy: Collection[int],
    holders: Mapping[int, Holder],
    uptime: float,
    frozen_at_ms: int | None = None,
) -> str:
    """The /metrics page of the node's exporter.

    `profile` is the GPU node model's profile (node, product, count,
    memoryMiB, driver, faults); `busy` the GPU indexes running containers
    have; `holders` maps GPU index to the container the exporter maps it to;
    `frozen_at_ms` (the `exporter-stale` fault) stamps every sample with that time.
    """
    node, faults = str(profile["node"]), list(profile.get("faults") or [])  # type: ignore[call-overload]
    count, memory = int(profile["count"]), int(profile["memoryMiB"])  # type: ignore[call-overload]
    unlabelled = "exporter-unlabelled" in faults
    stamp = f" {frozen_at_ms}" if frozen_at_ms is not None else ""
    per_gpu = {i: readings(memory, i in busy, uptime) for i in range(count)}
    lines = []
    for m in METRICS:
        lines += [f"# HELP {m.name} {m.help}", f"# TYPE {m.name} {m.kind}"]
        for i in range(count):
            labels: dict[str, str] = {}
            if not unlabelled:
                labels |= {
                    "gpu": str(i),
                    "UUID": gpu_uuid(node, i),
                    "pci_bus_id": bus_id(i),
                    "device": f"nvidia{i}",
                }
            labels |= {
                "modelName": str(profile["product"]),
                "Hostname": node,
                "DCGM_FI_DRIVER_VERSION": str(profile["driver"]),
            }
            if i in holders:
                h = holders[i]
                labels["container"] = h.container
                labels |= h.claimed.labels() if h.claimed else {}
                labels |= {"namespace": h.namespace, "pod": h.pod}
            value = per_gpu[i][m.name]
            lines.append(f"{m.name}{_labels(labels)} {value:g}{stamp}")
    return "\n".join(lines) + "\n"
