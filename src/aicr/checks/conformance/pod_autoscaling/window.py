"""How long the loaded pod's GPU metric may take to reach the HPA, derived from the cluster.

The metric passes four stages, each on its own period, so in the worst case it waits
one full period at each: DCGM exporter collects (``dcgm_interval``), Prometheus scrapes
the exporter, prometheus-adapter relists the series it can serve (a metric it has not
listed yet is not served at all), and kube-controller-manager's HPA controller syncs.
The window is the sum of the four periods plus ``MARGIN_SECONDS``. Each period is read
where the cluster states it; what the cluster does not show, or shows in a form not
read here, is the component's documented default, and the piece says so. Where several
objects state one period (exporter pods, monitor endpoints, scrape jobs) the longest
counts. The scrape interval is that of the Prometheus the adapter queries (its
``--prometheus-url`` followed to the Prometheus object behind it, else the longest over
every object, saying so); a Prometheus not managed by prometheus-operator is read from
its loaded configuration (``scrape_config``). Pure: functions of the API's dicts and the
configuration's answer; a read that failed is passed in as its error text.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aicr.checks.argv import last_flag
from aicr.checks.conformance.pod_autoscaling import scrape_config
from aicr.checks.dcgm_interval import DEFAULT_MS as EXPORTER_DEFAULT_MS
from aicr.checks.dcgm_interval import collect_interval
from aicr.durations import sum_parts
from aicr.kube.selectors import matches

Obj = dict[str, Any]
Listed = list[Obj] | str  # the objects read, or why they could not be read

# The GPU Operator's label on its DCGM exporter pods (as accelerator-metrics selects them).
EXPORTER_SELECTOR = "app=nvidia-dcgm-exporter"
# Prometheus' own global scrape_interval when its configuration sets none
# (prometheus/prometheus docs/configuration/configuration.md: "default = 1m").
PROMETHEUS_DEFAULT_SECONDS = 60.0
# prometheus-operator's Prometheus spec.scrapeInterval when unset (its API reference:
# "Interval between consecutive scrapes. Default: "30s""); a ServiceMonitor or PodMonitor
# endpoint without ``interval`` is scraped at that global interval.
OPERATOR_DEFAULT_SECONDS = 30.0
# prometheus-adapter's own --metrics-relist-interval: main() in cmd/adapter/adapter.go
# sets ``MetricsRelistInterval: 10 * time.Minute`` before parsing flags (v0.12.0,
# commit 17cef511). Its Helm chart always passes the flag (values metricsRelistInterval
# 1m); AICR's recipe values set 30s.
ADAPTER_DEFAULT_SECONDS = 600.0
RELIST_FLAG = "--metrics-relist-interval"
# The Prometheus the adapter queries (cmd/adapter/adapter.go addFlags: "URL for connecting
# to Prometheus."; main() defaults it to "https://localhost"). It queries <url>/api/v1/...
# (pkg/client/api.go: path.Join of the URL's path and the endpoint).
PROMETHEUS_URL_FLAG = "--prometheus-url"
# The labels prometheus-operator reserves on a Prometheus object's pods, set to the object's
# name (v0.85.0 pkg/apis/monitoring/v1/prometheus_types.go, PodMetadata: "prometheus" and
# "operator.prometheus.io/name"; the pods live in the object's namespace).
NAME_LABELS = ("operator.prometheus.io/name", "prometheus")
# The operator's own pod label (same list: app.kubernetes.io/name set to "prometheus"): where
# an address names a pod rather than a Service, the Prometheus pods are looked for by it.
PROMETHEUS_PODS = "app.kubernetes.io/name=prometheus"
# kube-controller-manager's --horizontal-pod-autoscaler-sync-period default (its
# command-line reference: "Default: 15s"). kubeadm runs it as a static pod labelled
# component=kube-controller-manager in kube-system (staticpod ComponentPod); managed
# control planes (EKS, GKE, AKS) show no such pod.
SYNC_DEFAULT_SECONDS = 15.0
SYNC_FLAG = "--horizontal-pod-autoscaler-sync-period"
CONTROLLER_MANAGER_NAMESPACE = "kube-system"
CONTROLLER_MANAGER_SELECTOR = "component=kube-controller-manager"
# Beyond the four periods: the check's own polls (every 5 s), the HPA's first read after
# it is created and the API round trips between the stages.
MARGIN_SECONDS = 30.0


def seconds_text(seconds: float) -> str:
    """``30s``, ``0.3s``: a number of seconds as the check's messages write them."""
    return f"{seconds:g}s"


@dataclass(frozen=True)
class Piece:
    """One stage's period: its value and where it was read, or which default and why."""

    name: str
    seconds: float
    source: str
    default: bool = False  # a documented default, not a value the cluster states

    @property
    def short(self) -> str:
        """``adapter relist 30s``, ``HPA sync 15s (default)``."""
        return f"{self.name} {seconds_text(self.seconds)}" + (" (default)" if self.default else "")

    @property
    def line(self) -> str:
        """``adapter relist: 30s, --metrics-relist-interval=30s of Deployment monitoring/x``."""
        return f"{self.name}: {seconds_text(self.seconds)}, {self.source}"


@dataclass(frozen=True)
class Window:
    """The pieces, the margin, and the param that replaces their sum when given."""

    pieces: tuple[Piece, ...]
    margin: float = MARGIN_SECONDS
    override: float | None = None  # params.metricSeconds

    @property
    def derived(self) -> float:
        """The sum of the pieces and the margin."""
        return sum(p.seconds for p in self.pieces) + self.margin

    @property
    def seconds(self) -> float:
        """The window used: the param when given, else the derived sum."""
        return self.override if self.override is not None else self.derived

    @property
    def summary(self) -> str:
        """``135s = exporter collection 30s + scrape 30s + ... + margin 30s``, or the param's."""
        parts = " + ".join([*(p.short for p in self.pieces), f"margin {seconds_text(self.margin)}"])
        derived = f"{seconds_text(self.derived)} = {parts}"
        if self.override is None:
            return derived
        return f"{seconds_text(self.override)}: params.metricSeconds; from the cluster {derived}"


# ---- durations ----------------------------------------------------------------------------

_PROMETHEUS = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$"
)
_PROMETHEUS_UNITS = (365 * 86400.0, 7 * 86400.0, 86400.0, 3600.0, 60.0, 1.0, 0.001)
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}
_GO_UNITS["h"] = 3600.0  # time.ParseDuration's units


def prometheus_seconds(text: object) -> float | None:
    """A Prometheus (and prometheus-operator) duration (``30s``, ``1m30s``, ``1d``) in seconds.

    The form of Prometheus' configuration docs: units y, w, d, h, m, s, ms in that order,
    integers only. None for anything else, and for zero (no period).
    """
    m = _PROMETHEUS.match(str(text).strip()) if isinstance(text, str) else None
    if not m or not any(m.groups()):
        return None
    total = sum(int(g) * unit for g, unit in zip(m.groups(), _PROMETHEUS_UNITS, strict=True) if g)
    return total or None


def go_seconds(text: str) -> float | None:
    """A Go ``time.ParseDuration`` string (``30s``, ``1m0s``, ``1.5h``, ``500ms``) in seconds.

    Flags of Kubernetes components and prometheus-adapter are parsed so. None for anything
    else, and for zero or negative durations (no period).
    """
    total = sum_parts(text.strip(), _GO_PART, _GO_UNITS)
    return total if total is not None and total > 0 else None


def _argv(container: Mapping[str, Any]) -> list[str]:
    return [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return (
        f"{meta.get('namespace')}/{meta.get('name')}"
        if meta.get("namespace")
        else str(meta.get("name"))
    )


def _flag_piece(
    what: str, containers: list[tuple[str, Obj]], name: str, default: float, default_text: str
) -> Piece:
    """The longest value of flag ``name`` over ``containers`` (owner, container); defaults named."""
    read: list[Piece] = []
    for owner, c in containers:
        value = last_flag(_argv(c), (name,))
        if value is None:
            read.append(Piece(what, default, f"{owner} passes no {name}: {default_text}", True))
            continue
        seconds = go_seconds(value) if "$(" not in value else None
        if seconds is None:
            source = f"{owner}: {name}={value!r} is not read here: {default_text}"
            read.append(Piece(what, default, source, True))
            continue
        read.append(Piece(what, seconds, f"{name}={value} of {owner}"))
    return _longest(read)


def _longest(read: list[Piece]) -> Piece:
    """The longest piece; of equal ones, a default first (the cluster did not state it)."""
    return max(read, key=lambda p: (p.seconds, p.default))


# ---- the pieces ---------------------------------------------------------------------------


def exporter_piece(pods: Listed) -> Piece:
    """DCGM exporter's collection interval: the longest of its pods', as their specs state it."""
    name, default = "exporter collection", EXPORTER_DEFAULT_MS / 1000
    why = f"dcgm-exporter's default {EXPORTER_DEFAULT_MS} ms"
    if isinstance(pods, str):
        return Piece(name, default, f"exporter pods could not be read ({pods}): {why}", True)
    if not pods:
        return Piece(name, default, f"no pod labelled {EXPORTER_SELECTOR}: {why}", True)
    read = []
    for pod in pods:
        interval = collect_interval(pod)
        if interval.ms is None:
            read.append(Piece(name, default, f"{interval.source}: {why}", True))
        else:
            is_default = interval.source.startswith("dcgm-exporter's default")
            source = f"{interval.source} of pod {_name(pod)}"
            read.append(Piece(name, interval.ms / 1000, source, is_default))
    return _longest(read)


def _namespace_ok(monitor: Obj, namespace: str) -> bool:
    """Whether a monitor's namespaceSelector covers ``namespace`` (its own when unset)."""
    sel = (monitor.get("spec") or {}).get("namespaceSelector") or {}
    if sel.get("any"):
        return True
    names = sel.get("matchNames") or []
    return (
        namespace in names
        if names
        else (monitor.get("metadata") or {}).get("namespace") == namespace
    )


def _labels(obj: Obj) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}


def relied_monitors(
    pods: list[Obj], services: list[Obj], service_monitors: list[Obj], pod_monitors: list[Obj]
) -> list[tuple[Obj, list[Obj]]]:
    """The monitors that select the exporter pods, each with its endpoints.

    A PodMonitor whose selector matches an exporter pod's labels in a namespace it covers;
    a ServiceMonitor whose selector matches a Service (in a covered namespace) that selects
    an exporter pod.
    """
    out: list[tuple[Obj, list[Obj]]] = []
    exporter_services = [
        s
        for s in services
        if (sel := (s.get("spec") or {}).get("selector"))
        and any(
            (p.get("metadata") or {}).get("namespace") == (s.get("metadata") or {}).get("namespace")
            and matches({"matchLabels": sel}, _labels(p))
            for p in pods
        )
    ]
    for monitors, targets, endpoints in (
        (service_monitors, exporter_services, "endpoints"),
        (pod_monitors, pods, "podMetricsEndpoints"),
    ):
        for m in monitors:
            spec = m.get("spec") or {}
            if any(_selects(m, t) for t in targets):
                out.append((m, list(spec.get(endpoints) or [{}])))
    return out


def _selects(monitor: Obj, target: Obj) -> bool:
    """Whether a monitor's selectors (namespace and labels) pick ``target`` (Service or pod)."""
    namespace = str((target.get("metadata") or {}).get("namespace"))
    selector = (monitor.get("spec") or {}).get("selector") or {}
    return _namespace_ok(monitor, namespace) and matches(selector, _labels(target))


def _global_interval(prometheuses: list[Obj]) -> Piece:
    """The longest global scrape interval of the Prometheus objects (the operator's default)."""
    read = []
    for p in prometheuses:
        raw = (p.get("spec") or {}).get("scrapeInterval")
        if raw in (None, ""):
            source = (
                f"Prometheus {_name(p)} sets no spec.scrapeInterval: prometheus-operator's "
                f"default {seconds_text(OPERATOR_DEFAULT_SECONDS)}"
            )
            read.append(Piece("scrape", OPERATOR_DEFAULT_SECONDS, source, True))
            continue
        seconds = prometheus_seconds(raw)
        if seconds is None:
            source = (
                f"Prometheus {_name(p)}: spec.scrapeInterval {raw!r} is not a duration: "
                f"Prometheus' default {seconds_text(PROMETHEUS_DEFAULT_SECONDS)}"
            )
            read.append(Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True))
            continue
        read.append(Piece("scrape", seconds, f"spec.scrapeInterval {raw} of Prometheus {_name(p)}"))
    return _longest(read)


@dataclass(frozen=True)
class Queried:
    """Which Prometheus the adapter queries, as far as the cluster shows it.

    ``names``: the Prometheus objects (``namespace/name``) whose pods serve the adapter's
    ``--prometheus-url``; ``plain``: pods serve it but prometheus-operator runs none of
    them; neither: it could not be told, and ``why`` says why (else how it was told).
    """

    why: str
    names: tuple[str, ...] = ()
    plain: bool = False


@dataclass(frozen=True)
class ConfigRead:
    """A GET of ``/api/v1/status/config``: where, and its body or why there is none."""

    url: str | None  # None: no Prometheus address was known
    where: str  # which setting or flag gave the address, or why none did
    body: str | None = None
    error: str | None = None


def address(url: str, namespace: str) -> tuple[str, str] | str | None:
    """What ``url``'s host names: a Service ``(namespace, name)``, an IP address, or None.

    Cluster DNS names: ``name`` (the adapter's own namespace), ``name.namespace`` and
    ``name.namespace.svc[.<cluster domain>]``; any other host is outside what is read here.
    """
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    parts = host.split(".")
    if len(parts) == 1:
        return namespace, parts[0]
    if len(parts) == 2 or parts[2] == "svc":
        return parts[1], parts[0]
    return None


def behind(where: str, reached: str, pods: Listed, prometheuses: Listed) -> Queried:
    """Which Prometheus objects run ``pods``, those serving the adapter's URL (``reached``)."""
    if isinstance(pods, str):
        return Queried(f"{where} reaches {reached}, whose pods could not be read ({pods})")
    if not pods:
        return Queried(f"{where} reaches {reached}, which no pod serves")
    if isinstance(prometheuses, str):
        return Queried(f"the Prometheus objects could not be read ({prometheuses})")
    objects = {_name(p) for p in prometheuses}
    named = set()
    for pod in pods:
        labels = _labels(pod)
        ns = (pod.get("metadata") or {}).get("namespace")
        named |= {f"{ns}/{labels[k]}" for k in NAME_LABELS if k in labels}
    shown = ", ".join(sorted(_name(p) for p in pods))
    found = tuple(sorted(named & objects))
    if found:
        return Queried(
            f"{where} reaches {reached}: pods {shown} of Prometheus {', '.join(found)}", found
        )
    return Queried(
        f"{where} reaches {reached}: pods {shown}, of no Prometheus object (a Prometheus "
        "not managed by prometheus-operator)",
        plain=True,
    )


def is_plain(queried: Queried, prometheuses: Listed) -> bool:
    """Whether the adapter's Prometheus is read from its configuration, not from objects."""
    if isinstance(prometheuses, str) or queried.names:
        return False
    return queried.plain or not prometheuses


def scrape_piece(
    pods: Listed,
    services: Listed,
    service_monitors: Listed,
    pod_monitors: Listed,
    prometheuses: Listed,
    queried: Queried,
    config: ConfigRead | None,
) -> Piece:
    """Prometheus' scrape interval of the exporter, on the Prometheus the adapter queries.

    Managed by prometheus-operator (``queried.names``): the ServiceMonitor/PodMonitor
    endpoints that select the exporter pods, and for an endpoint without an interval (or
    no such monitor) its Prometheus object's ``spec.scrapeInterval`` (the operator's 30s
    when unset). Where the adapter's Prometheus cannot be told, the longest over every
    Prometheus object, saying so. A plain Prometheus (``queried.plain``, or no Prometheus
    object at all): the interval its loaded configuration gives the jobs that could scrape
    the exporter (``config``, see ``scrape_config``); monitors are not read then, as only
    prometheus-operator turns them into scrape jobs.
    """
    fallback = f"Prometheus' default {seconds_text(PROMETHEUS_DEFAULT_SECONDS)}"
    lists = {
        "exporter pods": pods,
        "Services": services,
        "ServiceMonitors": service_monitors,
        "PodMonitors": pod_monitors,
        "Prometheus objects": prometheuses,
    }
    unread = [f"{what} ({err})" for what, err in lists.items() if isinstance(err, str)]
    if unread:
        source = "could not read " + ", ".join(unread) + ": " + fallback
        return Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True)
    read = {what: got for what, got in lists.items() if not isinstance(got, str)}
    objects = read["Prometheus objects"]
    if queried.names:
        chosen = [p for p in objects if _name(p) in queried.names]
        whose = f"the adapter queries it: {queried.why}"
    elif not is_plain(queried, objects):
        chosen = objects
        whose = f"which Prometheus the adapter queries is not known ({queried.why}): " + (
            "the only Prometheus object"
            if len(objects) == 1
            else f"the longest of the {len(objects)} Prometheus objects"
        )
    else:
        plain = queried.why if queried.plain else "there is no Prometheus object"
        return config_piece(config, read["exporter pods"], read["Services"], plain)
    glob = _global_interval(chosen)
    monitors = relied_monitors(
        read["exporter pods"], read["Services"], read["ServiceMonitors"], read["PodMonitors"]
    )
    if not monitors:
        source = (
            f"{glob.source} (no ServiceMonitor or PodMonitor selects the exporter pods; {whose})"
        )
        return Piece("scrape", glob.seconds, source, glob.default)
    pieces: list[Piece] = []
    for monitor, endpoints in monitors:
        owner = f"{monitor.get('kind') or 'monitor'} {_name(monitor)}"
        for endpoint in endpoints:
            raw = endpoint.get("interval")
            if raw in (None, ""):
                source = f"{owner} sets no endpoint interval: {glob.source} ({whose})"
                pieces.append(Piece("scrape", glob.seconds, source, glob.default))
            elif (seconds := prometheus_seconds(raw)) is None:
                source = f"{owner}: endpoint interval {raw!r} is not a duration: {fallback}"
                pieces.append(Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True))
            else:
                pieces.append(Piece("scrape", seconds, f"endpoint interval {raw} of {owner}"))
    return _longest(pieces)


def config_piece(
    config: ConfigRead | None, pods: list[Obj], services: list[Obj], plain: str
) -> Piece:
    """The scrape interval a plain Prometheus' loaded configuration gives the exporter."""
    default = f"Prometheus' default {seconds_text(PROMETHEUS_DEFAULT_SECONDS)}"
    if config is None or config.url is None:
        where = config.where if config is not None else "not looked for"
        source = f"{plain}; no address to read its configuration ({where}): {default}"
        return Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True)
    at = f"{config.url}{scrape_config.API_PATH} ({config.where})"
    try:
        if config.body is None:
            raise scrape_config.ConfigError(config.error or "no answer")
        loaded = scrape_config.parse(config.body)
    except scrape_config.ConfigError as e:
        source = f"{plain}; {at} could not be read: {e}: {default}"
        return Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True)
    choice = scrape_config.choose(loaded, pods, services, prometheus_seconds)
    unread = [j.name for j in choice.jobs if j.seconds is None]
    if unread:
        source = f"{plain}; {at}: scrape_interval of {', '.join(unread)} not read: {default}"
        return Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True)
    notes = [f"{name} ({why})" for name, why in choice.ruled_out]
    ruled = f"; not counted: {', '.join(notes)}" if notes else ""
    files = (
        f"; {choice.files} scrape_config_files, whose jobs the API does not show, not counted"
        if choice.files
        else ""
    )
    if not choice.jobs:
        glob = prometheus_seconds(choice.global_interval)
        if glob is None:
            source = f"{plain}; {at}: global scrape_interval {choice.global_interval!r}: {default}"
            return Piece("scrape", PROMETHEUS_DEFAULT_SECONDS, source, True)
        source = (
            f"global scrape_interval {choice.global_interval} of {at}: no Kubernetes pod, "
            f"endpoints or service discovery job may scrape the exporter{ruled}{files}; {plain}"
        )
        return Piece("scrape", glob, source)
    top = max(j.seconds or 0.0 for j in choice.jobs)
    longest = [j for j in choice.jobs if j.seconds == top]
    source = (
        f"scrape_interval {longest[0].interval} of job {', '.join(j.name for j in longest)} in "
        f"{at}, the longest of the jobs that may scrape the exporter (Kubernetes pod, "
        f"endpoints or service discovery: {', '.join(j.name for j in choice.jobs)}){ruled}"
        f"{files}; {plain}"
    )
    return Piece("scrape", top, source)


def _template_labels(deployment: Obj) -> dict[str, str]:
    template = (deployment.get("spec") or {}).get("template") or {}
    return _labels(template)


def adapter_deployments(service: Obj | None, deployments: list[Obj]) -> list[Obj]:
    """The Deployments whose pods the custom metrics API's backend Service selects."""
    selector = ((service or {}).get("spec") or {}).get("selector")
    if not selector:
        return []
    return [d for d in deployments if matches({"matchLabels": selector}, _template_labels(d))]


def _adapter_container(deployment: Obj) -> Obj | None:
    """The adapter's container: the one passing the relist flag, else its image's, else one."""
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = pod.get("containers") or []
    for c in containers:
        if last_flag(_argv(c), (RELIST_FLAG,)) is not None:
            return dict(c)
    for c in containers:
        if "prometheus-adapter" in str(c.get("image")):
            return dict(c)
    return dict(containers[0]) if len(containers) == 1 else None


def adapter_containers(
    backend: str, service: Obj | str | None, deployments: Listed
) -> list[tuple[str, Obj]] | str:
    """The adapter's containers (owner, container) behind ``backend``, or why there are none.

    ``backend`` names the APIService's Service (``monitoring/prometheus-adapter``, or
    ``""`` when the APIService names none).
    """
    if not backend:
        return "the APIService names no Service"
    if isinstance(service, str) or isinstance(deployments, str):
        err = service if isinstance(service, str) else deployments
        return f"service {backend} could not be followed ({err})"
    if service is None:
        return f"no Service {backend}"
    found = adapter_deployments(service, deployments)
    containers = [
        (f"Deployment {_name(d)}", c) for d in found if (c := _adapter_container(d)) is not None
    ]
    return containers or f"no Deployment in service {backend}'s namespace runs the pods it selects"


def relist_piece(backend: str, service: Obj | str | None, deployments: Listed) -> Piece:
    """prometheus-adapter's relist interval, from the args of the Deployment behind ``backend``."""
    name = "adapter relist"
    why = f"prometheus-adapter's default {seconds_text(ADAPTER_DEFAULT_SECONDS)}"
    containers = adapter_containers(backend, service, deployments)
    if isinstance(containers, str):
        return Piece(name, ADAPTER_DEFAULT_SECONDS, f"{containers}: {why}", True)
    return _flag_piece(name, containers, RELIST_FLAG, ADAPTER_DEFAULT_SECONDS, why)


def adapter_url(containers: list[tuple[str, Obj]] | str) -> tuple[str | None, str]:
    """The adapter's ``--prometheus-url`` and where it was read; None and why when not read."""
    if isinstance(containers, str):
        return None, containers
    urls = {(owner, last_flag(_argv(c), (PROMETHEUS_URL_FLAG,))) for owner, c in containers}
    values = {url for _, url in urls}
    if len(values) > 1:
        shown = "; ".join(f"{owner}: {url}" for owner, url in sorted(urls, key=str))
        return None, f"the adapter's Deployments pass different {PROMETHEUS_URL_FLAG} ({shown})"
    owner, url = sorted(urls, key=str)[0]
    if not url or "$(" in url:
        said = (
            f"passes {PROMETHEUS_URL_FLAG}={url!r}" if url else f"passes no {PROMETHEUS_URL_FLAG}"
        )
        return None, f"{owner} {said}"
    return url, f"{PROMETHEUS_URL_FLAG}={url} of {owner}"


def sync_piece(pods: Listed) -> Piece:
    """The HPA controller's sync period: kube-controller-manager's pod's flag, else its default."""
    name = "HPA sync"
    why = f"kube-controller-manager's default {seconds_text(SYNC_DEFAULT_SECONDS)}"
    where = f"{CONTROLLER_MANAGER_NAMESPACE} pods labelled {CONTROLLER_MANAGER_SELECTOR}"
    if isinstance(pods, str):
        return Piece(name, SYNC_DEFAULT_SECONDS, f"{where} could not be read ({pods}): {why}", True)
    containers = [
        (f"pod {_name(p)}", dict(c))
        for p in pods
        for c in (p.get("spec") or {}).get("containers") or []
        if "kube-controller-manager" in " ".join([*_argv(c), str(c.get("name"))])
    ]
    if not containers:
        return Piece(
            name,
            SYNC_DEFAULT_SECONDS,
            f"the cluster shows no kube-controller-manager ({where}: none; a managed or "
            f"off-cluster control plane): {why}",
            True,
        )
    return _flag_piece(name, containers, SYNC_FLAG, SYNC_DEFAULT_SECONDS, why)
