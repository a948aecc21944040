from __future__ import annotations

from pathlib import Path

import pytest

from aicr.errors import SchemaError
from aicr.snapshot.load import load_snapshot, parse_snapshot

SNAPSHOT = """
kind: Snapshot
apiVersion: aicr.nvidia.com/v1alpha1
metadata: {source-node: n1}
measurements:
  - type: OS
    subtypes:
      - subtype: sysctl
        data:
          /proc/sys/kernel/osrelease: 6.8.0-1028-aws
      - subtype: release
        data: {ID: ubuntu, VERSION_ID: "24.04"}
  - type: K8s
    subtypes:
      - subtype: helm
        data: {cert-manager.version: v1.17.2}
      - subtype: node.gpu
        data: {count: 8}
"""


def test_snapshot_without_header_loads() -> None:
    snapshot = load_snapshot(str(Path(__file__).parents[2] / "data/aicr/headerless-snapshot.yaml"))
    assert snapshot.kind is None
    assert snapshot.server_version == "v1.33.0"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("OS.sysctl./proc/sys/kernel/osrelease", "6.8.0-1028-aws"),
        ("OS.release.VERSION_ID", "24.04"),
        ("K8s.helm.cert-manager.version", "v1.17.2"),
        ("K8s.node.gpu.count", 8),
        ("OS.release.MISSING", None),
        ("GPU.smi.driver", None),
    ],
    ids=["key-with-slashes-and-dots", "plain", "key-with-dots", "subtype-with-dot", "missing-key",
         "missing-type"],
)
def test_reading_paths(path: str, value: object) -> None:
    assert parse_snapshot(SNAPSHOT).reading(path) == value


def test_metadata_must_be_strings() -> None:
    with pytest.raises(SchemaError) as exc:
        parse_snapshot("metadata:\n  count: [1]\n", "s.yaml")
    assert str(exc.value).startswith("s.yaml:2: metadata.count: input should be a valid string")


def test_unknown_measurement_type_is_refused() -> None:
    with pytest.raises(SchemaError) as exc:
        parse_snapshot("measurements:\n  - type: Gpu\n", "s.yaml")
    assert "measurements[0].type: input should be 'K8s', 'GPU', 'OS'" in str(exc.value)
