"""How long pods spent pulling images, read from the kubelet's events.

A check's logic budget (a reconcile, a start) never pays for image pulls: the
kubelet reports each pull as a ``Pulling`` event and, when done, a ``Pulled``
event whose message carries the time it took (``Successfully pulled image "x"
in 1m2.5s (1m2.5s including waiting). Image size: ...``). Pulls in progress
count from their ``Pulling`` event until now. A pod's containers are pulled one
after another (the kubelet's default serial pulls), so a pod's pull time is
their sum, and pods pulling side by side overlap: the slowest pod is the wait.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]
_IN = re.compile(r" in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)")
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> float | None:
    """Seconds in a Go duration (``1m2.5s``, ``850ms``); None when it is not one."""
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def _when(event: Obj) -> datetime | None:
    raw = event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")
    if not raw:
        return None
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Pulls:
    """The image pulls of a set of pods: the slowest pod's total, and what is still pulling."""

    seconds: float
    pulling: tuple[str, ...]  # "pod: image" still in progress

    def __str__(self) -> str:
        tail = f"; still pulling {', '.join(self.pulling)}" if self.pulling else ""
        return f"image pulls took {self.seconds:.0f}s{tail}"


def observed(events: Iterable[Obj], pods: Iterable[str], now: datetime | None = None) -> Pulls:
    """The pull time of ``pods`` from their events, as of ``now`` (default: the clock)."""
    now = now or datetime.now(UTC)
    wanted = set(pods)
    done: dict[str, float] = {}
    started: dict[tuple[str, str], datetime] = {}
    finished: set[tuple[str, str]] = set()
    for e in events:
        obj = e.get("involvedObject") or {}
        pod = str(obj.get("name") or "")
        if obj.get("kind", "Pod") != "Pod" or pod not in wanted:
            continue
        message = str(e.get("message") or "")
        image = message.split('"')[1] if message.count('"') >= 2 else message
        if e.get("reason") == "Pulled":
            finished.add((pod, image))
            took = _IN.search(message)
            seconds = go_duration(took.group(1)) if took else None
            if seconds is not None:
                done[pod] = done.get(pod, 0.0) + seconds
        elif e.get("reason") == "Pulling" and (at := _when(e)) is not None:
            started[(pod, image)] = at
    per_pod = dict(done)
    pulling = []
    for (pod, image), at in sorted(started.items()):
        if (pod, image) not in finished:
            per_pod[pod] = per_pod.get(pod, 0.0) + max(0.0, (now - at).total_seconds())
            pulling.append(f"{pod}: {image}")
    return Pulls(max(per_pod.values(), default=0.0), tuple(pulling))
