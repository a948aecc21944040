"""The cluster runs in a network namespace of its own: `lo` and the pods' bridge, nothing out.

Only route look-ups (`ip route get`, which sends nothing) ask about addresses
outside; the one connection attempted to an outside address is made by a pod,
whose packets never get past the cluster's namespace. The host's namespace is
only read (`ip` listings through nsenter).
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


def test_the_session_and_every_component_share_one_namespace_with_lo_and_the_bridge(
    cluster: SimCluster,
) -> None:
    procs = cluster.sim.procs()
    ns = _netns(procs["netns"].pid)
    assert _netns("self") == ns
    assert {name: _netns(p.pid) == ns for name, p in procs.items()} == dict.fromkeys(procs, True)
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    links = [line.split(":")[0].strip() for line in lines]
    assert {"lo", "cni0"} <= set(links)
    assert all(n in ("lo", "cni0") or n.startswith("veth") for n in links), links  # pods' ends


def test_service_addresses_are_local_pod_ips_on_the_bridge_and_nothing_outside_routable(
    cluster: SimCluster,
) -> None:
    outside = _route("192.0.2.1")  # TEST-NET-1: never routed anywhere
    assert outside.returncode != 0 and "Network is unreachable" in outside.stderr
    assert _route("10.96.0.1").stdout.startswith("local 10.96.0.1 dev lo")
    assert _route("10.244.128.9").stdout.startswith("10.244.128.9 dev cni0 src 10.244.128.1")
    kwok = _route("10.244.3.4")  # KWOK's pods run nothing: their half is unreachable
    assert kwok.returncode != 0 and "No route to host" in kwok.stderr


def _host_netns() -> str:
    """/proc/PID/ns/net of this session's nearest ancestor outside the cluster's namespace."""
    ours, pid = _netns("self"), os.getppid()
    while pid > 1:
        if _netns(pid) != ours:
            return f"/proc/{pid}/ns/net"
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    raise AssertionError("no ancestor of this session is outside the cluster's namespace")


def test_the_hosts_namespace_has_no_trace_of_the_pod_network(cluster: SimCluster) -> None:
    host = _host_netns()
    shown = {what: subprocess.run(["nsenter", f"--net={host}", "--", "ip", "-o", what, "show"],
                                  capture_output=True, text=True, timeout=10, check=True).stdout
             for what in ("link", "addr", "route")}  # fmt: skip
    for what, text in shown.items():
        for trace in ("cni0", "veth", "10.244.", "10.96."):
            assert trace not in text, f"{trace} in the host's `ip {what}`"


def test_a_validator_pod_has_its_own_network_and_cannot_reach_an_address_outside(
    cluster: SimCluster, namespace: str
) -> None:
    # A connection attempt, not a route look-up: the pod's default route leads to the
    # cluster's bridge, which answers "Network is unreachable" for any address outside.
    dial = ("import socket; s = socket.socket(); s.settimeout(3)\n"
            "try: s.connect(('198.51.100.1', 80)); print('connected')\n"
            "except OSError as e: print(e.strerror)")  # fmt: skip
    script = 'tail -n +3 /proc/net/dev | cut -d: -f1; exec python3 -c "$0"'
    cluster.apply(validator_pod("outside", ["sh", "-c", script], args=[dial]), namespace)
    p = cluster.wait_for_phase(namespace, "outside", "Succeeded", timeout=60)
    log = cluster.core().read_namespaced_pod_log("outside", namespace).splitlines()
    assert [line.strip() for line in log] == ["lo", "eth0", "Network is unreachable"], log
    assert p["status"]["podIP"].startswith("10.244.")
