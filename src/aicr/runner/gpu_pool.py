"""The run's GPU reservations: may this check start now, and what does it hold then.

The orchestrator asks ``try_reserve`` before it starts a check whose catalog entry
declares ``gpus``, and calls ``release`` when the check ended. A reservation fits
against what the cluster has free (``gpu_fit.inventory``) minus what every aicr
check holds, this run's and other runs' (the ledger: the shared Lease, or memory).

Without a cluster to read (unit tests, a user who may not list pods or nodes)
every GPU check is taken to need every free GPU, so GPU checks run one at a time:
the old exclusive behaviour, never an overcommit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aicr import defaults as d
from aicr.kube import dra
from aicr.kube.names import holder_id
from aicr.kube.placement import Placement
from aicr.kube.target import describe_api_error
from aicr.plan import PlannedCheck
from aicr.runner.context import RunContext
from aicr.runner.events import Event, EventKind
from aicr.runner.gpu_fit import EVERY_FREE_GPU, Holding, Inventory, fit, free_text, inventory

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]
# One look at the cluster: the inventory as it is without the given holders' workloads.
InventoryView = Callable[[Collection[str]], Inventory]
InventoryReader = Callable[[], InventoryView]
Decide = Callable[[dict[str, Holding]], Holding | None]


class InventoryUnavailable(Exception):
    """The cluster's free GPUs cannot be read (the message says why)."""


class Ledger(Protocol):
    """Where holdings are kept; ``decide`` sees everyone else's and grants or not."""

    def reserve(
        self, holder: str, need: str, decide: Decide
    ) -> tuple[Holding | None, dict[str, Holding]]:
        """The holding granted (or None) and the others' holdings it was decided against."""

    def release(self, holder: str) -> None:
        """``holder`` ended."""

    def close(self) -> None:
        """The run ended: drop every holding of this run."""


class MemoryLedger:
    """Holdings of this run only (no cluster, or no right to use the shared Lease)."""

    def __init__(self) -> None:
        self._held: dict[str, Holding] = {}
        self._lock = threading.Lock()

    def reserve(
        self, holder: str, need: str, decide: Decide
    ) -> tuple[Holding | None, dict[str, Holding]]:
        """See ``Ledger.reserve``."""
        with self._lock:
            others = {h: v for h, v in self._held.items() if h != holder}
            got = decide(others)
            if got is not None:
                self._held[holder] = got
            return got, others

    def release(self, holder: str) -> None:
        """See ``Ledger.release``."""
        with self._lock:
            self._held.pop(holder, None)

    def close(self) -> None:
        """Nothing to stop: the pool released its holdings one by one."""


@dataclass(frozen=True)
class Decision:
    """``holding`` when the check may start; else why it waits, or why it never will."""

    holding: Holding | None = None
    waiting: str = ""
    refused: str | None = None


class GpuPool:
    """Reservations of one run; see the module docstring."""

    def __init__(
        self,
        run_id: str,
        ledger: Ledger | None = None,
        reader: InventoryReader | None = None,
        tell: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.run_id = run_id
        self.ledger: Ledger = ledger or MemoryLedger()
        self.reader = reader
        self.tell = tell
        self._waiting: dict[str, Decision] = {}
        self._next_look = 0.0
        self._changed = threading.Event()  # a check of this run released its GPUs
        self._unreachable_since: float | None = None
        self._held: set[str] = set()  # holders this run reserved and has not released

    def try_reserve(self, check: PlannedCheck) -> Decision:
        """Reserve ``check``'s GPUs if they fit now; looks again at most once a poll period."""
        need = check.gpus or EVERY_FREE_GPU
        earlier = self._waiting.get(check.name)
        if earlier and not self._changed.is_set() and time.monotonic() < self._next_look:
            return earlier
        self._changed.clear()
        self._next_look = time.monotonic() + d.GPU_LEASE_POLL_SECONDS
        holder = holder_id(self.run_id, check.name)
        seen: list[Inventory] = []
        view: InventoryView | None = None

        def decide(others: dict[str, Holding]) -> Holding | None:
            inv = view(set(others) | {holder}) if view else Inventory({})
            seen[:] = [inv]
            return fit(need if view else EVERY_FREE_GPU, inv, list(others.values()))

        try:
            view = self._view()
            holding, others = self.ledger.reserve(holder, check.reserves or str(need), decide)
        except Exception as exc:
            return self._failed(check, exc)
        self._unreachable_since = None
        if holding is not None:
            self._waiting.pop(check.name, None)
            self._held.add(holder)
            return Decision(holding)
        held = "; ".join(f"{h} holds {v}" for h, v in sorted(others.items())) or "nobody holds any"
        free = free_text(seen[-1], list(others.values())) if seen else "free GPUs unknown"
        decision = Decision(
            waiting=f"waiting for GPUs: needs {check.reserves or need}; {free}; {held}"
        )
        self._waiting[check.name] = decision
        return decision

    def _view(self) -> InventoryView | None:
        """This look's inventory; without one (forbidden), GPU checks go one at a time."""
        if self.reader is None:
            return None
        try:
            return self.reader()
        except InventoryUnavailable as exc:
            self.reader = None
            self.tell(f"cannot read the cluster's free GPUs ({exc}); GPU checks run one at a time")
            return None

    def _failed(self, check: PlannedCheck, exc: Exception) -> Decision:
        """The ledger could not be used: without it (403), wait (API blip), or give up."""
        if getattr(exc, "status", None) == 403:
            self.tell(
                "cannot coordinate GPU reservations with other aicr runs "
                f"({describe_api_error(exc)} on Leases); reserving within this run only"
            )
            self.ledger = MemoryLedger()
            self._changed.set()
            return self.try_reserve(check)
        self._unreachable_since = self._unreachable_since or time.monotonic()
        why = f"cannot reserve GPUs: {describe_api_error(exc)}"
        if time.monotonic() - self._unreachable_since >= d.API_UNREACHABLE_SECONDS:
            return Decision(refused=why)
        return Decision(waiting=why)

    def release(self, check: PlannedCheck) -> None:
        """``check`` ended: its GPUs are free for the next one."""
        holder = holder_id(self.run_id, check.name)
        self._held.discard(holder)
        self.ledger.release(holder)
        self._changed.set()

    def close(self) -> None:
        """The run ended: drop every reservation it still holds."""
        for holder in sorted(self._held):
            self.ledger.release(holder)
        self._held.clear()
        self.ledger.close()


def cluster_reader(api: ApiClient, placement: Placement) -> InventoryReader:
    """Reads nodes, non-terminal pods, ResourceSlices and ResourceClaims, once per look."""
    import json

    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core: Any = client.CoreV1Api(api)
    custom: Any = client.CustomObjectsApi(api)

    def items(response: Any) -> list[Obj]:
        data: list[Obj] = json.loads(response.data).get("items") or []
        return data

    def listed(*group: str) -> list[Obj]:
        return items(custom.list_cluster_custom_object(*group, _preload_content=False))

    def absent(exc: Exception) -> bool:  # a 404: this version of the API is not served
        return isinstance(exc, ApiException) and exc.status == 404

    def read() -> InventoryView:
        try:
            nodes = items(core.list_node(_preload_content=False))
            pods = items(
                core.list_pod_for_all_namespaces(
                    field_selector="status.phase!=Succeeded,status.phase!=Failed",
                    _preload_content=False,
                )
            )
            # the newest DRA version served (1.32-1.33 serve only betas), as v1 shows it;
            # none served (404 at every version): no slices, no claims
            slices = dra.listed_v1(lambda v: listed(dra.GROUP, v, "resourceslices"), absent)
            claims = dra.listed_v1(lambda v: listed(dra.GROUP, v, "resourceclaims"), absent)
        except ApiException as exc:
            if exc.status in (401, 403):
                raise InventoryUnavailable(describe_api_error(exc)) from None
            raise
        return lambda holders: inventory(nodes, pods, slices, claims, placement, holders)

    return read


def for_cluster(ctx: RunContext) -> GpuPool:
    """The pool of a run against a real cluster: the shared Lease and the live inventory."""
    from aicr.kube.target import api_client
    from aicr.runner.gpu_lease import LeaseLedger

    api = api_client(ctx.kube)

    def tell(message: str) -> None:
        ctx.events(Event(EventKind.MESSAGE, message=message))

    return GpuPool(
        ctx.run_id,
        LeaseLedger(api, ctx.namespace, ctx.run_id),
        cluster_reader(api, ctx.workloads),
        tell,
    )
