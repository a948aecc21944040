"""On a failed component test, the component's own log says why: attach its tail to the failure."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from harness import SimCluster

F = TypeVar("F", bound=Callable[..., Any])


def tail(cluster: SimCluster, namespace: str, selector: str, lines: int = 40) -> str:
    """The last `lines` of every container log of the pods matching `selector`."""
    core = cluster.core()
    out = []
    for pod in core.list_namespaced_pod(namespace, label_selector=selector).items:
        for c in pod.spec.containers:
            try:
                text = core.read_namespaced_pod_log(pod.metadata.name, namespace, container=c.name,
                                                    tail_lines=lines)  # fmt: skip
            except Exception as e:  # the log is a courtesy; the failure is what matters
                text = f"(no log: {e})"
            out.append(f"--- {namespace}/{pod.metadata.name}/{c.name}\n{text}")
    return "\n".join(out) or f"(no pod matches {selector} in {namespace})"


def logs_on_failure(namespace: str, selector: str) -> Callable[[F], F]:
    """Decorate a test taking a `SimCluster` fixture (any name): a failure carries the log tail."""

    def wrap(test: F) -> F:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return test(*args, **kwargs)
            except (AssertionError, TimeoutError) as e:
                cluster = next(v for v in kwargs.values() if isinstance(v, SimCluster))
                logs = tail(cluster, namespace, selector)
                raise type(e)(f"{e}\n{logs}") from e

        return run  # type: ignore[return-value]

    return wrap
