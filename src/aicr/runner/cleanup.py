"""Delete everything runs created, by label and REST path, and wait until it is really gone.

Used at the end of every run (pass, fail, timeout, interrupt) and by
``aicr cleanup --run-id ID | --all``. A run namespace still holding objects of
another run that is not being cleaned up is handed over to that run (its
run-id label is rewritten) rather than deleted under it. DRA kinds are listed
and deleted at the newest ``resource.k8s.io`` version the cluster serves
(``aicr.kube.dra``): a 1.32-1.33 cluster serves only the betas, where the v1
paths answer 404 and would read as "none left".
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aicr import defaults as d
from aicr.errors import ClusterError
from aicr.kube import dra, names
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


def served_kinds(api: KubeApi, kinds: Sequence[Kind]) -> tuple[Kind, ...]:
    """``kinds`` with the DRA ones at the version the cluster serves; none when it serves none."""
    from aicr.kube.rest import KubeApiError

    if not any(dra.is_dra(k.api_version) for k in kinds):
        return tuple(kinds)
    try:
        group = api.get(f"/apis/{dra.GROUP}")
    except KubeApiError as exc:
        if exc.status != 404:
            raise
        group = {}
    version = dra.pick([str(v.get("version")) for v in group.get("versions") or []])
    out: list[Kind] = []
    for k in kinds:
        if not dra.is_dra(k.api_version):
            out.append(k)
        elif version:  # not served: no object of the kind can exist
            out.append(dataclasses.replace(k, api_version=version))
    return tuple(out)


def _kinds(api: KubeApi) -> tuple[Kind, ...]:
    return served_kinds(api, run_kinds.cleanup_order())


def remaining(api: KubeApi, selector: str, kinds: Sequence[Kind] | None = None) -> list[str]:
    """``Kind ns/name`` of every object still carrying ``selector``'s labels."""
    out: list[str] = []
    for kind in _kinds(api) if kinds is None else kinds:
        out += [run_kinds.describe(kind, o) for o in _list(api, kind, selector)]
    return out


def delete_by_label(api: KubeApi, run_id: str | None) -> None:
    """Ask for the deletion of every object of one run (or of all runs), by REST path."""
    selector = names.run_selector(run_id)
    for kind in _kinds(api):
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
    kinds = _kinds(api)
    while True:
        left = remaining(api, selector, kinds)
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
