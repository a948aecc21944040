"""Image pull time from the kubelet's events: what a logic budget does not pay for."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from aicr.kube import image_pulls

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def event(pod: str, reason: str, message: str, at: str = "2026-01-01T11:58:00Z") -> dict[str, Any]:
    return {"involvedObject": {"kind": "Pod", "name": pod}, "reason": reason,
            "message": message, "lastTimestamp": at}  # fmt: skip


def pulled(pod: str, image: str, took: str) -> dict[str, Any]:
    return event(pod, "Pulled", f'Successfully pulled image "{image}" in {took} ({took} '
                 "including waiting). Image size: 4052312345 bytes.")  # fmt: skip


@pytest.mark.parametrize(("text", "seconds"), [
    ("1m2.5s", 62.5), ("850ms", 0.85), ("1h2m", 3720.0), ("12s", 12.0), ("soon", None), ("", None),
])  # fmt: skip
def test_go_duration(text: str, seconds: float | None) -> None:
    assert image_pulls.go_duration(text) == seconds


def test_a_pods_pulls_add_up_and_the_slowest_pod_is_the_wait() -> None:
    events = [
        event("head", "Pulling", 'Pulling image "rayproject/ray:2.46.0"'),
        pulled("head", "rayproject/ray:2.46.0", "3m10s"),
        pulled("head", "busybox:1.37", "2s"),
        pulled("worker", "rayproject/ray:2.46.0", "2m"),
        pulled("someone-else", "huge:1", "1h"),  # not one of ours
    ]
    pulls = image_pulls.observed(events, ["head", "worker"], now=NOW)
    assert (pulls.seconds, pulls.pulling) == (192.0, ())
    assert str(pulls) == "image pulls took 192s"


def test_a_pull_in_progress_counts_until_now() -> None:
    events = [event("head", "Pulling", 'Pulling image "nvcr.io/x/dynamo:1"'),
              pulled("worker", "busybox:1.37", "5s")]  # fmt: skip
    pulls = image_pulls.observed(events, ["head", "worker"], now=NOW)
    assert (pulls.seconds, pulls.pulling) == (120.0, ("head: nvcr.io/x/dynamo:1",))
    assert str(pulls) == "image pulls took 120s; still pulling head: nvcr.io/x/dynamo:1"


def test_no_events_no_pull_time() -> None:
    assert image_pulls.observed([], ["head"], now=NOW) == image_pulls.Pulls(0.0, ())
