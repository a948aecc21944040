"""The scrape interval of the DCGM exporter in a plain Prometheus' loaded configuration.

A Prometheus not managed by prometheus-operator states its intervals only in its
configuration file, which its HTTP API returns: ``GET /api/v1/status/config`` answers
``{"status": "success", "data": {"yaml": "<the loaded config>"}}``
(prometheus/prometheus v3.5.0, ``web/api/v1/api.go`` ``serveConfig``:
``api.config().String()``, the config marshalled back to YAML; docs/querying/api.md
"Config"). As loaded, every job carries its ``scrape_interval``: a job that sets none
is given the global one, and a global that sets none Prometheus' 1m
(``config/config.go``: ``ScrapeConfig.Validate`` and ``GlobalConfig.UnmarshalYAML``).
Jobs in ``scrape_config_files`` are not in that YAML (``Config.String`` marshals the
inline ``scrape_configs`` only).

Which job scrapes the exporter is hard to tell in general, so the interval is the
longest of the jobs that could: those that discover pods through Kubernetes
(``kubernetes_sd_configs`` of role pod, endpoints, endpointslice or service) in the
exporter's namespace, less those whose ``keep``/``drop`` relabelling visibly refuses
every exporter target. A rule is judged only when each of its source labels is one the
discovery sets from the exporter pod or its Service (namespace, name, labels,
annotations; names sanitized as Prometheus' ``strutil.SanitizeLabelName`` does) and no
earlier rule may have changed it; any other rule is assumed to keep the target. With no
such job the global interval counts. Pure: the response body in, a choice out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aicr import yaml_io
from aicr.errors import FileFormatError
from aicr.kube.selectors import matches

Obj = dict[str, Any]
API_PATH = "/api/v1/status/config"
POD_ROLES = ("pod", "endpoints", "endpointslice", "service")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_]")
_META = "__meta_kubernetes_"
# Actions that rewrite label sets wholesale: rules after them are not judged.
_WHOLESALE = ("labelmap", "labeldrop", "labelkeep")


class ConfigError(ValueError):
    """The answer is not a Prometheus configuration (a sentence saying what is wrong)."""


@dataclass(frozen=True)
class Job:
    """A scrape job as loaded: its name, interval text and seconds, and its YAML."""

    name: str
    interval: str
    seconds: float | None
    spec: Obj


@dataclass(frozen=True)
class Choice:
    """The jobs that could scrape the exporter, the ones ruled out and why, the global."""

    jobs: tuple[Job, ...]
    ruled_out: tuple[tuple[str, str], ...]  # (job, why)
    global_interval: str
    files: int  # scrape_config_files, whose jobs the API does not show


def parse(body: str) -> Obj:
    """The loaded configuration from the API's JSON answer; ConfigError if it is not one."""
    try:
        answer = json.loads(body)
    except ValueError as e:
        raise ConfigError(f"the answer is not JSON ({e})") from None
    if not isinstance(answer, dict) or answer.get("status") != "success":
        status = answer.get("status") if isinstance(answer, dict) else type(answer).__name__
        raise ConfigError(f"the answer's status is {status!r}, not 'success'")
    text = (answer.get("data") or {}).get("yaml") if isinstance(answer.get("data"), dict) else None
    if not isinstance(text, str):
        raise ConfigError("the answer has no data.yaml")
    try:
        config = yaml_io.parse(text, API_PATH).data
    except FileFormatError as e:
        raise ConfigError(f"data.yaml is not YAML ({e})") from None
    if not isinstance(config, dict):
        raise ConfigError("data.yaml is not a mapping")
    return config


def _global(config: Obj) -> str:
    """The global scrape_interval (Prometheus' 1m where the answer states none)."""
    section = config.get("global")
    return str((section if isinstance(section, dict) else {}).get("scrape_interval") or "1m")


def jobs(config: Obj, seconds: Any) -> list[Job]:
    """Every inline job with its interval (the global one where it states none)."""
    glob = _global(config)
    listed = config.get("scrape_configs")
    out = []
    for spec in listed if isinstance(listed, list) else []:
        if isinstance(spec, dict):
            raw = str(spec.get("scrape_interval") or glob)
            out.append(Job(str(spec.get("job_name")), raw, seconds(raw), spec))
    return out


def _sanitized(prefix: str, values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for key, value in values.items():
        name = _UNSAFE.sub("_", str(key))
        yield f"{prefix}_{name}", str(value)
        yield f"{prefix}present_{name}", "true"


def _meta(kind: str, obj: Obj) -> dict[str, str]:
    """The discovery labels Kubernetes SD sets from a pod's or Service's metadata."""
    meta = obj.get("metadata") or {}
    out = {f"{_META}{kind}_name": str(meta.get("name"))}
    out.update(_sanitized(f"{_META}{kind}_label", meta.get("labels") or {}))
    out.update(_sanitized(f"{_META}{kind}_annotation", meta.get("annotations") or {}))
    return out


def _known(label: str) -> bool:
    """A source label whose value the exporter's metadata decides (absent reads as "")."""
    if label == f"{_META}namespace":
        return True
    return any(
        label == f"{_META}{kind}_name" or label.startswith(f"{_META}{kind}_{part}")
        for kind in ("pod", "service")
        for part in ("label", "annotation")
    )


def _targets(role: str, pods: list[Obj], services: list[Obj]) -> list[dict[str, str]]:
    """The discovery labels of each exporter target a job of ``role`` would see."""
    out = []
    for pod in pods:
        ns = str((pod.get("metadata") or {}).get("namespace"))
        base = {f"{_META}namespace": ns}
        fronting = [
            s
            for s in services
            if (s.get("metadata") or {}).get("namespace") == ns
            and (sel := (s.get("spec") or {}).get("selector"))
            and matches({"matchLabels": sel}, _labels(pod))
        ]
        if role == "pod":
            out.append({**base, **_meta("pod", pod)})
        elif role == "service":
            out += [{**base, **_meta("service", s)} for s in fronting]
        else:  # endpoints and endpointslice: the Service's and the backing pod's labels
            out += [{**base, **_meta("service", s), **_meta("pod", pod)} for s in fronting]
    return out


def _labels(obj: Obj) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}


def _refusal(rules: list[Any], target: dict[str, str]) -> str | None:
    """The first judged keep/drop rule that refuses ``target``, as text; None if none does."""
    written: set[str] = set()
    for rule in rules:
        if not isinstance(rule, dict):
            return None
        action = str(rule.get("action") or "replace").lower()
        if action in _WHOLESALE:
            return None  # later rules see labels this one may have made or removed
        sources = [str(s) for s in rule.get("source_labels") or []]
        judged = sources and all(_known(s) and s not in written for s in sources)
        if action in ("keep", "drop") and judged:
            value = str(rule.get("separator", ";")).join(target.get(s, "") for s in sources)
            raw = rule.get("regex", "(.*)")
            # a config file's bare `regex: true` is a YAML boolean; Prometheus reads the text
            regex = str(raw).lower() if isinstance(raw, bool) else str(raw)
            try:
                matched = re.fullmatch(regex, value) is not None
            except re.error:
                matched = action == "keep"  # a pattern not read here keeps the target
            if matched != (action == "keep"):
                return f"{action} {';'.join(sources)} =~ {regex!r}"
        if rule.get("target_label"):
            written.add(str(rule["target_label"]))
    return None


def _covers(sd: Obj, namespace: str) -> bool:
    """Whether a kubernetes_sd_configs entry watches ``namespace``."""
    spaces = sd.get("namespaces")
    spaces = spaces if isinstance(spaces, dict) else {}
    names = spaces.get("names") or []
    return not names or namespace in names or bool(spaces.get("own_namespace"))


def choose(config: Obj, pods: list[Obj], services: list[Obj], seconds: Any) -> Choice:
    """The jobs that may scrape the exporter pods (``pods``, fronted by ``services``)."""
    found, ruled_out = [], []
    namespaces = {str((p.get("metadata") or {}).get("namespace")) for p in pods}
    for job in jobs(config, seconds):
        listed = job.spec.get("kubernetes_sd_configs")
        sds = [
            sd
            for sd in (listed if isinstance(listed, list) else [])
            if isinstance(sd, dict) and sd.get("role") in POD_ROLES
        ]
        if not sds:
            continue
        if pods and not any(_covers(sd, ns) for sd in sds for ns in namespaces):
            ruled_out.append((job.name, "watches none of the exporter's namespaces"))
            continue
        rules = job.spec.get("relabel_configs")
        rules = rules if isinstance(rules, list) else []
        targets = [t for sd in sds for t in _targets(str(sd["role"]), pods, services)]
        refusals = [_refusal(rules, t) for t in targets]
        if targets and all(refusals):
            ruled_out.append((job.name, str(refusals[0])))
            continue
        found.append(job)
    files = config.get("scrape_config_files")
    count = len(files) if isinstance(files, list) else 0
    return Choice(tuple(found), tuple(ruled_out), _global(config), count)
