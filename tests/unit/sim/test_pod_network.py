"""Pod IP allocation, probe targets and the sandbox's refusal to work outside the cluster."""

from __future__ import annotations

import pytest
from simcluster.net.addresses import GATEWAY
from simcluster.net.sandbox import AddressPool, SandboxError, setup
from simcluster.runtime.probes import command

POD_IP = "10.244.128.7"


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
