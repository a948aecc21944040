"""The cluster's address plan, declared once.

10.244.0.0/16 is the cluster's pod CIDR. KWOK hands out the lower half to the
pods it plays (no process answers there: the cluster namespace routes it as
unreachable); the process runtime gives the upper half to its pods, which sit
on the bridge `cni0` whose address is the pods' gateway. Service addresses
(10.96.0.0/16) are local addresses on the cluster namespace's `lo`.
"""

from __future__ import annotations

import ipaddress

POD_CIDR = "10.244.0.0/16"
KWOK_POD_CIDR = "10.244.0.0/17"
RUNTIME_POD_CIDR = "10.244.128.0/17"
SERVICE_CIDR = "10.96.0.0/16"
BRIDGE = "cni0"
GATEWAY = str(next(ipaddress.ip_network(RUNTIME_POD_CIDR).hosts()))  # 10.244.128.1
# Set, never left to the kernel: an unset bridge MAC follows the lowest MAC of its
# ports, so a pod whose ARP cache still held the old one lost the gateway (the API
# server) for up to half a minute after some other pod ended. Locally administered.
BRIDGE_MAC = "02:00:" + ":".join(f"{int(o):02x}" for o in GATEWAY.split("."))
KUBERNETES_SERVICE_IP = str(next(ipaddress.ip_network(SERVICE_CIDR).hosts()))  # 10.96.0.1
LOOPBACK = "127.0.0.1"
