"""Command lines of the control-plane components.

Network safety: everything runs inside the cluster's own network namespace
(simcluster.net), where every listener is 127.0.0.1 except the API server's,
which also answers on the pods' gateway address (the namespace's wildcard
address: it has only `lo` and the pods' bridge). The API server advertises
127.0.0.1 with the endpoint reconciler off (so the `kubernetes` Service has no
endpoints), and reaches APIServices and webhooks at their Services' endpoints
(pod IPs on the bridge).
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass
from pathlib import Path

from simcluster.cluster.pki import Pki
from simcluster.net.addresses import KWOK_POD_CIDR, POD_CIDR, SERVICE_CIDR
from simcluster.net.addresses import LOOPBACK as LOOPBACK  # re-exported: the clients use it

SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
ANY = "0.0.0.0"  # inside the cluster namespace only: loopback and the pods' gateway


def free_port() -> int:
    """A currently unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Ports:
    """Loopback ports of one run, chosen at start so runs never collide."""

    etcd: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int
    kwok: int
    kubelet: int

    @classmethod
    def pick(cls) -> Ports:
        """Choose distinct free ports for every listener."""
        seen: set[int] = set()
        values = []
        while len(values) < 7:
            p = free_port()
            if p not in seen:
                seen.add(p)
                values.append(p)
        return cls(*values)

    def to_json(self) -> dict[str, int]:
        """Serialisable form for the state file."""
        return asdict(self)


def etcd_args(bin_dir: Path, data: Path, ports: Ports) -> list[str]:
    """etcd: single member, plain HTTP on loopback, no fsync (throw-away data)."""
    client = f"http://{LOOPBACK}:{ports.etcd}"
    peer = f"http://{LOOPBACK}:{ports.etcd_peer}"
    return [
        str(bin_dir / "etcd"),
        "--name=sim",
        f"--data-dir={data}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=sim={peer}",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
    ]


ADMISSION_CONFIG = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    # Cluster default privileged: only namespaces labelled otherwise are enforced.
    defaults:
      enforce: privileged
      enforce-version: latest
      audit: privileged
      audit-version: latest
      warn: privileged
      warn-version: latest
    exemptions: {usernames: [], runtimeClasses: [], namespaces: []}
"""


def apiserver_args(bin_dir: Path, run: Path, pki: Pki, ports: Ports) -> list[str]:
    """kube-apiserver with Node,RBAC, TokenRequest and Pod Security admission."""
    admission = run / "admission.yaml"
    admission.write_text(ADMISSION_CONFIG)
    return [
        str(bin_dir / "kube-apiserver"),
        f"--etcd-servers=http://{LOOPBACK}:{ports.etcd}",
        f"--bind-address={ANY}",
        f"--advertise-address={LOOPBACK}",
        "--endpoint-reconciler-type=none",
        f"--secure-port={ports.apiserver}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--tls-cert-file={pki.apiserver.cert}",
        f"--tls-private-key-file={pki.apiserver.key}",
        f"--client-ca-file={pki.ca.cert}",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction,PodSecurity",
        f"--admission-control-config-file={admission}",
        f"--service-account-issuer={SA_ISSUER}",
        f"--service-account-key-file={pki.sa_pub}",
        f"--service-account-signing-key-file={pki.sa_key}",
        f"--kubelet-client-certificate={pki.apiserver_kubelet_client.cert}",
        f"--kubelet-client-key={pki.apiserver_kubelet_client.key}",
        f"--kubelet-certificate-authority={pki.ca.cert}",
        "--kubelet-preferred-address-types=InternalIP",
        # Request-header authentication, so components that delegate authentication
        # (controller manager, scheduler) find the client CA they look for.
        f"--requestheader-client-ca-file={pki.front_proxy_ca.cert}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki.front_proxy_client.cert}",
        f"--proxy-client-key-file={pki.front_proxy_client.key}",
        # APIServices and webhooks are dialled at their Services' endpoints: the
        # sim has no kube-proxy, so a ClusterIP leads nowhere.
        "--enable-aggregator-routing=true",
        "--allow-privileged=true",
        "--profiling=false",
        "--v=1",
    ]


def kubeconfig_text(server: str, ca: Path, cert: Path, key: Path, user: str) -> str:
    """A one-context kubeconfig with the credentials embedded."""
    import base64

    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    return f"""\
apiVersion: v1
kind: Config
clusters:
- name: aicr-sim
  cluster:
    server: {server}
    certificate-authority-data: {b64(ca)}
users:
- name: {user}
  user:
    client-certificate-data: {b64(cert)}
    client-key-data: {b64(key)}
contexts:
- name: aicr-sim
  context: {{cluster: aicr-sim, user: {user}}}
current-context: aicr-sim
"""


def controller_manager_args(bin_dir: Path, kubeconfig: Path, pki: Pki, ports: Ports) -> list[str]:
    """kube-controller-manager; node CIDR allocation off (KWOK assigns pod IPs)."""
    return [
        str(bin_dir / "kube-controller-manager"),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={ports.controller_manager}",
        "--leader-elect=false",
        "--use-service-account-credentials=true",
        f"--service-account-private-key-file={pki.sa_key}",
        f"--root-ca-file={pki.ca.cert}",
        f"--cluster-signing-cert-file={pki.ca.cert}",
        f"--cluster-signing-key-file={pki.ca.key}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--cluster-cidr={POD_CIDR}",
        "--allocate-node-cidrs=false",
        # Test-time knob: the HPA controller looks every 5 s (default 15 s), so the
        # pod-autoscaling check's scale-up and scale-down each take seconds, not a minute.
        "--horizontal-pod-autoscaler-sync-period=5s",
        "--profiling=false",
        "--v=1",
    ]


def scheduler_args(bin_dir: Path, kubeconfig: Path, ports: Ports) -> list[str]:
    """kube-scheduler with its default plugins (incl. DRA and image locality)."""
    return [
        str(bin_dir / "kube-scheduler"),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={ports.scheduler}",
        "--leader-elect=false",
        "--profiling=false",
        "--v=1",
    ]


def kwok_args(bin_dir: Path, kubeconfig: Path, stages: Path, ports: Ports) -> list[str]:
    """kwok with only our stages; its own server on a separate loopback port.

    `--node-port` is what nodes advertise as their kubelet port: it is the
    runtime's kubelet endpoint, not kwok's server (`--server-address`).
    """
    return [
        str(bin_dir / "kwok"),
        f"--kubeconfig={kubeconfig}",
        f"--config={stages}",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        f"--node-ip={LOOPBACK}",
        f"--node-port={ports.kubelet}",
        f"--server-address={LOOPBACK}:{ports.kwok}",
        f"--cidr={KWOK_POD_CIDR}",
        "--node-lease-duration-seconds=40",
    ]
