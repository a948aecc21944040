"""Every socket of every simulator process is on loopback or the cluster's own pod network.

The API server alone listens on the wildcard address of the cluster's network
namespace (loopback and the pods' gateway) and dials pods (webhooks,
APIServices); everything else stays on loopback.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from pathlib import Path

from harness import SimCluster
from simcluster.cluster import processes
from simcluster.net.addresses import POD_CIDR

PODS = ipaddress.ip_network(POD_CIDR)


def _addr(hex_addr: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = hex_addr.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.IPv4Address(raw[::-1])
    else:  # /proc/net/tcp6 stores four little-endian 32-bit words
        words = struct.unpack("<4I", raw)
        ip = ipaddress.IPv6Address(struct.pack(">4I", *words))
        if ip.ipv4_mapped:
            ip = ip.ipv4_mapped
    return ip, int(port, 16)


def _sockets() -> dict[str, tuple[str, str]]:
    table = {}
    for name in ("tcp", "tcp6", "udp", "udp6"):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            f = line.split()
            table[f[9]] = (f[1], f[2])  # inode -> (local, remote)
    return table


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[8:-1])
    return out


def test_all_simulator_sockets_are_loopback_or_the_pod_network(cluster: SimCluster) -> None:
    table = _sockets()
    checked = 0
    for proc in cluster.sim.procs().values():
        assert processes.alive(proc), f"{proc.name} is not running"
        for inode in _socket_inodes(proc.pid):
            if inode not in table:
                continue  # a Unix socket
            local, remote = (_addr(a) for a in table[inode])
            wildcard = proc.name == "kube-apiserver" and local[0].is_unspecified
            assert local[0].is_loopback or wildcard or local[0] in PODS, (
                f"{proc.name} bound to {local[0]}:{local[1]}"
            )
            assert remote[0].is_loopback or remote[0].is_unspecified or remote[0] in PODS, (
                f"{proc.name} connected to {remote[0]}:{remote[1]}"
            )
            checked += 1
    assert checked > 10  # the check saw the listeners and the client connections


def test_kubelet_endpoint_serves_only_the_api_server(cluster: SimCluster) -> None:
    import ssl
    import urllib.error
    import urllib.request

    pki = cluster.sim.pki_dir
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx)
    )
    url = f"https://127.0.0.1:{cluster.sim.ports.kubelet}/containerLogs/default/x/y"
    try:
        opener.open(url, timeout=5)
        raise AssertionError("the kubelet endpoint served a non-API-server client")
    except urllib.error.HTTPError as e:
        assert e.code == 403
