"""The description every component gives: name, pin, images, manifests, readiness, config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simcluster import paths

Manifest = dict[str, Any]
# What a running component publishes for `sim config`: check name -> CheckSettings keys.
Published = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Image:
    """An image the runtime plays: a cached binary (or a sim script), and its default args.

    A `script` is one of the sim's own models (run with the runtime's Python and
    `--sim-dir`), for components that cannot be built here (dcgm-exporter).
    """

    binary: str
    args: tuple[str, ...] = ()
    script: Path | None = None


@dataclass(frozen=True)
class Knobs:
    """Test-time settings the sim's installs use (documented in docs/sim.md)."""

    scrape_interval: str = "1s"
    evaluation_interval: str = "1s"


@dataclass(frozen=True)
class Context:
    """What a component's manifests may depend on."""

    selected: frozenset[str]  # every component of this install (e.g. operator mode)
    knobs: Knobs = field(default_factory=Knobs)
    # Addresses of components already running, by component name (no cluster DNS here).
    addresses: Mapping[str, str] = field(default_factory=dict)


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

    @property
    def version(self) -> str:
        """Its pinned version."""
        return paths.read_pins()[self.pin] if self.pin else "(sim model)"

    def bin_dir(self) -> Path:
        """Where its binaries live in the cache (as build-component.sh computes it)."""
        return paths.cache_root() / "components" / f"{self.name}-{self.version}" / "bin"
