"""Where input documents come from: a path, an http(s) URL, or ``cm://namespace/name[/key]``.

Every input goes through :func:`read` (or :func:`read_bytes`), which refuses
what is over its kind's size cap before parsing, and bounds a URL or ConfigMap
read by one total deadline (connect, redirects and body): a server that trickles
a byte a second cannot hold the run longer than that.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import BinaryIO, TypeVar

from aicr import limits
from aicr.errors import BoundExceededError, ClusterError, FileFormatError, Problem
from aicr.kube.target import KubeTarget
from aicr.limits import Kind

T = TypeVar("T")
DEADLINE = limits.BOUNDS["fetch-deadline"]


def parse_configmap_ref(ref: str) -> tuple[str, str, str | None]:
    """``cm://ns/name[/key]`` -> (namespace, name, key or None)."""
    parts = ref.removeprefix("cm://").split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise FileFormatError(
            Problem(f"invalid ConfigMap reference '{ref}' (expected cm://namespace/name[/key])")
        )
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def read(ref: str, kube: KubeTarget | None = None, *, kind: Kind) -> str:
    """Return the UTF-8 text behind ``ref``, within ``kind``'s bounds; failures name ``ref``."""
    data = read_bytes(ref, kube, kind=kind)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            Problem(
                f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                source=ref,
            )
        ) from None


def read_bytes(ref: str, kube: KubeTarget | None = None, *, kind: Kind) -> bytes:
    """Return the bytes behind ``ref``, refusing more than ``kind``'s size cap."""
    cap = limits.size_cap(kind)
    if ref.startswith("cm://"):
        return _within_deadline(ref, lambda end: _read_configmap(ref, kube, kind, cap, end))
    if ref.startswith(("http://", "https://")):
        return _within_deadline(ref, lambda end: _read_url(ref, kind, cap, end))
    return _read_file(ref, kind, cap)


def too_big(ref: str, kind: Kind, size: int | None, cap: int) -> BoundExceededError:
    """The refusal of an input over its size cap (``size`` None: it did not say, it streamed)."""
    shown = limits.show_size(size) if size is not None else "more than that"
    return BoundExceededError(
        Problem(
            f"{shown} is over the {kind} size cap of {limits.show_size(cap)}",
            source=ref,
            hint=limits.how_to_change(kind.value),
        )
    )


def _read_file(ref: str, kind: Kind, cap: int) -> bytes:
    try:
        with open(ref, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > cap:
                raise too_big(ref, kind, size, cap)
            # a pipe or device reports no size: read up to one byte past the cap to see it is over
            data = stream.read(size + 1) if size else _read_to(stream, cap + 1)
    except FileNotFoundError:
        raise FileFormatError(Problem("file not found", source=ref)) from None
    except IsADirectoryError:
        raise FileFormatError(Problem("is a directory, expected a file", source=ref)) from None
    except OSError as exc:
        raise FileFormatError(Problem(f"cannot read: {exc.strerror or exc}", source=ref)) from None
    if len(data) > cap:
        raise too_big(ref, kind, None, cap)
    return data


def _read_to(stream: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes, in blocks (one read(limit) would allocate all of it at once)."""
    out = bytearray()
    while len(out) < limit and (block := stream.read(min(1 << 20, limit - len(out)))):
        out += block
    return bytes(out)


def _within_deadline(ref: str, work: Callable[[float], T]) -> T:
    """Run ``work(end)`` and give up at the fetch deadline, however the peer behaves.

    The work runs on a daemon thread so a peer that stalls inside one read cannot
    hold the caller; ``end`` (a ``time.monotonic`` instant) lets the work stop
    by itself between reads, so an abandoned thread ends soon after.
    """
    seconds = limits.value(DEADLINE.name)
    end = time.monotonic() + seconds
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, work(end)))
        except BaseException as exc:  # re-raised on the caller's thread
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="aicr-fetch", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise _late(ref, seconds)
    ok, result = outcome[0]
    if not ok:
        assert isinstance(result, BaseException)
        raise result
    return result  # type: ignore[return-value]


def _late(ref: str, seconds: float) -> BoundExceededError:
    return BoundExceededError(
        Problem(
            f"not read within the fetch deadline of {DEADLINE.show(seconds)}",
            source=ref,
            hint=limits.how_to_change("fetch-deadline"),
        )
    )


def _read_url(ref: str, kind: Kind, cap: int, end: float) -> bytes:
    import httpx

    body = bytearray()
    try:
        with httpx.stream(
            "GET", ref, timeout=max(end - time.monotonic(), 0.001), follow_redirects=True
        ) as response:
            if response.status_code >= 400:
                raise FileFormatError(
                    Problem(f"cannot fetch: HTTP {response.status_code}", source=ref)
                )
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > cap:
                raise too_big(ref, kind, int(length), cap)
            for chunk in response.iter_bytes():  # decoded bytes: a gzip bomb counts in full
                body += chunk
                if len(body) > cap:
                    raise too_big(ref, kind, None, cap)
                if time.monotonic() > end:
                    raise _late(ref, limits.value(DEADLINE.name))
    except httpx.HTTPError as exc:
        raise FileFormatError(Problem(f"cannot fetch: {exc}", source=ref)) from None
    return bytes(body)


def _read_configmap(ref: str, kube: KubeTarget | None, kind: Kind, cap: int, end: float) -> bytes:
    namespace, name, key = parse_configmap_ref(ref)
    if kube is None:
        raise ClusterError(f"{ref}: reading a ConfigMap needs cluster access")
    import urllib3
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.kube.target import api_client, describe_api_error

    try:
        cm = client.CoreV1Api(api_client(kube)).read_namespaced_config_map(
            name, namespace, _request_timeout=max(end - time.monotonic(), 0.001)
        )
    except ApiException as exc:
        if exc.status == 404:
            raise FileFormatError(Problem("ConfigMap not found", source=ref)) from None
        raise ClusterError(f"{ref}: {describe_api_error(exc)}") from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # timeouts, refused connections
        raise ClusterError(f"{ref}: cannot read the ConfigMap: {exc}") from None
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
        key = next(iter(data))
    if key not in data:
        raise FileFormatError(Problem(f"ConfigMap has no key '{key}'", source=ref))
    encoded = data[key].encode("utf-8")
    if len(encoded) > cap:
        raise too_big(ref, kind, len(encoded), cap)
    return encoded
