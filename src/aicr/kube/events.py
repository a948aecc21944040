"""What components said about a pod, read from the Events of its namespace.

The kubelet records why it could not start a pod's containers as Warning events
whose ``involvedObject`` is the pod (``FailedCreatePodSandBox``, and
``FailedPrepareDynamicResources`` when a DRA driver could not prepare a claim);
checks quote them so that a failure says what the node said, not only where the
pod got to.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def latest(events: list[Obj], pod: str, reason: str) -> str | None:
    """The newest ``reason`` event about pod ``pod``, as ``reason: message`` (None: none)."""
    found = [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("name") == pod and e.get("reason") == reason
    ]
    if not found:
        return None
    last = max(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return f"{reason}: {last.get('message', '')}"
