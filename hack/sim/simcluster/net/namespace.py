"""The cluster's own network namespace: `lo` with the service CIDR, and the pods' bridge.

What is modelled (and nothing more): `sim up` starts a holder process
(`unshare --net`) and moves itself into that namespace (`enter`, setns) before
it starts anything, so the control plane, the runtime and every pod process
live inside it, as do the processes that later `enter` it (the test session,
`hack/sim/sim` verbs, `sim exec`, the demo). The namespace has `lo` (with the
Service addresses, 10.96.0.0/16, local on it) and the bridge `cni0` that the
runtime's pod sandboxes (`sandbox`) plug into, and no route out: nothing in it,
or in a pod behind it, can reach an address outside ("Network is unreachable";
forwarding is on here only so that pods are told so at once). The host's
namespace is never changed. It needs root, `unshare` and `ip`; `unavailable()`
says which is missing.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from pathlib import Path

from simcluster.net import addresses

CLONE_NEWNET = 0x40000000
HOLDER_ARGV = ["unshare", "--net", "--", "sleep", "infinity"]
_libc = ctypes.CDLL(None, use_errno=True)


def unavailable() -> str | None:
    """Why the namespace cannot be made here, or None when it can."""
    if os.geteuid() != 0:
        return "it needs root (unshare -n); run as root"
    missing = [tool for tool in ("unshare", "ip") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not installed (util-linux, iproute2)"
    return None


def enter(pid: int) -> None:
    """Move the calling thread into the network namespace of process `pid`."""
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into the network namespace of {pid}: {os.strerror(err)}")
    finally:
        os.close(fd)


def enter_new(pid: int, wait: float = 5.0) -> None:
    """Enter the namespace a just-started holder `pid` creates, once it differs from ours.

    Until `unshare` has run, /proc/PID/ns/net is still our own namespace; setting
    up `lo` there would change the host's, so this waits and then checks.
    """
    ours = os.readlink("/proc/self/ns/net")
    deadline = time.monotonic() + wait
    while os.readlink(f"/proc/{pid}/ns/net") == ours:
        if time.monotonic() > deadline:
            raise OSError(f"process {pid} did not create a network namespace in {wait:g} s")
        time.sleep(0.02)
    enter(pid)
    if os.readlink("/proc/self/ns/net") == ours:
        raise OSError("setns left this process in its original network namespace")


def inside(pid: int) -> bool:
    """True when this process is already in the network namespace of `pid`."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
    except OSError:
        return False


def set_up(host_ns: str) -> None:
    """In the cluster namespace: `lo` with the Service CIDR, the pods' bridge and gateway.

    `host_ns` is the namespace `sim up` started in; nothing is done when the
    caller is still there.
    """
    if os.readlink("/proc/self/ns/net") == host_ns:
        raise OSError("refusing to set up the pod network in the host's network namespace")
    gateway = f"{addresses.GATEWAY}/{addresses.RUNTIME_POD_CIDR.split('/')[1]}"
    batch = [
        "link set lo up",
        f"addr add {addresses.SERVICE_CIDR} dev lo",
        f"link add {addresses.BRIDGE} address {addresses.BRIDGE_MAC} type bridge",
        f"addr add {gateway} dev {addresses.BRIDGE}",
        f"link set {addresses.BRIDGE} up",
        f"route add unreachable {addresses.KWOK_POD_CIDR}",  # KWOK's pods: nothing answers
    ]
    subprocess.run(
        ["ip", "-batch", "-"],
        input="\n".join(batch) + "\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=10,
    )
    # Per namespace: lets the bridge answer a pod's packet to anywhere else with
    # ICMP "network unreachable" instead of dropping it silently.
    Path("/proc/sys/net/ipv4/ip_forward").write_text("1\n")
