"""Asking Prometheus over its HTTP API: where it is, instant queries, active targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from aicr.checks import CheckContext

STACK_COMPONENT = "kube-prometheus-stack"
Obj = dict[str, Any]


def url(ctx: CheckContext) -> str:
    """The configured Prometheus, else the recipe's kube-prometheus-stack Service by DNS name."""
    if ctx.settings.prometheus_url:
        return ctx.settings.prometheus_url.rstrip("/")
    component = ctx.recipe.component(STACK_COMPONENT)
    ns = component.namespace if component and component.namespace else "monitoring"
    return f"http://prometheus-operated.{ns}.svc:9090"


def _data(http: httpx.Client, address: str, params: dict[str, str]) -> Any:
    r = http.get(address, params=params)
    r.raise_for_status()
    body: dict[str, Any] = r.json()
    if body.get("status") != "success":
        raise ValueError(f"Prometheus answered {body.get('status')}: {body.get('error')}")
    return body.get("data") or {}


def query(http: httpx.Client, base: str, promql: str) -> list[Obj]:
    """The vector of an instant query (``data.result``); ValueError when Prometheus refuses."""
    result: list[Obj] = _data(http, f"{base}/api/v1/query", {"query": promql}).get("result") or []
    return result


def active_targets(http: httpx.Client, base: str) -> list[Obj]:
    """Every active scrape target (``data.activeTargets``)."""
    found: list[Obj] = (
        _data(http, f"{base}/api/v1/targets", {"state": "active"}).get("activeTargets") or []
    )
    return found
