"""The cluster runs in a network namespace of its own: only `lo`, pod and Service CIDRs local.

Only route look-ups (`ip route get`, which sends nothing) ask about addresses
outside; no test here dials one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness import SimCluster
from manifests import validator_pod


def _netns(pid: int | str) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


def _route(addr: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "route", "get", addr], capture_output=True, text=True, timeout=10)


def test_the_session_and_every_component_share_one_namespace_with_only_lo(
    cluster: SimCluster,
) -> None:
    procs = cluster.sim.procs()
    ns = _netns(procs["netns"].pid)
    assert _netns("self") == ns
    assert {name: _netns(p.pid) == ns for name, p in procs.items()} == dict.fromkeys(procs, True)
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    assert [line.split(":")[0].strip() for line in lines] == ["lo"]


def test_pod_and_service_addresses_are_local_and_nothing_outside_is_routable(
    cluster: SimCluster,
) -> None:
    outside = _route("192.0.2.1")  # TEST-NET-1: never routed anywhere
    assert outside.returncode != 0 and "Network is unreachable" in outside.stderr
    for addr in ("10.244.3.4", "10.96.0.1"):
        assert _route(addr).stdout.startswith(f"local {addr} dev lo")


def test_a_pod_process_cannot_reach_an_address_outside(
    cluster: SimCluster, namespace: str
) -> None:
    # A validator container shares the cluster's namespace (it reaches the API server).
    cluster.apply(validator_pod("outside", ["sh", "-c", "ip route get 192.0.2.1 2>&1; echo rc=$?"]),
                  namespace)  # fmt: skip
    cluster.wait_for_phase(namespace, "outside", "Succeeded", timeout=60)
    log = cluster.core().read_namespaced_pod_log("outside", namespace)
    assert "Network is unreachable" in log and "rc=0" not in log
