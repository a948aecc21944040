"""Generate the cluster's PKI with the openssl CLI.

EC P-256 keys keep generation well under a second, which matters for the
warm-start budget. Serving certificates name 127.0.0.1/localhost and the pods'
gateway (where pods reach the API server), all inside the cluster's own
network namespace: nothing here is meant to be reached from off the machine.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from simcluster.net.addresses import GATEWAY, KUBERNETES_SERVICE_IP, LOOPBACK

DAYS = "3650"
KUBELET_CLIENT_CN = "kube-apiserver-kubelet-client"


@dataclass(frozen=True)
class Pair:
    """A certificate and its key on disk."""

    cert: Path
    key: Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _key(path: Path) -> None:
    _run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(path), cwd=path.parent)
    path.chmod(0o600)


def _ca(d: Path, name: str = "ca") -> Pair:
    pair = Pair(d / f"{name}.crt", d / f"{name}.key")
    _key(pair.key)
    _run(
        "req",
        "-x509",
        "-new",
        "-key",
        str(pair.key),
        "-sha256",
        "-days",
        DAYS,
        "-subj",
        f"/CN=aicr-sim-{name}",
        "-out",
        str(pair.cert),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        cwd=d,
    )
    return pair


API_SERVER_SANS = (
    f"IP:{LOOPBACK},IP:{GATEWAY},IP:{KUBERNETES_SERVICE_IP},DNS:localhost,"
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,"
    "DNS:kubernetes.default.svc.cluster.local"
)


def _leaf(
    d: Path,
    ca: Pair,
    name: str,
    subj: str,
    *,
    server: bool,
    client: bool,
    sans: str = API_SERVER_SANS,
) -> Pair:
    pair = Pair(d / f"{name}.crt", d / f"{name}.key")
    _key(pair.key)
    csr = d / f"{name}.csr"
    _run("req", "-new", "-key", str(pair.key), "-subj", subj, "-out", str(csr), cwd=d)
    usages = [u for u, on in (("serverAuth", server), ("clientAuth", client)) if on]
    ext = d / f"{name}.ext"
    lines = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        f"extendedKeyUsage={','.join(usages)}",
    ]
    if server:
        lines.append(f"subjectAltName={sans}")
    ext.write_text("\n".join(lines) + "\n")
    _run(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca.cert),
        "-CAkey",
        str(ca.key),
        "-CAcreateserial",
        "-days",
        DAYS,
        "-sha256",
        "-extfile",
        str(ext),
        "-out",
        str(pair.cert),
        cwd=d,
    )
    csr.unlink()
    ext.unlink()
    return pair


@dataclass(frozen=True)
class Pki:
    """All credentials the control plane and its clients use."""

    ca: Pair
    apiserver: Pair
    kubelet: Pair  # serving cert of the simulated kubelet endpoint
    apiserver_kubelet_client: Pair
    admin: Pair
    controller_manager: Pair
    scheduler: Pair
    sa_key: Path
    sa_pub: Path
    front_proxy_ca: Pair  # request-header authentication (aggregation layer)
    front_proxy_client: Pair


def generate(d: Path) -> Pki:
    """Create a fresh CA and every certificate under `d`."""
    d.mkdir(parents=True, exist_ok=True)
    ca = _ca(d)
    fp_ca = _ca(d, "front-proxy-ca")
    sa_key = d / "sa.key"
    _key(sa_key)
    sa_pub = d / "sa.pub"
    _run("ec", "-in", str(sa_key), "-pubout", "-out", str(sa_pub), cwd=d)
    return Pki(
        ca=ca,
        apiserver=_leaf(d, ca, "apiserver", "/CN=kube-apiserver", server=True, client=False),
        kubelet=_leaf(d, ca, "kubelet", "/CN=aicr-sim-kubelet", server=True, client=False),
        apiserver_kubelet_client=_leaf(
            d, ca, "apiserver-kubelet-client", f"/CN={KUBELET_CLIENT_CN}", server=False, client=True
        ),
        admin=_leaf(
            d, ca, "admin", "/O=system:masters/CN=aicr-sim-admin", server=False, client=True
        ),
        controller_manager=_leaf(
            d,
            ca,
            "controller-manager",
            "/CN=system:kube-controller-manager",
            server=False,
            client=True,
        ),
        scheduler=_leaf(d, ca, "scheduler", "/CN=system:kube-scheduler", server=False, client=True),
        sa_key=sa_key,
        sa_pub=sa_pub,
        front_proxy_ca=fp_ca,
        front_proxy_client=_leaf(
            d, fp_ca, "front-proxy-client", "/CN=front-proxy-client", server=False, client=True
        ),
    )


def service_serving(d: Path, service: str, namespace: str) -> tuple[Pair, Pair]:
    """A CA of its own and a serving certificate for Service `service` in `namespace`.

    The names are the ones the API server verifies when it calls a webhook or
    an aggregated API through the Service (`<service>.<namespace>.svc`).
    """
    d.mkdir(parents=True, exist_ok=True)
    ca = _ca(d, f"{service}-ca")
    host = f"{service}.{namespace}.svc"
    sans = f"DNS:{host},DNS:{host}.cluster.local"
    return ca, _leaf(d, ca, service, f"/CN={host}", server=True, client=False, sans=sans)
