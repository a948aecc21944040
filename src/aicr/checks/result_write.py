"""Deliver a check's result into its run's result ConfigMap, retrying within one budget.

Each attempt is a fresh connection with a short timeout, so one stalled TLS
handshake (a flapping API endpoint) costs one attempt, not the whole budget.
Every failed attempt is logged to stderr (the pod log). The write is a merge
patch of the object the orchestrator created, so repeating it is harmless; a
409 Conflict may still mean an earlier attempt of ours landed, so the object is
read back and the write counts as done when it holds our result.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from aicr import defaults as d
from aicr.errors import AicrError
from aicr.kube import rest as kubeapi
from aicr.kube.kinds import KINDS
from aicr.kube.rest import KubeApiError, Obj
from aicr.kube.target import KubeTarget
from aicr.result import RESULT_KEY, CheckResult


def _retryable(status: int) -> bool:
    """5xx, 429 and 409 may pass on the next try; 403/404 will not."""
    return status >= 500 or status in (409, 429)


def _connect(creds: kubeapi.Credentials, deadline: float) -> kubeapi.KubeApi:
    """A fresh client whose every timeout ends within this attempt's share of the budget."""
    return kubeapi.KubeApi(
        creds, timeout=min(d.RESULT_ATTEMPT_SECONDS, deadline - time.monotonic())
    )


def _attempt(creds: kubeapi.Credentials, path: str, payload: str, deadline: float) -> None:
    """One try: patch; on a 409 read back, done when the object already holds ``payload``."""
    with _connect(creds, deadline) as api:
        try:
            api.merge_patch(path, {"data": {RESULT_KEY: payload}})
            return
        except KubeApiError as exc:
            if exc.status != 409:
                raise
            conflict = exc
    if time.monotonic() >= deadline:
        raise conflict
    with _connect(creds, deadline) as api:
        found: Obj = api.get(path)
    if (found.get("data") or {}).get(RESULT_KEY) != payload:
        raise conflict


def write_result_configmap(
    result: CheckResult, namespace: str, name: str, log: TextIO | None = None
) -> str | None:
    """Write ``result`` as ``result.json`` of ConfigMap ``name``; None, or why it failed."""
    payload = result.model_dump_json()
    log = log or sys.stderr
    started = time.monotonic()
    deadline = started + d.RESULT_WRITE_SECONDS
    try:
        creds = kubeapi.credentials(KubeTarget())
    except AicrError as exc:
        return str(exc)
    path = KINDS["ConfigMap"].path(namespace, name)
    delay = d.API_BACKOFF_START
    attempt = 0
    while True:
        attempt += 1
        begun = time.monotonic()
        try:
            _attempt(creds, path, payload, deadline)
            return None
        except KubeApiError as exc:
            error, final = str(exc), not _retryable(exc.status)
        except AicrError as exc:
            error, final = str(exc), True
        except Exception as exc:  # transport: timeouts, refused, TLS; worth another try
            error, final = f"{type(exc).__name__}: {exc}", False
        now = time.monotonic()
        final = final or deadline - now < delay + d.RESULT_ATTEMPT_MIN_SECONDS
        then = "giving up" if final else f"retrying in {delay:.1f}s"
        print(
            f"result ConfigMap {name}: attempt {attempt} failed after {now - begun:.1f}s: "
            f"{error}; {then}",
            file=log,
            flush=True,
        )
        if final:
            return f"{error} ({attempt} attempt(s) in {now - started:.1f}s)"
        time.sleep(delay)
        delay = min(delay * 2, d.API_BACKOFF_MAX)
