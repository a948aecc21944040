"""The snapshot: AICR's Snapshot format, what the cluster is."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from aicr.document import Document
from aicr.errors import ValidationFailed

Reading = str | int | float | bool
# The GPU count key of AICR's agent snapshots, and of our live capture (GPU.cluster.count).
GPU_COUNT_KEYS = ("gpu-count", "count")
# A subtype whose context has this key holds the readings of that one node group.
GROUP_CONTEXT = "aicr/node-group"
NODE_GROUP_PREFIX = "nodegroup."


class MeasurementType(StrEnum):
    """Kinds of measurement a snapshot can hold."""

    K8S = "K8s"
    GPU = "GPU"
    OS = "OS"
    SYSTEMD = "SystemD"
    NODE_TOPOLOGY = "NodeTopology"


class Subtype(Document):
    """A group of readings (``server``, ``release``, ``smi``...)."""

    subtype: str
    data: dict[str, Reading | None] = Field(default_factory=dict)
    context: dict[str, str] | None = None


class Measurement(Document):
    """All readings of one type."""

    type: MeasurementType
    subtypes: list[Subtype] = Field(default_factory=list)


class Snapshot(Document):
    """What the cluster is: versions, GPUs, OS. The header is optional, as in AICR."""

    kind: Literal["Snapshot"] | None = None
    api_version: Literal["aicr.nvidia.com/v1alpha1"] | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    measurements: list[Measurement] = Field(default_factory=list)

    def reading(self, path: str) -> Reading | None:
        """The value at ``Type.subtype.key``; the key may itself contain dots."""
        found = self.lookup(path)
        return found[1] if found else None

    def lookup(self, path: str, group: str | None = None) -> tuple[str, Reading | None] | None:
        """Resolve a constraint path; None when type or subtype or key is absent.

        Only subtypes of ``group`` count (None: those of no group, the cluster-wide
        readings). Subtype names may contain dots too, so every split is tried,
        longest subtype first.
        """
        type_name, _, rest = path.partition(".")
        for measurement in self.measurements:
            if measurement.type.value != type_name:
                continue
            for sub in sorted(measurement.subtypes, key=lambda s: -len(s.subtype)):
                if (sub.context or {}).get(GROUP_CONTEXT) != group:
                    continue
                prefix = sub.subtype + "."
                if rest.startswith(prefix) and rest[len(prefix) :] in sub.data:
                    key = rest[len(prefix) :]
                    return key, sub.data[key]
        return None

    @property
    def grouped(self) -> list[str]:
        """Every node group some subtype holds readings for."""
        return sorted(
            {
                sub.context[GROUP_CONTEXT]
                for m in self.measurements
                for sub in m.subtypes
                if sub.context and GROUP_CONTEXT in sub.context
            }
        )

    @property
    def gpu_groups(self) -> list[str]:
        """The node groups with GPUs (``K8s.nodegroup.<name>.gpu: true``)."""
        return sorted(
            sub.subtype.removeprefix(NODE_GROUP_PREFIX)
            for m in self.measurements
            if m.type == MeasurementType.K8S
            for sub in m.subtypes
            if sub.subtype.startswith(NODE_GROUP_PREFIX) and sub.data.get("gpu") is True
        )

    @property
    def gpu_count(self) -> int:
        """The most GPUs any GPU reading reports: AICR's ``gpu-count`` or a live ``count``."""
        counts = [
            value
            for m in self.measurements
            if m.type == MeasurementType.GPU
            for sub in m.subtypes
            for key, value in sub.data.items()
            if key in GPU_COUNT_KEYS and isinstance(value, int) and not isinstance(value, bool)
        ]
        return max(counts, default=0)

    @property
    def server_version(self) -> str | None:
        """The Kubernetes server version, e.g. ``v1.33.0``."""
        value = self.reading("K8s.server.version")
        return None if value is None else str(value)


def require_gpu(snapshot: Snapshot, source: str) -> None:
    """--require-gpu: stop (exit 8) when the snapshot reports no GPU, as AICR does."""
    if snapshot.gpu_count < 1:
        raise ValidationFailed(
            f"--require-gpu: the snapshot ({source}) reports no GPU "
            "(no gpu-count above 0, no node with allocatable nvidia.com/gpu)"
        )
