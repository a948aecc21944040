"""Pod sandboxes: one network namespace per pod, plugged into the cluster's bridge.

What a CNI bridge plugin does, inside the cluster's namespace: a holder
process (`unshare --net`, the pause container) keeps the pod's namespace
alive; a veth pair joins it to `cni0`, with `eth0` in the pod holding the pod
IP and a default route via the gateway. All containers of the pod join that
namespace, so two pods can both listen on 0.0.0.0:8080. The pod's namespace
ends with its holder, and the veth pair with it. Nothing is created in the
host's namespace: this runs inside the cluster's (`setup` checks it).
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import threading
import time
from dataclasses import dataclass

from simcluster.cluster import processes
from simcluster.cluster.processes import Proc
from simcluster.net.addresses import BRIDGE, GATEWAY, RUNTIME_POD_CIDR

HOLDER_ARGV = ["unshare", "--net", "--", "sleep", "infinity"]


class SandboxError(OSError):
    """The pod's network could not be set up (shown as FailedCreatePodSandBox)."""


class AddressPool:
    """Pod IPs of the runtime's range, handed out round-robin like host-local IPAM.

    A released address is reused only after the rest of the range, so a stale
    endpoint never points at a new pod soon after.
    """

    def __init__(self, cidr: str = RUNTIME_POD_CIDR) -> None:
        net = ipaddress.ip_network(cidr)
        self._hosts = [str(h) for h in net.hosts() if str(h) != GATEWAY]
        self._next = 0
        self._used: set[str] = set()
        self._lock = threading.Lock()

    def take(self) -> str:
        """A free address, now in use."""
        with self._lock:
            for step in range(len(self._hosts)):
                ip = self._hosts[(self._next + step) % len(self._hosts)]
                if ip not in self._used:
                    self._next = (self._next + step + 1) % len(self._hosts)
                    self._used.add(ip)
                    return ip
        raise SandboxError(f"no free pod IP left in {RUNTIME_POD_CIDR}")

    def release(self, ip: str) -> None:
        """Give an address back."""
        with self._lock:
            self._used.discard(ip)


@dataclass(frozen=True)
class Sandbox:
    """A running pod sandbox: its holder process and the pod's address."""

    holder: Proc
    ip: str
    netns: str  # /proc/<holder>/ns/net as `readlink` shows it, e.g. net:[4026532]

    @property
    def netns_path(self) -> str:
        """Path a container joins (setns) or a probe enters (nsenter)."""
        return f"/proc/{self.holder.pid}/ns/net"


def _ip_batch(lines: list[str], netns: str | None = None) -> None:
    argv = ["ip", "-batch", "-"]
    if netns:
        argv = ["nsenter", f"--net={netns}", "--", *argv]
    out = subprocess.run(
        argv, input="\n".join(lines) + "\n", text=True, capture_output=True, timeout=10
    )
    if out.returncode != 0:
        raise SandboxError(f'plugin type="bridge" failed (add): {out.stderr.strip()}')


def _wait_own_namespace(pid: int, ours: str, wait: float = 5.0) -> str:
    deadline = time.monotonic() + wait
    while True:
        try:
            ns = os.readlink(f"/proc/{pid}/ns/net")
        except OSError as e:
            raise SandboxError(f"pod sandbox holder {pid} ended before its namespace was up") from e
        if ns != ours:
            return ns
        if time.monotonic() > deadline:
            raise SandboxError(f"pod sandbox holder {pid} made no network namespace in {wait:g} s")
        time.sleep(0.005)


def setup(name: str, ip: str, cluster_ns: str) -> Sandbox:
    """Start a holder, give its namespace `eth0` with `ip` on the bridge; the sandbox.

    `cluster_ns` is the namespace the runtime must be in (the cluster's): the
    veth's host end is made here, so this refuses to run anywhere else.
    """
    ours = os.readlink("/proc/self/ns/net")
    if ours != cluster_ns:
        raise SandboxError("the runtime is not in the cluster's network namespace")
    proc = subprocess.Popen(
        HOLDER_ARGV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    holder = Proc(name, proc.pid, processes.start_ticks(proc.pid) or 0, HOLDER_ARGV, "")
    try:
        netns = _wait_own_namespace(proc.pid, ours)
        sandbox = Sandbox(holder, ip, netns)
        # Interface names are at most 15 bytes; the pod IP's last two octets are unique.
        host_end = "veth" + "".join(f"{int(o):02x}" for o in ip.split(".")[2:])
        _ip_batch(
            [
                f"link add {host_end} type veth peer name eth0 netns {proc.pid}",
                f"link set {host_end} master {BRIDGE} up",
            ]
        )
        prefix = RUNTIME_POD_CIDR.split("/")[1]
        _ip_batch(
            [
                "link set lo up",
                f"addr add {ip}/{prefix} dev eth0",
                "link set eth0 up",
                f"route add default via {GATEWAY} dev eth0",
            ],
            netns=sandbox.netns_path,
        )
    except BaseException:
        teardown(holder)
        raise
    return sandbox


def teardown(holder: Proc) -> None:
    """Stop the holder: the pod's namespace and its veth pair go with it."""
    processes.stop(holder, timeout=2)
