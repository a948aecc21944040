"""Exclusive GPUs across runs: a Lease that every aicr run in the namespace honours.

Within one run the orchestrator never overlaps checks that take whole GPUs. Two
runs against one cluster (a nightly pipeline and an engineer, say) would still
collide: each check's GPU pods would find the GPUs taken and fail for a reason
that has nothing to do with the cluster. So before such a check starts, its run
takes the Lease ``aicr-exclusive-gpus`` in the run namespace, renews it while the
check runs and deletes it afterwards. A holder that stops renewing (a run that
crashed) loses the Lease once its record has not changed for the lease duration,
timed on this machine's clock as client-go's leader election does, so clock skew
between the two runs' machines does not matter.

Runs in different namespaces do not see each other's Lease. A user who may not
manage Leases is told so, and the check runs without the cross-run guarantee.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aicr.k8s import describe_api_error
from aicr.runner import defaults as d
from aicr.runner.manifests import GPU_LEASE_NAME as LEASE_NAME
from aicr.runner.manifests import gpu_lease

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]


def _now() -> str:
    """A MicroTime, as Lease fields expect."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class GpuLease:
    """The Lease for one check of one run: ``acquire``, then ``release`` when it ended."""

    def __init__(self, api: ApiClient, namespace: str, run_id: str, check: str) -> None:
        from kubernetes import client

        self.coord: Any = client.CoordinationV1Api(api)
        self.namespace, self.run_id, self.check = namespace, run_id, check
        self.holder = gpu_lease(namespace, run_id, check)["spec"]["holderIdentity"]
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

    def _ours(self, lease: Obj | None = None) -> Obj:
        """``lease`` (or a new one) held by this check from now on."""
        mine = gpu_lease(self.namespace, self.run_id, self.check)
        body: Obj = lease or mine
        body["metadata"]["labels"] = mine["metadata"]["labels"]  # our run's cleanup owns it
        spec = body.setdefault("spec", {})
        if lease is not None:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        now = _now()
        spec.update(
            holderIdentity=self.holder,
            leaseDurationSeconds=mine["spec"]["leaseDurationSeconds"],
            acquireTime=now,
            renewTime=now,
        )
        return body

    # ---- acquire, renew, release ---------------------------------------------------------
    def acquire(self, stopped: Callable[[], bool], tell: Callable[[str], None]) -> str | None:
        """Wait until this check holds the Lease: None, or why it never will (stopped, API)."""
        seen: tuple[str, float] | None = None  # the holder's record and when we first saw it
        unreachable_since: float | None = None
        while not stopped():
            try:
                lease = self._read()
                unreachable_since = None
                if lease is None:
                    self.coord.create_namespaced_lease(self.namespace, self._ours())
                    break
                spec = lease.get("spec") or {}
                version = str(lease["metadata"].get("resourceVersion"))
                if seen is None or seen[0] != version:
                    seen = (version, time.monotonic())
                duration = float(spec.get("leaseDurationSeconds") or d.GPU_LEASE_SECONDS)
                holder = str(spec.get("holderIdentity") or "")
                # an earlier check of this run that could not delete it: the run's own
                # lock already keeps its GPU checks apart
                ours = holder.partition("/")[0] == self.run_id
                if not holder or ours or time.monotonic() - seen[1] >= duration:
                    # free, ours, or its holder stopped renewing: take it (409 if one was faster)
                    self.coord.replace_namespaced_lease(LEASE_NAME, self.namespace,
                                                        self._ours(lease))  # fmt: skip
                    break
                run, _, check = holder.partition("/")
                tell(f"waiting for exclusive GPUs: run {run} holds them (check {check or '?'})")
            except Exception as exc:
                status = getattr(exc, "status", None)
                if status == 409:
                    continue  # another run moved first: look again
                if status == 403:
                    tell(f"cannot coordinate exclusive GPUs with other aicr runs "
                         f"({describe_api_error(exc)} on Leases); running without")  # fmt: skip
                    return None
                # any other answer, or none (API server unreachable): retry for a while
                unreachable_since = unreachable_since or time.monotonic()
                if time.monotonic() - unreachable_since >= d.API_UNREACHABLE_SECONDS:
                    return f"cannot take the exclusive-GPU Lease: {describe_api_error(exc)}"
            time.sleep(d.GPU_LEASE_POLL_SECONDS)
        else:
            return "stopped while waiting for exclusive GPUs held by another aicr run"
        self._renewer = threading.Thread(target=self._renew, daemon=True, name="gpu-lease")
        self._renewer.start()
        return None

    def _renew(self) -> None:
        """Keep the Lease fresh until released; stop if another run took it."""
        while not self._done.wait(d.GPU_LEASE_RENEW_SECONDS):
            try:
                lease = self._read()
                if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.holder:
                    return
                lease["spec"]["renewTime"] = _now()
                self.coord.replace_namespaced_lease(LEASE_NAME, self.namespace, lease)
            except Exception:  # a missed renewal is retried on the next tick
                continue

    def release(self) -> None:
        """Stop renewing and delete the Lease if still ours (the run's cleanup is the backstop)."""
        self._done.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        with contextlib.suppress(Exception):
            lease = self._read()
            if lease and (lease.get("spec") or {}).get("holderIdentity") == self.holder:
                version = lease["metadata"]["resourceVersion"]
                self.coord.delete_namespaced_lease(
                    LEASE_NAME, self.namespace,
                    body={"preconditions": {"resourceVersion": version}},
                )  # fmt: skip


@contextlib.contextmanager
def exclusive_gpus(
    api: ApiClient,
    namespace: str,
    run_id: str,
    check: str,
    stopped: Callable[[], bool],
    tell: Callable[[str], None],
) -> Iterator[str | None]:
    """Hold the Lease around the body; yields None, or why the check must not start."""
    lease = GpuLease(api, namespace, run_id, check)
    refused = lease.acquire(stopped, _once(tell))
    try:
        yield refused
    finally:
        if refused is None:
            lease.release()


def _once(tell: Callable[[str], None]) -> Callable[[str], None]:
    """``tell`` that says each distinct message once."""
    said: set[str] = set()

    def say(message: str) -> None:
        if message not in said:
            said.add(message)
            tell(message)

    return say
