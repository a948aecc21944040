"""Small helpers over the kubernetes client, so sim code handles plain dicts."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

T = TypeVar("T")


def api_client(kubeconfig: Path) -> client.ApiClient:
    """A fresh ApiClient for the given kubeconfig (never the shell's KUBECONFIG)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    return client.ApiClient(cfg)


def dynamic(api: client.ApiClient) -> DynamicClient:
    """A dynamic client (any kind, plain dicts) on `api`."""
    return DynamicClient(api)


def to_dict(api: client.ApiClient, obj: Any) -> dict[str, Any]:
    """A typed client object as the API's own JSON shape (camelCase keys)."""
    out: dict[str, Any] = api.sanitize_for_serialization(obj)
    return out


def retry_conflicts(fn: Callable[[], T], attempts: int = 10) -> T:
    """Run a read-modify-write `fn` again when the API reports a conflict."""
    for i in range(attempts):
        try:
            return fn()
        except ApiException as e:
            if e.status != 409 or i == attempts - 1:
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")


def ignore_not_found(fn: Callable[[], T]) -> T | None:
    """Run `fn`, returning None if the object is already gone."""
    try:
        return fn()
    except ApiException as e:
        if e.status == 404:
            return None
        raise
