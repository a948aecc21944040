"""The cluster's own network namespace: only `lo`, with loopback and the pod and service CIDRs.

What is modelled (and nothing more): `sim up` starts a holder process
(`unshare --net`) and moves itself into that namespace (`enter`, setns) before
it starts anything, so the control plane, the runtime and every pod process
live inside it, as do the processes that later `enter` it (the test session,
`hack/sim/sim` verbs, `sim exec`, the demo). The namespace has no interface but
`lo` and no route out: nothing in it can reach an address outside, while pod
and Service addresses (10.244.0.0/16, 10.96.0.0/16) are local addresses there.
It needs root, `unshare` and `ip`; `unavailable()` says which is missing.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time

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


def set_up(cidrs: tuple[str, ...]) -> None:
    """In the current namespace: bring `lo` up and make `cidrs` local addresses on it."""
    commands = [["ip", "link", "set", "lo", "up"]]
    commands += [["ip", "addr", "add", cidr, "dev", "lo"] for cidr in cidrs]
    for argv in commands:
        subprocess.run(argv, check=True, capture_output=True, timeout=10)
