"""The description every component gives: name, pin, images, manifests, readiness, config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from simcluster.cluster import paths

Manifest = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
POD_IP_ENV = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
# What a running component publishes for `sim config`: check name -> CheckSettings keys.
Published = dict[str, dict[str, Any]]
# The example recipes' values files (AICR's --data layout: components/<chart>/values*.yaml).
RECIPE_COMPONENTS = paths.PROJECT_ROOT / "recipes" / "components"


@dataclass(frozen=True)
class Image:
    """An image the runtime plays: a cached binary (or a sim script), and its default args.

    A `script` is one of the sim's own models (run with the runtime's Python and
    `--sim-dir`), for components that cannot be built here (dcgm-exporter).
    """

    binary: str
    args: tuple[str, ...] = ()
    script: Path | None = None


def repository(image: str) -> str:
    """An image reference without its tag or digest (a registry's port kept)."""
    head, _, last = image.split("@", 1)[0].rpartition("/")
    return f"{head}/{last.split(':', 1)[0]}" if head else last.split(":", 1)[0]


def plays_image(repo: str, image: str) -> bool:
    """True when the key `repo` names `image`'s repository: its last path component(s).

    One component (`kueue`) unless that alone is a generic word, then more
    (`scheduler-plugins/controller`): the runtime owns every pod of the image.
    """
    path = repository(image)
    return path == repo or path.endswith(f"/{repo}")


@dataclass(frozen=True)
class Knobs:
    """Test-time settings the sim's installs use (documented in docs/sim.md)."""

    scrape_interval: str = "1s"
    evaluation_interval: str = "1s"
    # DCGM exporter's DCGM_EXPORTER_INTERVAL when the recipe's values set none (its default
    # is 30000 ms: a check that waits for DCGM metrics reads the interval from the pod)
    exporter_interval_ms: int = 1000


@dataclass(frozen=True)
class Context:
    """What a component's manifests may depend on."""

    selected: frozenset[str]  # every component of this install (e.g. operator mode)
    knobs: Knobs = field(default_factory=Knobs)
    # Addresses of components already running, by component name (no cluster DNS here).
    addresses: Mapping[str, str] = field(default_factory=dict)
    # Helm values by component name (a recipe's valuesFile and overrides); a component
    # without an entry reads the values file the example recipes reference.
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Helm release names by chart (AICR installs each componentRef as a release named as
    # the ref); a chart without an entry is installed as a release of its own name.
    releases: Mapping[str, str] = field(default_factory=dict)

    def release(self, chart: str) -> str:
        """The release name the chart is installed as."""
        return self.releases.get(chart, chart)


@dataclass(frozen=True)
class Component:
    """One platform component.

    `manifests` builds the objects a recipe would create (pure); `ready` is an
    extra readiness test beyond its workloads being ready (API access given);
    `publishes` the addresses it offers the validate config; `address` its URL
    for the components installed after it.
    """

    name: str
    summary: str
    pin: str | None  # the pins.env key of its version (None: played by a sim model)
    images: Mapping[str, Image]  # image repository (last path component) -> binary
    manifests: Callable[[Context], list[Manifest]]
    requires: tuple[str, ...] = ()
    after: tuple[str, ...] = ()  # installed after these when they are selected too
    ready: Callable[[Any], str | None] | None = None  # None when ready, else what it waits for
    publishes: Callable[[Any], Published] | None = None
    address: Callable[[Any], str | None] | None = None  # its URL, for components after it
    also_pinned_by: tuple[str, ...] = ()  # more pins its build uses (e.g. CRD releases)

    @property
    def version(self) -> str:
        """Its pinned version; with `also_pinned_by`, those pins joined to it by `_`."""
        if not self.pin:
            return "(sim model)"
        pins = paths.read_pins()
        return "_".join(pins[k] for k in (self.pin, *self.also_pinned_by))

    def bin_dir(self) -> Path:
        """Where its binaries live in the cache (as build-component.sh computes it)."""
        return paths.cache_root() / "components" / f"{self.name}-{self.version}" / "bin"


def chart_values(ctx: Context, chart: str, default: Path) -> Mapping[str, Any]:
    """A chart's Helm values: the recipe's (``ctx.values[chart]``), else the file ``default``.

    ``default`` is the values file the demo's recipe (recipes/kind-inference.yaml)
    references for that chart, so a sim without a recipe is configured as that recipe's
    cluster would be.
    """
    given = ctx.values.get(chart)
    if given is not None:
        return given
    loaded = yaml.safe_load(default.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def merge_values(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of values (a values file over the chart's, overrides over both):
    mappings key by key, anything else replaced."""
    out = dict(base)
    for k, v in over.items():
        mine = out.get(k)
        both = isinstance(v, Mapping) and isinstance(mine, Mapping)
        out[k] = merge_values(mine, v) if both else v
    return out


def dig(values: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """``values[k1][k2]...``, or ``default`` where a key is absent or a level is no mapping."""
    here: Any = values
    for k in keys:
        if not isinstance(here, Mapping) or k not in here:
            return default
        here = here[k]
    return here


def workload(
    kind: str, name: str, namespace: str, labels: dict[str, str], pod_spec: dict[str, Any]
) -> Manifest:
    """A Deployment (one replica), StatefulSet or DaemonSet of pods labelled `labels`."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if kind != "DaemonSet":
        spec["replicas"] = 1
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def service_account(name: str, namespace: str, rules: list[dict[str, Any]]) -> list[Manifest]:
    """A ServiceAccount with a ClusterRole of `rules` (same name) bound to it."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        },
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        binding(name, name, namespace),
    ]


def binding(name: str, role: str, namespace: str, account: str | None = None) -> Manifest:
    """A ClusterRoleBinding of ClusterRole `role` to ServiceAccount `account` (default `name`)."""
    return {
        "apiVersion": RBAC,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account or name, "namespace": namespace}],
    }
