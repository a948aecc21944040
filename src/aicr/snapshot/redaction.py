"""``aicr snapshot --redact``: the submission redaction engine over a snapshot.

Node names are taken from the ``K8s.node.<name>`` subtypes as well as from the
telling keys the engine already knows, so a node's name is replaced wherever it
stands (subtype names, labels, readings) by the same placeholder.
"""

from __future__ import annotations

from aicr.cncf.redaction import Redactor, known_names
from aicr.formats import Format, snapshot_text
from aicr.snapshot.load import parse_snapshot
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
    redactor = Redactor(node_names=nodes | node_names, cluster_names=clusters)
    text = redactor.redact(snapshot_text(snapshot, Format.YAML))
    return parse_snapshot(text, "redacted snapshot")
