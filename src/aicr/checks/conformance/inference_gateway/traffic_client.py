"""The traffic client inference-gateway runs in a pod: it sends the plan's requests and counts.

A program, not a library: the check runs this file's text with ``python3 -c``
in the pinned Python image, so it uses the standard library only. The plan
comes in ``PLAN`` (JSON, nothing secret), the API key's header value in
``KEY`` (from a Secret) and a wrong one in ``BOGUS``. It first waits (up to
``warmupSeconds``) until each warm-up probe has been answered 200 by every
backend it must reach (``warmup``: probe -> backends), then
sends every probe's requests one connection each and prints one line,
``AICR-RESULT {json}``: per probe, the count of each status and, for 200s, of
each backend that answered.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.parse
from collections import Counter
from typing import Any

RESULT = "AICR-RESULT "


def headers_of(probe: dict[str, Any], plan: dict[str, Any]) -> dict[str, str]:
    """The probe's headers, with the valid or the bogus key where it asks for one."""
    out = dict(probe.get("headers") or {})
    if plan.get("host"):
        out["Host"] = plan["host"]
    key = probe.get("key")
    if key and plan.get("keyHeader"):
        out[plan["keyHeader"]] = os.environ["KEY" if key == "valid" else "BOGUS"]
    return out


def send(plan: dict[str, Any], probe: dict[str, Any]) -> tuple[int, str | None]:
    """One request: (status, backend that answered); status 0 when it got no answer."""
    url = urllib.parse.urlsplit(plan["url"])
    conn = http.client.HTTPConnection(
        url.hostname or "", url.port or 80, timeout=plan["timeoutSeconds"]
    )
    body = probe.get("body")
    try:
        payload = body.encode() if body else None
        conn.request(
            probe.get("method", "GET"), probe["path"], body=payload, headers=headers_of(probe, plan)
        )
        response = conn.getresponse()
        data = response.read(4096)
    except OSError:
        return 0, None
    finally:
        conn.close()
    try:
        backend = json.loads(data).get("backend") if response.status == 200 else None
    except (ValueError, AttributeError):
        backend = None
    return response.status, backend if isinstance(backend, str) else None


def warm_up(plan: dict[str, Any]) -> dict[str, Any]:
    """Send the warm-up probes until each was answered 200 by every backend it must reach.

    That is when the data plane has loaded every backend's endpoints; it gives
    up when the warm-up time is spent.
    """
    probes = {p["name"]: p for p in plan["probes"]}
    missing = {name: set(backends) for name, backends in plan["warmup"].items()}
    end, tries, status = time.monotonic() + plan["warmupSeconds"], 0, 0
    while True:
        progress = False
        for name, left in missing.items():
            if left:
                tries += 1
                status, backend = send(plan, probes[name])
                if status == 200 and backend in left:
                    left.discard(backend)
                    progress = True
        waiting = {name: sorted(left) for name, left in missing.items() if left}
        if not waiting or time.monotonic() >= end:
            return {"ready": not waiting, "tries": tries, "lastStatus": status, "waiting": waiting}
        if not progress:
            time.sleep(0.5)


def run(plan: dict[str, Any]) -> dict[str, Any]:
    """The warm-up, then every probe's counts."""
    out: dict[str, Any] = {"warmup": warm_up(plan), "probes": {}}
    for probe in plan["probes"]:
        statuses: Counter[str] = Counter()
        backends: Counter[str] = Counter()
        for _ in range(int(probe["count"])):
            status, backend = send(plan, probe)
            statuses[str(status)] += 1
            if status == 200:
                backends[backend or "(unknown)"] += 1
        out["probes"][probe["name"]] = {"statuses": dict(statuses), "backends": dict(backends)}
    return out


if __name__ == "__main__":
    print(RESULT + json.dumps(run(json.loads(os.environ["PLAN"])), sort_keys=True), flush=True)
