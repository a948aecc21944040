"""Delete everything runs created, by label and REST path, and wait until it is really gone.

Used at the end of every run (pass, fail, timeout, interrupt) and by
``aicr cleanup --run-id ID | --all``. A run namespace still holding objects of
another run that is not being cleaned up is handed over to that run (its
run-id label is rewritten) rather than deleted under it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from aicr import defaults as d
from aicr.errors import ClusterError
from aicr.kube import names
from aicr.kube.kinds import KINDS, Kind
from aicr.kube.target import KubeTarget
from aicr.runner import run_kinds
from aicr.runner.context import RunContext
from aicr.runner.events import Event, EventKind

if TYPE_CHECKING:
    from aicr.kube.rest import KubeApi

WAIT_POLL_SECONDS = 0.25  # re-list while deletions finish; cheap label-selected lists
Obj = dict[str, Any]


def _list(api: KubeApi, kind: Kind, selector: str, namespace: str | None = None) -> list[Obj]:
    """Objects of ``kind`` carrying ``selector`` (everywhere); none when the API is not served."""
    from aicr.kube.rest import KubeApiError

    try:
        data = api.get(kind.path(namespace), {"labelSelector": selector})
    except KubeApiError as exc:
        if exc.status == 404:  # a CRD that is not installed: nothing of that kind exists
            return []
        raise
    items: list[Obj] = data.get("items") or []
    return items


def _other_runs_in(api: KubeApi, namespace: str, run_id: str) -> set[str]:
    """Run ids (other than ``run_id``) of aicr objects inside ``namespace``."""
    items = _list(api, KINDS["ConfigMap"], names.run_selector(None), namespace)
    found = {(cm["metadata"].get("labels") or {}).get(names.RUN_ID_LABEL) for cm in items}
    return {r for r in found if r and r != run_id}


def _hand_over(api: KubeApi, namespace: str, run_id: str) -> bool:
    """Give a shared run namespace to a run still using it; True when handed over."""
    others = sorted(_other_runs_in(api, namespace, run_id))
    if not others:
        return False
    patch = {"metadata": {"labels": {names.RUN_ID_LABEL: others[0]}}}
    api.merge_patch(KINDS["Namespace"].path(None, namespace), patch)
    return True


def remaining(api: KubeApi, selector: str) -> list[str]:
    """``Kind ns/name`` of every object still carrying ``selector``'s labels."""
    out: list[str] = []
    for kind in run_kinds.cleanup_order():
        out += [run_kinds.describe(kind, o) for o in _list(api, kind, selector)]
    return out


def delete_by_label(api: KubeApi, run_id: str | None) -> None:
    """Ask for the deletion of every object of one run (or of all runs), by REST path."""
    selector = names.run_selector(run_id)
    for kind in run_kinds.cleanup_order():
        for obj in _list(api, kind, selector):
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            if kind.name == "Namespace" and run_id and _hand_over(api, meta["name"], run_id):
                continue
            api.delete(kind.path(meta.get("namespace"), meta["name"]))


def wait_gone(api: KubeApi, run_id: str | None, timeout: float) -> list[str]:
    """Wait until nothing carries the run's labels; return what is left at the deadline."""
    selector = names.run_selector(run_id)
    deadline = time.monotonic() + timeout
    while True:
        left = remaining(api, selector)
        if run_id:
            left = [
                x for x in left if not x.startswith("Namespace ") or _still_ours(api, x, run_id)
            ]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(WAIT_POLL_SECONDS)


def _still_ours(api: KubeApi, described: str, run_id: str) -> bool:
    from aicr.kube.rest import KubeApiError

    name = described.split(" ", 1)[1]
    try:
        ns = api.get(KINDS["Namespace"].path(None, name))
    except KubeApiError as exc:
        return exc.status != 404
    labels = ns["metadata"].get("labels") or {}
    return bool(labels.get(names.RUN_ID_LABEL) == run_id)


def cleanup_with(api: KubeApi, run_id: str | None, timeout: float) -> list[str]:
    """Delete and wait, with an open REST client; returns the leftovers."""
    from aicr.kube.rest import KubeApiError

    try:
        delete_by_label(api, run_id)
        return wait_gone(api, run_id, timeout)
    except KubeApiError as exc:
        raise ClusterError(f"cleanup failed: {exc}") from None


def _rest(kube: KubeTarget) -> KubeApi:
    from aicr.kube.rest import KubeApi, credentials

    return KubeApi(credentials(kube))


def cleanup(
    kube: KubeTarget,
    run_id: str | None,
    all_runs: bool,
    timeout: float = d.CLEANUP_TIMEOUT_SECONDS,
) -> list[str]:
    """Remove one run's objects (or every run's with ``all_runs``); return what remains."""
    if not all_runs and not run_id:
        raise ValueError("give a run id or all_runs")
    try:
        with _rest(kube) as api:
            return cleanup_with(api, None if all_runs else run_id, timeout)
    except Exception as exc:
        if isinstance(exc, ClusterError):
            raise
        raise ClusterError(f"cleanup failed: cannot reach the cluster: {exc}") from None


def finish_run(ctx: RunContext, timeout: float) -> list[str]:
    """An executor's last step: remove the run's objects, or say how to once --no-cleanup.

    Returns what could not be removed, each with the command that retries it; a run
    never ends with an exception here, because the report must still be written.
    """
    retry = f"`aicr cleanup --run-id {ctx.run_id}`"
    if ctx.no_cleanup:
        ctx.events(
            Event(
                EventKind.MESSAGE,
                message=f"--no-cleanup: kept every object of run {ctx.run_id} "
                f"(label {names.RUN_ID_LABEL}={ctx.run_id}); remove them with {retry}",
            )
        )
        return []
    try:
        with _rest(ctx.kube) as api:
            return cleanup_with(api, ctx.run_id, timeout)
    except ClusterError as exc:
        return [f"{exc}; retry with {retry}"]
    except Exception as exc:  # never lose the report to a cleanup bug
        return [f"cleanup failed ({exc}); retry with {retry}"]
