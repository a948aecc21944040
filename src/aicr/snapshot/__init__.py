"""The snapshot: what the cluster is, loaded from a file or captured live."""

from aicr.snapshot.model import Measurement, MeasurementType, Snapshot, Subtype

__all__ = ["Measurement", "MeasurementType", "Snapshot", "Subtype"]
