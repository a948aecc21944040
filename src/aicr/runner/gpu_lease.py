"""GPU reservations across runs: one Lease whose annotation lists every holder and its GPUs.

Within one run the orchestrator starts a GPU check only when its reservation fits
(aicr.runner.gpu_pool). Two runs against one cluster (a nightly pipeline and an
engineer, say) must see each other's reservations too, or each check's GPU pods
would find the GPUs taken and fail for a reason that has nothing to do with the
cluster. So every reservation is written into the Lease ``aicr-exclusive-gpus``
in the run namespace, under the annotation ``aicr.dev/gpu-reservations``:
``{"<run>/<check>": {"need": ..., "gpus": {node: n}, "all": bool, "renewed": ...}}``.
Writes are compare-and-swap on the Lease's resourceVersion, so two runs never
both take the last GPUs. Each run renews its own entries every 10 s; an entry
that has not changed for the lease duration (a crashed run) is dropped, timed on
this machine's clock as client-go's leader election does, so clock skew between
the runs' machines does not matter. The last holder to leave deletes the Lease.

A Lease without the annotation was written by an aicr that took the GPUs whole:
its holder counts as holding every free GPU until it stops renewing.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aicr import defaults as d
from aicr.runner.gpu_fit import Holding
from aicr.runner.manifests import GPU_LEASE_NAME as LEASE_NAME
from aicr.runner.manifests import RESERVATIONS_ANNOTATION, gpu_lease

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]
Decide = Callable[[dict[str, Holding]], Holding | None]
WRITE_ATTEMPTS = 10  # compare-and-swap rounds before giving up until the next look


def _now() -> str:
    """A MicroTime, as Lease fields expect."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def holding_of(entry: Obj) -> Holding:
    """An annotation entry as a Holding; anything unreadable holds every free GPU."""
    gpus = entry.get("gpus")
    if not isinstance(gpus, dict) or not all(isinstance(v, int) for v in gpus.values()):
        return Holding(all=True)
    return Holding({str(k): v for k, v in gpus.items()}, all=entry.get("all") is not False)


class LeaseLedger:
    """This run's view of the shared Lease: reserve, renew, release."""

    def __init__(self, api: ApiClient, namespace: str, run_id: str) -> None:
        from kubernetes import client

        self.coord: Any = client.CoordinationV1Api(api)
        self.namespace, self.run_id = namespace, run_id
        self._mine: dict[str, Obj] = {}  # holder -> its entry, as this run last wrote it
        self._seen: dict[str, tuple[str, float]] = {}  # holder -> (entry, first seen so)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._renewer: threading.Thread | None = None

    # ---- reading and writing the Lease -------------------------------------------------
    def _read(self) -> Obj | None:
        from kubernetes.client.exceptions import ApiException

        try:
            resp = self.coord.read_namespaced_lease(
                LEASE_NAME, self.namespace, _preload_content=False
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        lease: Obj = json.loads(resp.data)
        return lease

    def _entries(self, lease: Obj | None) -> dict[str, Obj]:
        """The live entries: this run's as it holds them, others' unless they went stale."""
        entries: dict[str, Obj] = {}
        duration = float(d.GPU_LEASE_SECONDS)
        if lease is not None:
            meta, spec = lease.get("metadata") or {}, lease.get("spec") or {}
            raw = (meta.get("annotations") or {}).get(RESERVATIONS_ANNOTATION)
            version = str(meta.get("resourceVersion"))
            if raw is None:  # an aicr that took the GPUs whole
                holder = str(spec.get("holderIdentity") or "")
                entries = {holder: {"all": True, "renewed": version}} if holder else {}
            else:
                try:
                    parsed = json.loads(raw)
                    entries = {str(h): e for h, e in parsed.items() if isinstance(e, dict)}
                except (ValueError, AttributeError):  # fail closed until it goes stale
                    entries = {"unreadable": {"all": True, "renewed": version}}
            duration = float(spec.get("leaseDurationSeconds") or duration)
        with self._lock:
            live = self._fresh(entries, duration)
            return {**live, **{h: dict(e) for h, e in self._mine.items()}}

    def _fresh(self, entries: dict[str, Obj], duration: float) -> dict[str, Obj]:
        """Others' entries that changed within ``duration`` on this machine's clock."""
        now, live = time.monotonic(), {}
        for holder, entry in entries.items():
            if holder.partition("/")[0] == self.run_id:
                continue  # ours: only what this run holds now counts (see _entries)
            value = json.dumps(entry, sort_keys=True)
            seen = self._seen.get(holder)
            if seen is None or seen[0] != value:
                self._seen[holder] = seen = (value, now)
            if now - seen[1] < duration:
                live[holder] = entry
        return live

    def _write(self, lease: Obj | None, entries: dict[str, Obj]) -> None:
        """Store ``entries`` (compare-and-swap on ``lease``); no entries: delete the Lease."""
        version = (lease or {}).get("metadata", {}).get("resourceVersion")
        if not entries:
            if lease is not None:
                self.coord.delete_namespaced_lease(
                    LEASE_NAME,
                    self.namespace,
                    body={"preconditions": {"resourceVersion": version}},
                )
            return
        body = gpu_lease(self.namespace, entries)
        body["spec"]["renewTime"] = _now()
        if lease is None:
            self.coord.create_namespaced_lease(self.namespace, body)
            return
        body["metadata"]["resourceVersion"] = version
        self.coord.replace_namespaced_lease(LEASE_NAME, self.namespace, body)

    def _swap(self, change: Callable[[dict[str, Obj]], dict[str, Obj] | None]) -> bool:
        """Read, ``change`` the live entries (None: leave them), write; retry on conflicts."""
        from kubernetes.client.exceptions import ApiException

        for _ in range(WRITE_ATTEMPTS):
            lease = self._read()
            changed = change(self._entries(lease))
            if changed is None:
                return False
            try:
                self._write(lease, changed)
                return True
            except ApiException as exc:
                if exc.status not in (404, 409):  # 404/409: another run wrote first
                    raise
        return False

    # ---- reserve, renew, release ---------------------------------------------------------
    def reserve(
        self, holder: str, need: str, decide: Decide
    ) -> tuple[Holding | None, dict[str, Holding]]:
        """Ask ``decide`` with the others' holdings; store what it grants under ``holder``."""
        got: list[tuple[Holding | None, dict[str, Holding]]] = []

        def change(entries: dict[str, Obj]) -> dict[str, Obj] | None:
            others = {h: holding_of(e) for h, e in entries.items() if h != holder}
            holding = decide(others)
            got[:] = [(holding, others)]
            if holding is None:
                return None
            entry = {"need": need, "gpus": holding.gpus, "all": holding.all, "renewed": _now()}
            return {**entries, holder: entry}

        if not self._swap(change):
            return None, got[-1][1] if got else {}
        with self._lock:
            holding = got[-1][0]
            assert holding is not None
            self._mine[holder] = {
                "need": need,
                "gpus": holding.gpus,
                "all": holding.all,
                "renewed": _now(),
            }
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew, daemon=True, name="gpu-lease")
                self._renewer.start()
        return got[-1]

    def _renew(self) -> None:
        """Keep this run's entries fresh until the run ends."""
        while not self._done.wait(d.GPU_LEASE_RENEW_SECONDS):
            with self._lock:
                if not self._mine:
                    continue
                for entry in self._mine.values():
                    entry["renewed"] = _now()
            try:
                self._swap(lambda entries: entries)
            except Exception:  # a missed renewal is retried on the next tick
                continue

    def release(self, holder: str) -> None:
        """Drop ``holder``'s entry (the Lease goes with the last one)."""
        with self._lock:
            self._mine.pop(holder, None)
        with contextlib.suppress(Exception):  # a left entry goes stale for the others
            self._swap(lambda entries: entries)

    def close(self) -> None:
        """Stop renewing and drop every entry of this run."""
        self._done.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        with self._lock:
            held = bool(self._mine)
            self._mine.clear()
        if held:
            with contextlib.suppress(Exception):
                self._swap(lambda entries: entries)
