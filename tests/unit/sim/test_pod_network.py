"""Pod IP allocation, probe targets and the sandbox's refusal to work outside the cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from simcluster.net.addresses import GATEWAY
from simcluster.net.sandbox import AddressPool, SandboxError, setup
from simcluster.runtime.probes import command

POD_IP = "10.244.128.7"
SIM_ROOT = Path(__file__).resolve().parents[3] / "hack" / "sim"


def test_addresses_skip_the_gateway_and_are_reused_only_after_the_rest_of_the_range() -> None:
    pool = AddressPool("10.244.128.0/29")  # hosts .1-.6, .1 the gateway
    first = [pool.take() for _ in range(3)]
    assert first == ["10.244.128.2", "10.244.128.3", "10.244.128.4"]
    pool.release("10.244.128.2")
    assert [pool.take(), pool.take(), pool.take()] == ["10.244.128.5", "10.244.128.6",
                                                       "10.244.128.2"]  # fmt: skip
    with pytest.raises(SandboxError, match="no free pod IP"):
        pool.take()
    assert GATEWAY == "10.244.128.1"


def test_network_probes_dial_the_pod_ip_by_default_and_never_another_host() -> None:
    container = {"ports": [{"name": "http", "containerPort": 8080}]}
    http = command({"httpGet": {"port": "http", "path": "/z"}}, container, "py", POD_IP)
    assert http == ["py", "-m", "simcluster.runtime.probes", "http", "http", POD_IP, "8080", "/z"]
    tcp = command({"tcpSocket": {"port": 53, "host": "localhost"}}, container, "py", POD_IP)
    assert tcp == ["py", "-m", "simcluster.runtime.probes", "tcp", "127.0.0.1", "53"]
    other = command({"tcpSocket": {"port": 53, "host": "10.244.128.9"}}, container, "py", POD_IP)
    assert other == "probe host 10.244.128.9 is not the pod's own address; not dialled"


def test_a_sandbox_is_refused_outside_the_clusters_namespace_before_anything_starts() -> None:
    with pytest.raises(SandboxError, match="not in the cluster's network namespace"):
        setup("p/sandbox", POD_IP, cluster_ns="net:[1]")


BRIDGE_PROBE = """
import os, socket, subprocess, sys, threading
from simcluster.net import addresses, namespace, sandbox
namespace.set_up(sys.argv[1])
srv = socket.create_server((addresses.GATEWAY, 7000))
accept = lambda: [srv.accept()[0].close() for _ in iter(int, 1)]
threading.Thread(target=accept, daemon=True).start()
def ip(*lines):
    subprocess.run(["ip", "-batch", "-"], input="\\n".join(lines) + "\\n", text=True, check=True)
# a port with the lowest MAC there is, as some other pod's veth may have
ip("link add vlow address 00:00:00:00:00:01 type veth peer name plow",
   "link set vlow master cni0 up")
pod = sandbox.setup("a/sandbox", "10.244.128.2", os.readlink("/proc/self/ns/net"))
dial = ["nsenter", f"--net={pod.netns_path}", sys.executable, "-c",
        f"import socket; socket.create_connection(({addresses.GATEWAY!r}, 7000), timeout=3)"]
try:
    before = subprocess.run(dial).returncode
    ip("link del vlow")  # that pod ends
    after = subprocess.run(dial).returncode
    print(before, after)
finally:
    sandbox.teardown(pod.holder)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root and unshare for a scratch network namespace")  # fmt: skip
def test_a_pod_keeps_its_gateway_when_another_pods_veth_goes() -> None:
    """The bridge's MAC is fixed: it never follows a port that then disappears."""
    host_ns = os.readlink("/proc/self/ns/net")
    out = subprocess.run(
        ["unshare", "--net", sys.executable, "-c", BRIDGE_PROBE, host_ns],
        env={"PYTHONPATH": str(SIM_ROOT), "PATH": os.environ["PATH"]},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == ["0", "0"], out.stderr
