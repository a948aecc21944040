"""kube-prometheus-stack 82.8.0 as it renders a recipe's values: names, selectors, scrape Secret.

What is modelled (and nothing more), each from the chart's own templates at 82.8.0:

- names (`templates/_helpers.tpl`): `kube-prometheus-stack.fullname`, the Prometheus
  object's `prometheus.crname`, the operator's `operator.fullname`, the Prometheus
  ServiceAccount's `prometheus.serviceAccountName`, and `namespace` (`namespaceOverride`,
  else the release namespace); the ClusterRole, its binding and the Service are
  `<fullname>-prometheus` (`templates/prometheus/clusterrole.yaml`, `service.yaml`);
- the `Prometheus` object's selectors (`templates/prometheus/prometheus.yaml`): a
  non-empty `<kind>Selector` as given, else `matchLabels: {release: <release>}` when
  `<kind>SelectorNilUsesHelmValues`, else `{}` (every object); namespace selectors as
  given, else `{}` (every namespace); `ruleSelector` and the `scrapeConfig` selectors
  omitted when the values set them to null;
- `additionalScrapeConfigs` (`templates/prometheus/additionalScrapeConfigs.yaml`): only
  when the values give some, the Secret `<fullname>-prometheus-scrape-confg` with key
  `additional-scrape-configs.yaml`, and the object's `additionalScrapeConfigs` naming it.
  Nothing else scrapes by annotation: the chart adds no such job.

`CHART_DEFAULTS` holds the chart's `values.yaml` defaults for exactly these keys; a
recipe's values file goes over them, then its overrides (Helm's merge).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from simcluster.components.base import Manifest, dig, merge_values

CHART = "kube-prometheus-stack"
VERSION = "82.8.0"
SELECTED = ("serviceMonitor", "podMonitor", "probe")  # always rendered, with namespaces
OPTIONAL = ("rule", "scrapeConfig")  # omitted when the values set the selector to null
SCRAPE_KEY = "additional-scrape-configs.yaml"
# kube-prometheus-stack 82.8.0 values.yaml: the keys rendered here
CHART_DEFAULTS: dict[str, Any] = {
    "nameOverride": "",
    "fullnameOverride": "",
    "namespaceOverride": "",
    "cleanPrometheusOperatorObjectNames": False,
    "prometheusOperator": {"enabled": True, "fullnameOverride": ""},
    "prometheus": {
        "enabled": True,
        "serviceAccount": {"create": True, "name": ""},
        "prometheusSpec": {
            **{f"{k}SelectorNilUsesHelmValues": True for k in (*SELECTED, *OPTIONAL)},
            **{f"{k}Selector": {} for k in (*SELECTED, *OPTIONAL)},
            **{f"{k}NamespaceSelector": {} for k in (*SELECTED, *OPTIONAL)},
            "additionalScrapeConfigs": [],
        },
    },
}


def values(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The chart's defaults with ``given`` (a recipe's values file and overrides) over them."""
    return merge_values(CHART_DEFAULTS, given or {})


def _trunc(name: str, size: int) -> str:
    return name[:size].rstrip("-")


def fullname(v: Mapping[str, Any], release: str) -> str:
    """``kube-prometheus-stack.fullname``: ``fullnameOverride`` cut to 26 characters, else the
    release name when it contains the chart's name (or ``nameOverride``), else
    ``<release>-<name>``, cut to 26."""
    if v.get("fullnameOverride"):
        return _trunc(str(v["fullnameOverride"]), 26)
    name = str(v.get("nameOverride") or CHART)
    return _trunc(release if name in release else f"{release}-{name}", 26)


def prometheus_name(v: Mapping[str, Any], release: str) -> str:
    """``prometheus.crname``: ``<fullname>-prometheus``, the fullname alone with
    ``cleanPrometheusOperatorObjectNames``; the operator names its StatefulSet
    ``prometheus-<that>``."""
    full = fullname(v, release)
    return full if v.get("cleanPrometheusOperatorObjectNames") else f"{full}-prometheus"


def operator_name(v: Mapping[str, Any], release: str) -> str:
    """``operator.fullname``: ``prometheusOperator.fullnameOverride`` cut to 35, else
    ``<fullname>-operator``."""
    given = dig(v, "prometheusOperator", "fullnameOverride")
    return _trunc(str(given), 35) if given else f"{fullname(v, release)}-operator"


def service_account(v: Mapping[str, Any], release: str) -> str:
    """``prometheus.serviceAccountName``: the given name, else ``<fullname>-prometheus``
    (``default`` when the chart creates none)."""
    name = dig(v, "prometheus", "serviceAccount", "name")
    if dig(v, "prometheus", "serviceAccount", "create", default=True):
        return str(name or f"{fullname(v, release)}-prometheus")
    return str(name or "default")


def namespace(v: Mapping[str, Any], release_namespace: str) -> str:
    """``kube-prometheus-stack.namespace``: ``namespaceOverride``, else the release's."""
    return str(v.get("namespaceOverride") or release_namespace)


def selectors(v: Mapping[str, Any], release: str) -> dict[str, Any]:
    """The `Prometheus` object's monitor, probe, rule and scrape-config selectors."""
    spec = dig(v, "prometheus", "prometheusSpec", default={}) or {}
    by_release = {"matchLabels": {"release": release}}
    out: dict[str, Any] = {}
    for kind in (*SELECTED, *OPTIONAL):
        given = spec.get(f"{kind}Selector")
        if given:
            out[f"{kind}Selector"] = given
        elif spec.get(f"{kind}SelectorNilUsesHelmValues"):
            out[f"{kind}Selector"] = by_release
        elif kind in SELECTED or given is not None:
            out[f"{kind}Selector"] = {}
        namespaces = spec.get(f"{kind}NamespaceSelector")
        if namespaces:
            out[f"{kind}NamespaceSelector"] = namespaces
        elif kind in SELECTED or kind == "rule" or namespaces is not None:
            out[f"{kind}NamespaceSelector"] = {}
    return out


def scrape_secret(v: Mapping[str, Any], release: str, ns: str) -> Manifest | None:
    """The Secret of the values' ``additionalScrapeConfigs``, or None when they give none."""
    given = dig(v, "prometheus", "prometheusSpec", "additionalScrapeConfigs")
    if not given:
        return None
    text = given if isinstance(given, str) else yaml.safe_dump(given, sort_keys=False)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"{fullname(v, release)}-prometheus-scrape-confg", "namespace": ns},
        "stringData": {SCRAPE_KEY: text},
    }
