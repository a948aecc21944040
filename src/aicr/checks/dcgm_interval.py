"""How often a DCGM exporter collects, read from its pod's spec: what bounds a wait for its metrics.

dcgm-exporter takes its collection interval, in milliseconds, from the flag
``-c``/``--collect-interval``, else the environment variable ``DCGM_EXPORTER_INTERVAL``,
else its default of 30000 (NVIDIA/dcgm-exporter ``pkg/cmd/app.go``, commit 0048f87c83c6:
``Value: 30000, Usage: "Interval of time at which point metrics are collected. Unit is
milliseconds (ms).", EnvVars: []string{"DCGM_EXPORTER_INTERVAL"}``; urfave/cli lets the
flag win over the variable). The GPU Operator sets the operand's environment from the
ClusterPolicy's ``dcgmExporter.env``. A value the spec does not hold (``valueFrom``,
``envFrom``, a ``$(VAR)`` reference, a YAML ``--config-file``) cannot be read here: the
result says so, and the caller fails closed or takes the interval it was told. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aicr.checks.argv import last_flag

DEFAULT_MS = 30000  # dcgm-exporter's own default (pkg/cmd/app.go)
ENV = "DCGM_EXPORTER_INTERVAL"
FLAGS = ("-c", "--collect-interval", "-collect-interval")
CONFIG_FLAGS = ("--config-file", "-config-file")
CONFIG_ENV = "DCGM_EXPORTER_CONFIG_FILE"
EXPORTER_PORT = 9400

Obj = dict[str, Any]


@dataclass(frozen=True)
class Interval:
    """The interval an exporter pod collects at, and where that was read (or why it was not)."""

    ms: int | None  # None: the spec does not say it in a form read here
    source: str

    def __str__(self) -> str:
        return f"{self.ms} ms ({self.source})" if self.ms is not None else self.source


def exporter_container(pod: Obj, port: int = EXPORTER_PORT) -> Obj | None:
    """The pod's exporter container: the one serving ``port``, else one named for dcgm-exporter."""
    containers = (pod.get("spec") or {}).get("containers") or []
    for c in containers:
        if any(p.get("containerPort") == port for p in c.get("ports") or []):
            return dict(c)
    for c in containers:
        if "dcgm-exporter" in f"{c.get('name')} {c.get('image')}":
            return dict(c)
    return dict(containers[0]) if len(containers) == 1 else None


def _millis(text: str, where: str) -> Interval:
    try:
        ms = int(text)
    except ValueError:
        return Interval(None, f"{where} is {text!r}, not a number of milliseconds")
    if ms <= 0:
        return Interval(None, f"{where} is {ms}, not a positive interval")
    return Interval(ms, where)


def collect_interval(pod: Obj, port: int = EXPORTER_PORT) -> Interval:
    """The collection interval of an exporter pod, as dcgm-exporter would read its spec."""
    meta = pod.get("metadata") or {}
    name = f"pod {meta.get('namespace')}/{meta.get('name')}"
    c = exporter_container(pod, port)
    if c is None:
        return Interval(None, f"{name}: no container serves port {port}")
    argv = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    flag = last_flag(argv, FLAGS)
    if flag is not None:
        return _millis(flag, f"flag --collect-interval={flag}")
    env = {str(e.get("name")): e for e in c.get("env") or []}
    entry = env.get(ENV)
    if entry is not None:
        if "value" not in entry:
            return Interval(None, f"{name}: {ENV} is set from a reference (valueFrom)")
        value = str(entry.get("value"))
        if "$(" in value:
            return Interval(None, f"{name}: {ENV}={value} names another variable")
        return _millis(value, f"{ENV}={value}")
    if c.get("envFrom"):
        return Interval(None, f"{name}: envFrom may set {ENV}")
    if CONFIG_ENV in env or any(a.partition("=")[0] in CONFIG_FLAGS for a in argv):
        return Interval(None, f"{name}: a --config-file may set the interval")
    return Interval(DEFAULT_MS, "dcgm-exporter's default: neither -c nor " + ENV)
