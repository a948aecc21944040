"""Install, list, remove and publish components on the running cluster.

The run's journal `<sim dir>/components.json` records, per installed
component, every object its install applied, so `remove` deletes exactly
those (a Namespace only when no other installed component still uses it) and
`sim down` needs nothing: the run folder and the cluster go together.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from simcluster.cluster import kube, paths
from simcluster.components import registry, workloads
from simcluster.components.base import Component, Context
from simcluster.scenarios import contents as scenario

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

JOURNAL = "components.json"
BUILD_SCRIPT = paths.SIM_ROOT / "build-component.sh"


class ComponentError(RuntimeError):
    """A component could not be built or did not become ready."""


def build(components: Iterable[Component]) -> None:
    """Build or unpack the binaries of `components` into the cache (reused when complete).

    Call it before entering the cluster's network namespace: the script refuses
    to build inside it (nothing can be fetched there), and says so on stderr,
    where its progress also goes.
    """
    names = [c.name for c in components if c.pin]
    if not names:
        return
    proc = subprocess.run(
        ["bash", str(BUILD_SCRIPT), *names], stdout=subprocess.PIPE, text=True, check=False
    )
    if proc.returncode != 0:
        raise ComponentError(f"building {', '.join(names)} failed (exit {proc.returncode})")


def require_built(components: Iterable[Component]) -> None:
    """ComponentError naming each of `components` whose binaries are not in the cache.

    Builds nothing, so it may run anywhere, the cluster's namespace included.
    """
    names = [c.name for c in components if c.pin]
    if not names:
        return
    proc = subprocess.run(
        ["bash", str(BUILD_SCRIPT), "--check", *names], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ComponentError(
            "; ".join(proc.stderr.strip().splitlines()) or f"exit {proc.returncode}"
        )


def journal(sim: Sim) -> dict[str, list[dict[str, Any]]]:
    """Installed component name -> the objects its install applied (install order)."""
    try:
        data: dict[str, list[dict[str, Any]]] = json.loads((sim.dir / JOURNAL).read_text())
    except (OSError, ValueError):
        return {}
    return data


def _record(sim: Sim, data: dict[str, list[dict[str, Any]]]) -> None:
    tmp = sim.dir / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(sim.dir / JOURNAL)


def install(
    sim: Sim,
    components: list[Component],
    timeout: float = 180.0,
    values: Mapping[str, Mapping[str, Any]] | None = None,
    releases: Mapping[str, str] | None = None,
) -> None:
    """Apply each component once the ones it requires or follows are ready; wait for all.

    `values` and `releases` (by chart) are a recipe's (`Context`), for `sim recipe`.

    A component waits only for those (their addresses go into its manifests); the
    others start side by side, since most of an install is waiting for readiness
    probes. Each has `timeout` from its own apply. It runs inside the cluster's
    network namespace, so it builds nothing: the caller ran `build` before entering
    it (ComponentError when one is not built).
    """
    require_built(components)
    done = journal(sim)
    selected = frozenset([*done, *(c.name for c in components)])
    ready = set(done)
    api = kube.api_client(sim.kubeconfig)
    waiting = list(components)
    deadlines: dict[str, float] = {}
    while True:
        for c in [c for c in waiting if _followed_ready(c, selected, ready)]:
            running = [registry.BY_NAME[n] for n in ready if n in registry.BY_NAME]
            addresses = {r.name: a for r in running if r.address and (a := r.address(api))}
            ctx = Context(
                selected=selected,
                addresses=addresses,
                values=values or {},
                releases=releases or {},
            )
            applied = scenario.apply(sim, c.manifests(ctx))
            done[c.name] = [workloads.ref(o) for o in applied]
            _record(sim, done)
            deadlines[c.name] = time.monotonic() + timeout
            waiting.remove(c)
        left = {n: waiting_for(sim, registry.BY_NAME[n]) for n in deadlines if n not in ready}
        ready.update(n for n, what in left.items() if not what)
        late = {n: what for n, what in left.items() if what and time.monotonic() > deadlines[n]}
        if late:
            raise ComponentError(_not_ready(timeout, late))
        if not waiting and ready >= deadlines.keys():
            return
        time.sleep(0.5)


def _followed_ready(c: Component, selected: frozenset[str], ready: set[str]) -> bool:
    """Whether every component `c` requires, or follows when selected, is ready."""
    return all(d in ready for d in (*c.requires, *c.after) if d in selected)


def _not_ready(timeout: float, left: dict[str, list[str]]) -> str:
    return f"components not ready in {timeout:.0f} s: " + "; ".join(
        f"{k}: waiting for {', '.join(v)}" for k, v in left.items()
    )


def waiting_for(sim: Sim, c: Component) -> list[str]:
    """What component `c` still waits for (empty when it is ready)."""
    api = kube.api_client(sim.kubeconfig)
    out = workloads.pending(api, journal(sim).get(c.name, []))
    if not out and c.ready is not None:
        extra = c.ready(api)
        out += [extra] if extra else []
    return out


def wait_ready(sim: Sim, components: list[Component], timeout: float) -> None:
    """Wait until no component waits for anything; ComponentError naming what each waits for."""
    deadline = time.monotonic() + timeout
    while True:
        left = {c.name: waiting_for(sim, c) for c in components}
        left = {k: v for k, v in left.items() if v}
        if not left:
            return
        if time.monotonic() > deadline:
            raise ComponentError(_not_ready(timeout, left))
        time.sleep(0.5)


def own_custom_objects(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects among `refs` of kinds the same install's CRDs define (e.g. a NodePool)."""
    groups = {r["name"].split(".", 1)[1] for r in refs if r["kind"] == "CustomResourceDefinition"}
    return [r for r in refs if r["apiVersion"].split("/")[0] in groups]


def custom_objects(dyn: Any, refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every object in the cluster of the kinds the install's CRDs define (users' ones too).

    Their controller's finalizers (Kueue's on Workloads and queues) hold them,
    and with them the CRD, once the controller is gone.
    """
    crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    out = []
    for r in refs:
        if r["kind"] != "CustomResourceDefinition":
            continue
        crd = kube.ignore_not_found(lambda r=r: crds.get(name=r["name"]))
        if crd is None:
            continue
        spec = crd.spec
        version = next(v.name for v in spec.versions if v.storage)
        api_version = f"{spec.group}/{version}"
        try:
            items = dyn.resources.get(api_version=api_version, kind=spec.names.kind).get().items
        except Exception:  # not served (any more): nothing to finish
            continue
        out += [
            {
                "apiVersion": api_version,
                "kind": spec.names.kind,
                "name": o.metadata.name,
                "namespace": o.metadata.namespace,
            }
            for o in items
        ]
    return out


def remove(sim: Sim, names: Iterable[str], timeout: float = 150.0) -> None:
    """Delete what the install of each named component applied, and wait until it is gone.

    Every object of the component's own kinds goes first, while its controller
    still runs to finish them (Karpenter removes a NodePool's nodes, Kueue its
    Workloads' finalizers); then everything else.

    Each component has `timeout` of its own. A Namespace goes only when the
    namespace controller finds it empty, and that controller retries a namespace
    with content left after a backoff that grows to 60 s (kube-controller-manager's
    `nsControllerRateLimiter`), so a loaded machine can need two of its retries.
    """
    done = journal(sim)
    dyn = kube.dynamic(kube.api_client(sim.kubeconfig))
    for name in names:
        deadline = time.monotonic() + timeout
        refs = done.pop(name, [])
        still_used = {(r["kind"], r["name"]) for other in done.values() for r in other}
        first = own_custom_objects(refs)
        first += [o for o in custom_objects(dyn, refs) if o not in first]
        rest = [
            r
            for r in refs
            if r not in first
            and not (r["kind"] == "Namespace" and (r["kind"], r["name"]) in still_used)
        ]
        _record(sim, done)  # no longer installed, even if what it left is slow to go
        for batch in (first, rest):
            for ref in reversed(batch):
                res = dyn.resources.get(api_version=ref["apiVersion"], kind=ref["kind"])
                kube.ignore_not_found(
                    lambda r=ref, res=res: res.delete(
                        name=r["name"], namespace=r["namespace"], propagation_policy="Foreground"
                    )
                )
            _wait_gone(dyn, batch, deadline, timeout)


def _wait_gone(dyn: Any, refs: list[dict[str, Any]], deadline: float, timeout: float) -> None:
    for ref in refs:
        res = dyn.resources.get(api_version=ref["apiVersion"], kind=ref["kind"])
        while (
            kube.ignore_not_found(
                lambda r=ref, res=res: res.get(name=r["name"], namespace=r["namespace"])
            )
            is not None
        ):
            if time.monotonic() > deadline:
                raise ComponentError(
                    f"{ref['kind']} {ref['name']} not deleted in {timeout:.0f} s"
                    + _still_holding(res, ref)
                )
            time.sleep(0.2)


def _still_holding(res: Any, ref: dict[str, Any]) -> str:
    """What the object's status says keeps it (a Namespace's deletion conditions), if anything."""
    obj = kube.ignore_not_found(lambda: res.get(name=ref["name"], namespace=ref["namespace"]))
    if obj is None:
        return ""
    conditions = (obj.to_dict().get("status") or {}).get("conditions") or []
    held = [f"{c['type']}: {c.get('message', '')}" for c in conditions if c.get("status") == "True"]
    finalizers = obj.to_dict()["metadata"].get("finalizers") or []
    parts = held + ([f"finalizers {', '.join(finalizers)}"] if finalizers else [])
    return f" ({'; '.join(parts)})" if parts else ""


def installed(sim: Sim) -> list[Component]:
    """The installed components, in install order."""
    return [registry.BY_NAME[n] for n in journal(sim) if n in registry.BY_NAME]


def published(sim: Sim) -> dict[str, dict[str, Any]]:
    """Check settings the installed components publish, merged (check -> settings)."""
    api = kube.api_client(sim.kubeconfig)
    checks: dict[str, dict[str, Any]] = {}
    for c in installed(sim):
        for check, settings in (c.publishes(api) if c.publishes else {}).items():
            checks.setdefault(check, {}).update(settings)
    return checks


def validate_config(sim: Sim) -> dict[str, Any]:
    """A ValidateConfig document holding what the installed components publish."""
    return {
        "apiVersion": "aicr.nvidia.com/v1alpha1",
        "kind": "ValidateConfig",
        "spec": {"validate": {"checks": dict(sorted(published(sim).items()))}},
    }
