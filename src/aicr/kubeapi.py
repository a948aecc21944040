"""A small Kubernetes REST client for the check processes, on httpx.

Every check runs in a fresh process (its Job's pod, or a local subprocess), so
whatever it imports it pays for once per check. The generated kubernetes client
costs about 0.7 s of CPU before its first call (its API classes build hundreds
of validators at import), which under ``--parallel`` on a small node is most of
a check's overhead. Checks only read objects and write their result, so they
talk REST here: GET and merge-PATCH of JSON, errors as ``KubeApiError``.

Credentials: inside a pod (no kubeconfig, the service-account files present)
they are read directly; otherwise the kubernetes package's own kubeconfig
loader resolves them, so contexts, exec plugins and client certificates behave
exactly as everywhere else in aicr.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr.k8s import KubeTarget

if TYPE_CHECKING:
    import httpx

Obj = dict[str, Any]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_KUBECONFIG = Path("~/.kube/config")
REQUEST_SECONDS = 30.0


class KubeApiError(Exception):
    """The API server answered with an error status; ``str`` is one readable line."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        self.status, self.reason, self.message = status, reason, message
        super().__init__(f"HTTP {status} {reason}" + (f": {message}" if message else ""))


@dataclass(frozen=True)
class Credentials:
    """Where the API server is and how to prove who we are to it."""

    server: str
    token: Callable[[], str | None]  # called per request: tokens rotate
    tls: ssl.SSLContext
    server_name: str | None = None  # TLS name when it differs from the server's host
    proxy: str | None = None  # the kubeconfig's proxy-url


def credentials(target: KubeTarget) -> Credentials:
    """In-cluster credentials when running in a pod without a kubeconfig, else the kubeconfig's."""
    if target == KubeTarget() and not _kubeconfig_present():
        found = _in_cluster()
        if found is not None:
            return found
    return _from_kubeconfig(target)


def _kubeconfig_present() -> bool:
    return bool(os.environ.get("KUBECONFIG")) or DEFAULT_KUBECONFIG.expanduser().exists()


def _in_cluster() -> Credentials | None:
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT")
    token_file, ca_file = SERVICE_ACCOUNT_DIR / "token", SERVICE_ACCOUNT_DIR / "ca.crt"
    if not host or not port or not token_file.exists() or not ca_file.exists():
        return None
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"

    def token() -> str:
        return token_file.read_text(encoding="utf-8").strip()

    return Credentials(
        f"https://{host}:{port}", token, ssl.create_default_context(cafile=str(ca_file))
    )


def _from_kubeconfig(target: KubeTarget) -> Credentials:
    from aicr.k8s import load_configuration

    cfg = load_configuration(target)
    if cfg.verify_ssl:
        tls = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
        ca_data = getattr(cfg, "ca_cert_data", None)  # newer clients may keep the CA in memory
        if ca_data and not cfg.ssl_ca_cert:
            pem = ca_data.decode() if isinstance(ca_data, bytes) else str(ca_data)
            tls.load_verify_locations(cadata=pem)
    else:
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    if cfg.cert_file:
        tls.load_cert_chain(cfg.cert_file, cfg.key_file or None)

    def token() -> str | None:
        # auth_settings() runs the loader's refresh hook (exec plugins, expiring
        # tokens); the key it stores the token under differs between client versions
        for setting in cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("key") == "authorization":
                value = str(setting.get("value") or "")
                return value.removeprefix("Bearer ").strip() or None
        return None

    return Credentials(
        cfg.host,
        token,
        tls,
        server_name=getattr(cfg, "tls_server_name", None) or None,
        proxy=cfg.proxy or None,
    )


class KubeApi:
    """JSON over REST to one API server; use as a context manager or call ``close``."""

    def __init__(
        self,
        creds: Credentials,
        timeout: float = REQUEST_SECONDS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        self.creds = creds
        # trust_env=False: like the kubernetes client, ignore *_PROXY variables and
        # use only the kubeconfig's proxy-url
        self._http = httpx.Client(
            base_url=creds.server,
            verify=creds.tls,
            timeout=timeout,
            trust_env=False,
            proxy=creds.proxy,
            transport=transport,
        )

    def __enter__(self) -> KubeApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def get(self, path: str, params: dict[str, str] | None = None) -> Obj:
        """GET ``path``; the decoded JSON body."""
        return self._request("GET", path, params=params)

    def merge_patch(self, path: str, body: Obj) -> Obj:
        """PATCH ``path`` with a JSON merge patch (RFC 7386)."""
        return self._request(
            "PATCH",
            path,
            content=json.dumps(body).encode(),
            headers={"Content-Type": "application/merge-patch+json"},
        )

    def _request(self, method: str, path: str, **kwargs: Any) -> Obj:
        headers = {"Accept": "application/json", **kwargs.pop("headers", {})}
        token = self.creds.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        extensions = {"sni_hostname": self.creds.server_name} if self.creds.server_name else None
        response = self._http.request(
            method, path, headers=headers, extensions=extensions, **kwargs
        )
        if response.status_code >= 400:
            raise _error(response)
        data: Obj = response.json()
        return data


def _error(response: httpx.Response) -> KubeApiError:
    """The Status object's message when the server sent one, else the body's start."""
    try:
        message = str(response.json().get("message") or "")
    except ValueError:
        message = response.text[:200].strip()
    return KubeApiError(response.status_code, response.reason_phrase, message)
