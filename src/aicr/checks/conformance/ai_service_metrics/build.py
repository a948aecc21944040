"""The pure parts of ai-service-metrics: the workload, its discovery object, the verdicts.

No client and no I/O: functions of the API's and Prometheus's dicts, tested as tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from aicr.checks.probe_pods import restricted_pod_spec

Obj = dict[str, Any]
Discovery = Literal["PodMonitor", "annotations"]
IMAGE = "python"  # in aicr/checks/images.yaml
POD = "service-metrics"
CONTAINER = "server"
PORT = 8080
PORT_NAME = "http-metrics"
METRICS_PATH = "/metrics"
METRIC = "aicr_probe_requests_total"
RUN_LABEL = "aicr_run"  # a label of the workload's own series: found however the platform relabels
APP = {"app.kubernetes.io/name": "aicr-service-metrics"}
MONITORING_GROUP = "monitoring.coreos.com/v1"
OPERATOR_COMPONENTS = ("kube-prometheus-stack", "prometheus-operator")
IDENTITY = ("namespace", "pod")  # labels a workload's series must carry to be attributed
UNSEEN = {
    "PodMonitor": "its PodMonitor was not turned into a scrape target",
    "annotations": "its prometheus.io annotations were not turned into a scrape target",
}
SHOWN = ("namespace", "pod", "container", "job", "instance", "endpoint", "service")

# Counts GET / only; /metrics and /healthz (scrapes and probes) never move the counter.
SERVER = (
    """\
import http.server, os, sys, threading
run, lock, count = sys.argv[1], threading.Lock(), [0]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/":
            with lock:
                count[0] += 1
        with lock:
            n = count[0]
        body = (f"# HELP {name} Requests served on /.\\n# TYPE {name} counter\\n"
                f'{name}{{{label}="{run}"}} {n}\\n' if self.path == "{path}" else "ok\\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer((os.environ["POD_IP"], {port}), Handler).serve_forever()
""".replace("{name}", METRIC)
    .replace("{label}", RUN_LABEL)
    .replace("{path}", METRICS_PATH)
    .replace("{port}", str(PORT))
)


def discovery(param: str, recipe_components: set[str], served: list[str] | None) -> Discovery:
    """How the platform discovers workloads: the param, else the recipe, else the cluster.

    ``served`` is what API discovery lists for monitoring.coreos.com/v1 (None: not served).
    A recipe that deploys prometheus-operator (kube-prometheus-stack) means PodMonitors,
    whether or not its CRD is there: its absence is the failure, not a reason to fall back.
    """
    if param != "auto":
        return "PodMonitor" if param == "PodMonitor" else "annotations"
    if recipe_components & set(OPERATOR_COMPONENTS) or "podmonitors" in (served or []):
        return "PodMonitor"
    return "annotations"


def monitor_labels(prometheuses: list[Obj]) -> dict[str, str]:
    """Labels that make every Prometheus object's ``podMonitorSelector`` select our PodMonitor.

    kube-prometheus-stack's chart default selects only monitors labelled with its release.
    """
    labels: dict[str, str] = {}
    for p in prometheuses:
        selector = (p.get("spec") or {}).get("podMonitorSelector") or {}
        labels.update({str(k): str(v) for k, v in (selector.get("matchLabels") or {}).items()})
    return labels


def pod(image: str, run_id: str, annotate: bool) -> Obj:
    """The workload: an HTTP server counting requests, in the Prometheus text format."""
    container = {
        "name": CONTAINER,
        "image": image,
        "command": ["python3", "-c", SERVER, run_id],
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "ports": [{"name": PORT_NAME, "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": PORT}, "periodSeconds": 1},
    }
    meta: Obj = {"name": POD, "labels": dict(APP)}
    if annotate:
        meta["annotations"] = {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(PORT),
            "prometheus.io/path": METRICS_PATH,
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": restricted_pod_spec([container]),
    }


def pod_monitor(labels: dict[str, str]) -> Obj:
    """The PodMonitor selecting the workload's metrics port."""
    return {
        "apiVersion": MONITORING_GROUP,
        "kind": "PodMonitor",
        "metadata": {"name": POD, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(APP)},
            "podMetricsEndpoints": [{"port": PORT_NAME, "path": METRICS_PATH}],
        },
    }


def is_ready(obj: Obj) -> bool:
    """The pod's Ready condition is True and it has an IP."""
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    return bool(status.get("podIP")) and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )


def targets_of(active: list[Obj], address: str) -> list[Obj]:
    """The active targets scraping ``address`` (host:port) — more than one is a duplicate job."""
    return [
        t
        for t in active
        if (t.get("labels") or {}).get("instance") == address
        or f"//{address}/" in str(t.get("scrapeUrl") or "")
    ]


def own_pool(mode: Discovery, namespace: str) -> str | None:
    """Prefix of the scrape pool the check's own discovery object makes (None: not known).

    prometheus-operator names a PodMonitor's jobs `podMonitor/<namespace>/<name>/<index>`;
    another job scraping the workload (a catch-all) proves nothing about the PodMonitor.
    """
    return f"podMonitor/{namespace}/{POD}/" if mode == "PodMonitor" else None


def from_own(found: list[Obj], pool: str | None) -> bool:
    """True when one of the targets comes from the check's own discovery object."""
    return pool is None or any(str(t.get("scrapePool") or "").startswith(pool) for t in found)


def describe_target(t: Obj) -> str:
    """One target, for evidence."""
    error = f", last error: {t['lastError']}" if t.get("lastError") else ""
    return (
        f"{t.get('scrapePool')}: {t.get('scrapeUrl')} health {t.get('health')}, "
        f"last scrape {t.get('lastScrape')}{error}"
    )


@dataclass(frozen=True)
class Series:
    """One series of an instant-query vector: its labels and value."""

    labels: dict[str, str]
    value: float


def series(result: list[Obj]) -> list[Series]:
    """The series of an instant-query vector (``data.result``) with a finite value."""
    out = []
    for r in result:
        try:
            value = float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if math.isfinite(value):
            out.append(Series({str(k): str(v) for k, v in (r.get("metric") or {}).items()}, value))
    return out


def total(found: list[Series]) -> float:
    """What the counter adds up to across its series."""
    return sum(s.value for s in found)


def describe_series(found: list[Series]) -> str:
    """The series and their identity labels, for evidence."""
    if not found:
        return "no series"
    return "; ".join(
        f"{s.value:g} with "
        + ", ".join(f"{k}={s.labels[k]}" for k in SHOWN if k in s.labels)
        + "".join(
            f", {k}={v}"
            for k, v in sorted(s.labels.items())
            if k not in SHOWN and k not in ("__name__", RUN_LABEL)
        )
        for s in found
    )


def identity_problems(found: list[Series], namespace: str, pod_name: str) -> list[str]:
    """What keeps the series from being attributed to the workload (empty: nothing)."""
    want = {"namespace": namespace, "pod": pod_name}
    problems = []
    for s in found:
        for key in IDENTITY:
            if s.labels.get(key) != want[key]:
                got = s.labels.get(key)
                problems.append(
                    f"label {key} is {got!r}, not {want[key]!r}" if got else f"no {key} label"
                )
    return sorted(set(problems))


def judge_rise(before: float, found: list[Series], sent: int) -> str | None:
    """Why the collected counter is wrong after ``sent`` requests (None: it rose by exactly that).

    A rise short of ``sent`` is not judged here: the caller waits for more scrapes.
    """
    rise = total(found) - before
    if rise > sent:
        twice = (
            f" ({len(found)} series for one counter: "
            + "; ".join(s.labels.get("job", "?") for s in found)
            + ": the workload is collected more than once)"
            if len(found) > 1
            else ""
        )
        return f"the collected value rose by {rise:g}, more than the {sent} requests sent{twice}"
    if rise < sent:
        return f"the collected value rose by {rise:g} of the {sent} requests sent"
    return None
