"""A small Kubernetes REST client for the check processes, on httpx.

Every check runs in a fresh process (its Job's pod, or a local subprocess), so
whatever it imports it pays for once per check. The generated kubernetes client
costs about 0.7 s of CPU before its first call (its API classes build hundreds
of validators at import), which under ``--parallel`` on a small node is most of
a check's overhead. So checks talk REST here: GET, POST, merge-PATCH and DELETE
of JSON, the pod log as text, and a watch stream read on the calling thread;
errors are ``KubeApiError``.

Credentials: inside a pod (no kubeconfig, the service-account files present)
they are read directly; otherwise the kubernetes package's own kubeconfig
loader resolves them, so contexts, exec plugins and client certificates behave
exactly as everywhere else in aicr.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr.kube.target import KubeTarget

if TYPE_CHECKING:
    import ssl

    import httpx

Obj = dict[str, Any]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_KUBECONFIG = Path("~/.kube/config")
REQUEST_SECONDS = 30.0
# A watch's read timeout is the server's timeoutSeconds plus this: the server ends
# the stream first, so a read that times out means the connection died.
WATCH_READ_MARGIN_SECONDS = 10.0


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
    import ssl  # here, not at the top: the checks' start-up and --no-cluster never need it

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
    import ssl

    from aicr.kube.target import load_configuration

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
        return self._json(self._request("GET", path, params=params))

    def get_text(self, path: str, params: dict[str, str] | None = None) -> str:
        """GET ``path`` as text (a pod log)."""
        return self._request("GET", path, params=params, accept="*/*").text

    def create(self, path: str, body: Obj, dry_run: bool = False) -> Obj:
        """POST ``body`` to the collection ``path``; the created (or dry-run) object."""
        params = {"dryRun": "All"} if dry_run else None
        return self._json(self._request("POST", path, json=body, params=params))

    def delete(self, path: str, grace_seconds: int | None = None) -> None:
        """DELETE ``path``, dependents in the background; a 404 (already gone) is fine."""
        options: Obj = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "propagationPolicy": "Background",
        }
        if grace_seconds is not None:
            options["gracePeriodSeconds"] = grace_seconds
        try:
            self._request("DELETE", path, json=options)
        except KubeApiError as exc:
            if exc.status != 404:
                raise

    def merge_patch(self, path: str, body: Obj) -> Obj:
        """PATCH ``path`` with a JSON merge patch (RFC 7386)."""
        return self._json(
            self._request(
                "PATCH",
                path,
                content=json.dumps(body).encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            )
        )

    def watch(
        self, path: str, resource_version: str, seconds: int, params: dict[str, str] | None = None
    ) -> Iterator[Obj]:
        """Watch events (``{"type", "object"}``) of the collection ``path`` on this thread.

        The server ends the stream after ``seconds``; the read timeout is longer,
        so a stalled connection raises instead of blocking forever.
        """
        import httpx

        query = {
            **(params or {}),
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(max(1, seconds)),
        }
        timeout = httpx.Timeout(REQUEST_SECONDS, read=seconds + WATCH_READ_MARGIN_SECONDS)
        request = self._http.build_request(
            "GET",
            path,
            params=query,
            headers=self._headers("application/json"),
            extensions=self._extensions(),
            timeout=timeout,
        )
        response = self._http.send(request, stream=True)
        try:
            if response.status_code >= 400:
                response.read()
                raise _error(response)
            for line in response.iter_lines():
                if line.strip():
                    event: Obj = json.loads(line)
                    yield event
        finally:
            response.close()

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        token = self.creds.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _extensions(self) -> dict[str, Any] | None:
        return {"sni_hostname": self.creds.server_name} if self.creds.server_name else None

    def _request(
        self, method: str, path: str, accept: str = "application/json", **kwargs: Any
    ) -> httpx.Response:
        headers = {**self._headers(accept), **kwargs.pop("headers", {})}
        response = self._http.request(
            method, path, headers=headers, extensions=self._extensions(), **kwargs
        )
        if response.status_code >= 400:
            raise _error(response)
        return response

    @staticmethod
    def _json(response: httpx.Response) -> Obj:
        data: Obj = response.json()
        return data


def _error(response: httpx.Response) -> KubeApiError:
    """The Status object's message when the server sent one, else the body's start."""
    try:
        message = str(response.json().get("message") or "")
    except ValueError:
        message = response.text[:200].strip()
    return KubeApiError(response.status_code, response.reason_phrase, message)
