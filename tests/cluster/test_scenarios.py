"""Scenarios load from test code (CRDs, custom objects, node changes) and reset cleanly."""

from __future__ import annotations

import socket

import pytest
from harness import SimCluster
from kubernetes.dynamic import DynamicClient

import netguard

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.sim.aicr.dev}
spec:
  group: sim.aicr.dev
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
"""


def test_crd_and_custom_object(cluster: SimCluster, namespace: str) -> None:
    cluster.apply(CRD)
    cluster.apply(
        {
            "apiVersion": "sim.aicr.dev/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"size": 3},
        },
        namespace,
    )
    widgets = DynamicClient(cluster.api()).resources.get(
        api_version="sim.aicr.dev/v1", kind="Widget"
    )
    assert widgets.get(name="w", namespace=namespace).spec.size == 3


def test_node_change_is_undone_by_reset(cluster: SimCluster) -> None:
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "cpu-system-0", "labels": {"scenario.sim.aicr.dev/x": "1"}},
        }
    )
    assert cluster.core().read_node("cpu-system-0").metadata.labels["scenario.sim.aicr.dev/x"]
    cluster.reset()
    assert "scenario.sim.aicr.dev/x" not in cluster.core().read_node("cpu-system-0").metadata.labels


def test_network_guard_refuses_non_loopback() -> None:
    # 192.0.2.0/24 is reserved for documentation: refused before any packet is sent.
    with pytest.raises(netguard.NetworkViolation):
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    assert netguard.take_violations() == ["resolve '192.0.2.1'"]
