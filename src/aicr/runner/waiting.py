"""Watch streams that feed a queue, survive API blips and stop at once when asked.

Each ``Watch`` lists first (so nothing created before the stream opened is
missed), then watches from the list's resourceVersion. Connection failures are
retried with backoff and reported, so the waiter can tell "API unreachable for
a while" from "nothing happened". ``close()`` shuts the open response down
from another thread, which unblocks the read at once.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aicr import defaults as d

Obj = dict[str, Any]


@dataclass(frozen=True)
class WatchEvent:
    """One event of a stream: ``source`` names the watch, ``type`` is ADDED/MODIFIED/DELETED.

    ``type`` is ``UNREACHABLE`` (obj empty, ``error`` set) when the API could not
    be reached, and ``REACHABLE`` when it answers again.
    """

    source: str
    type: str
    obj: Obj = field(default_factory=dict)
    error: str = ""


class Watch(threading.Thread):
    """Lists then watches one collection, putting events on ``out`` until closed."""

    def __init__(
        self,
        source: str,
        list_fn: Callable[..., Any],
        out: queue.Queue[WatchEvent],
        **kwargs: Any,
    ) -> None:
        super().__init__(daemon=True, name=f"watch-{source}")
        self.source, self.list_fn, self.out, self.kwargs = source, list_fn, out, kwargs
        self._closed = threading.Event()
        self._response: Any = None
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the stream now; safe from any thread, idempotent."""
        self._closed.set()
        with self._lock:
            response = self._response
        if response is not None:
            with contextlib.suppress(Exception):  # already closed or never connected
                response.shutdown()

    def _emit(self, type_: str, obj: Obj | None = None, error: str = "") -> None:
        if not self._closed.is_set():
            self.out.put(WatchEvent(self.source, type_, obj or {}, error))

    def run(self) -> None:
        """List, watch, reconnect; until closed."""
        delay = d.API_BACKOFF_START
        version: str | None = None
        unreachable = False
        while not self._closed.is_set():
            try:
                if version is None:
                    version = self._list()
                version = self._watch(version)
                if unreachable:
                    unreachable = False
                    self._emit("REACHABLE")
                delay = d.API_BACKOFF_START
            except _Gone:
                version = None
            except Exception as exc:
                if self._closed.is_set():
                    return
                status = getattr(exc, "status", None)
                if status is not None and 400 <= status < 500 and status != 429:
                    # forbidden or bad request will not heal: say so and stop
                    self._emit("ERROR", error=f"HTTP {status} {getattr(exc, 'reason', '')}")
                    return
                unreachable = True
                self._emit("UNREACHABLE", error=f"{type(exc).__name__}: {exc}")
                self._closed.wait(delay)
                delay = min(delay * 2, d.API_BACKOFF_MAX)

    def _list(self) -> str:
        response = self.list_fn(_preload_content=False, **self.kwargs)
        data = json.loads(response.data)
        for item in data.get("items") or []:
            self._emit("ADDED", item)
        self._emit("SYNCED")
        return str(data["metadata"]["resourceVersion"])

    def _watch(self, version: str) -> str:
        response = self.list_fn(
            watch=True,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=d.WATCH_SECONDS,
            _preload_content=False,
            **self.kwargs,
        )
        with self._lock:
            self._response = response
        if self._closed.is_set():
            response.shutdown()
        try:
            for line in _stream_lines(response):
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        raise _Gone
                    raise RuntimeError(obj.get("message") or "watch error")
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if event.get("type") != "BOOKMARK":
                    self._emit(event["type"], obj)
        finally:
            with self._lock:
                self._response = None
            response.release_conn()
        return version


class _Gone(Exception):
    """The resourceVersion is too old (HTTP 410): list again."""


def _stream_lines(response: Any) -> Any:
    """Split a chunked watch response into lines (urllib3 has no line iterator)."""
    pending = b""
    for chunk in response.stream(amt=None, decode_content=True):
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if line.strip():
                yield line
    if pending.strip():
        yield pending


def drain(out: queue.Queue[WatchEvent], timeout: float) -> list[WatchEvent]:
    """Every event available within ``timeout`` (at least the first one waited for)."""
    try:
        first = out.get(timeout=timeout)
    except queue.Empty:
        return []
    events = [first]
    while True:
        try:
            events.append(out.get_nowait())
        except queue.Empty:
            return events


def monotonic() -> float:
    """The clock every waiter uses (one place to fake in tests)."""
    return time.monotonic()
