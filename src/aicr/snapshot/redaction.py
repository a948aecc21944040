"""``aicr snapshot --redact``, and a submission's snapshot: the redaction engine over its data.

Node names are taken from the ``K8s.node.<name>`` subtypes as well as from the
telling keys the engine already knows, so a node's name is replaced wherever it
stands (subtype names, labels, readings) by the same placeholder.
"""

from __future__ import annotations

from aicr.redaction import Redactor, known_names
from aicr.snapshot.model import MeasurementType, Snapshot

NODE_SUBTYPE = "node."


def redact(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with every sensitive value replaced by a stable placeholder."""
    sources: list[object] = [snapshot.metadata]
    node_names: set[str] = set()
    for m in snapshot.measurements:
        for sub in m.subtypes:
            sources += [sub.data, sub.context or {}]
            if m.type == MeasurementType.K8S and sub.subtype.startswith(NODE_SUBTYPE):
                node_names.add(sub.subtype.removeprefix(NODE_SUBTYPE))
    nodes, clusters = known_names(*sources)
    return redact_snapshot(
        snapshot, Redactor(node_names=nodes | node_names, cluster_names=clusters)
    )


def redact_snapshot(snapshot: Snapshot, redactor: Redactor) -> Snapshot:
    """``snapshot`` with every value (readings, context, subtype names) redacted."""
    data = snapshot.model_dump(mode="json", by_alias=True)
    redacted = redactor.redact_value(data)
    return snapshot if redacted is data else Snapshot.model_validate(redacted)
