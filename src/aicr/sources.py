"""Where input documents come from: a path, an http(s) URL, or ``cm://namespace/name[/key]``."""

from __future__ import annotations

from pathlib import Path

from aicr.errors import ClusterError, FileFormatError, Problem
from aicr.kube.target import KubeTarget

HTTP_TIMEOUT_SECONDS = 30.0  # a recipe server that has not answered by then is down


def parse_configmap_ref(ref: str) -> tuple[str, str, str | None]:
    """``cm://ns/name[/key]`` -> (namespace, name, key or None)."""
    parts = ref.removeprefix("cm://").split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise FileFormatError(
            Problem(f"invalid ConfigMap reference '{ref}' (expected cm://namespace/name[/key])")
        )
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def read(ref: str, kube: KubeTarget | None = None) -> str:
    """Return the text behind ``ref``; every failure names the reference."""
    if ref.startswith("cm://"):
        return _read_configmap(ref, kube)
    if ref.startswith(("http://", "https://")):
        return _read_url(ref)
    try:
        return Path(ref).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileFormatError(Problem("file not found", source=ref)) from None
    except IsADirectoryError:
        raise FileFormatError(Problem("is a directory, expected a file", source=ref)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(Problem(f"cannot read: {exc}", source=ref)) from None


def _read_url(ref: str) -> str:
    import httpx

    try:
        response = httpx.get(ref, timeout=HTTP_TIMEOUT_SECONDS, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise FileFormatError(Problem(f"cannot fetch: {exc}", source=ref)) from None
    if response.status_code >= 400:
        raise FileFormatError(Problem(f"cannot fetch: HTTP {response.status_code}", source=ref))
    return response.text


def _read_configmap(ref: str, kube: KubeTarget | None) -> str:
    namespace, name, key = parse_configmap_ref(ref)
    if kube is None:
        raise ClusterError(f"{ref}: reading a ConfigMap needs cluster access")
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.kube.target import api_client, describe_api_error

    try:
        cm = client.CoreV1Api(api_client(kube)).read_namespaced_config_map(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            raise FileFormatError(Problem("ConfigMap not found", source=ref)) from None
        raise ClusterError(f"{ref}: {describe_api_error(exc)}") from None
    data: dict[str, str] = cm.data or {}
    if key is None:
        if len(data) != 1:
            keys = ", ".join(sorted(data)) or "none"
            raise FileFormatError(
                Problem(
                    f"ConfigMap has {len(data)} keys ({keys}); name one as cm://ns/name/key",
                    source=ref,
                )
            )
        return next(iter(data.values()))
    if key not in data:
        raise FileFormatError(Problem(f"ConfigMap has no key '{key}'", source=ref))
    return data[key]
