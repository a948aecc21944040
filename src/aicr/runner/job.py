"""``JobExecutor``: each check runs as a Kubernetes Job in the cluster under test.

``start`` makes the run namespace (when absent) and the inputs ConfigMap. ``run``
makes the check's ServiceAccount, RBAC, result ConfigMap and workload namespace,
then its Job, and follows the Job and its pod through watch streams until the
pod's container terminated and the result was read, or something ended it
early (unschedulable, image pull, eviction, deletion, deadline, API loss).
``stop`` closes every stream so ``run`` returns at once; ``finish`` deletes
everything carrying the run's label and waits until it is gone.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aicr import defaults as d
from aicr.ctrf import Status
from aicr.errors import ClusterError
from aicr.kube import names, pod_status
from aicr.kube.target import api_client, describe_api_error, read_pod_log
from aicr.plan import PlannedCheck
from aicr.result import STATUS_BY_EXIT, VALIDATOR, CheckResult, Detail, ImageRun, bounded_lines
from aicr.runner import cleanup, manifests, outcome, run_kinds
from aicr.runner.context import RunContext
from aicr.runner.events import Event, EventKind
from aicr.runner.gpu_pool import GpuPool, for_cluster
from aicr.runner.waiting import Watch, WatchEvent, drain

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]
NAMESPACE_GONE_SECONDS = 60.0  # a terminating run namespace (an earlier run) may take this long


def _core(api: ApiClient) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api)


def _batch(api: ApiClient) -> Any:
    from kubernetes import client

    return client.BatchV1Api(api)


def _json(response: Any) -> Obj:
    data: Obj = json.loads(response.data)
    return data


def _now_ms() -> int:
    return int(time.time() * 1000)


class RunSetup:
    """What ``start`` creates and every executor shares: namespace, inputs, Prometheus lookup."""

    def __init__(self) -> None:
        self._prometheus: manifests.PrometheusTarget | None = None
        self._lock = threading.Lock()

    def ensure_namespace(self, api: ApiClient, ctx: RunContext) -> None:
        """Create the run namespace unless it exists; wait out one still terminating."""
        from kubernetes.client.exceptions import ApiException

        core = _core(api)
        deadline = time.monotonic() + NAMESPACE_GONE_SECONDS
        while True:
            try:
                ns = _json(core.read_namespace(ctx.namespace, _preload_content=False))
            except ApiException as exc:
                if exc.status != 404:
                    raise
                ns = None
            if ns is None:
                try:
                    run_kinds.create(
                        api, manifests.namespace(ctx.run_id, ctx.namespace, part="run")
                    )
                    return
                except ApiException as exc:
                    if exc.status != 409:
                        raise
                    continue  # created meanwhile by someone else: look again
            if (ns.get("status") or {}).get("phase") != "Terminating":
                return  # it existed before the run: used as is, never deleted
            if time.monotonic() > deadline:
                raise ClusterError(f"namespace {ctx.namespace} is still terminating")
            time.sleep(0.5)

    def start(self, api: ApiClient, ctx: RunContext) -> None:
        """Namespace and inputs ConfigMap; API failures become a ClusterError."""
        from kubernetes.client.exceptions import ApiException

        try:
            self.ensure_namespace(api, ctx)
            run_kinds.create(api, manifests.inputs_configmap(ctx))
        except ApiException as exc:
            raise ClusterError(
                f"cannot prepare the run in namespace {ctx.namespace}: {describe_api_error(exc)}"
            ) from None
        except Exception as exc:
            if isinstance(exc, ClusterError):
                raise
            raise ClusterError(f"cannot reach the cluster: {exc}") from None

    @staticmethod
    def nodes(api: ApiClient) -> list[Obj]:
        """The cluster's Node objects, for the run's trust class (``aicr.trust``)."""
        from kubernetes.client.exceptions import ApiException

        try:
            return list(_json(_core(api).list_node(_preload_content=False)).get("items") or [])
        except ApiException as exc:
            raise ClusterError(f"cannot list nodes: {describe_api_error(exc)}") from None
        except Exception as exc:
            raise ClusterError(f"cannot list nodes: cannot reach the cluster: {exc}") from None

    def prometheus(self, api: ApiClient, ctx: RunContext) -> manifests.PrometheusTarget:
        """Find the Prometheus pods once per run: their namespace and how many there are."""
        with self._lock:
            if self._prometheus is None:
                self._prometheus = self._find_prometheus(api, ctx)
            return self._prometheus

    @staticmethod
    def _find_prometheus(api: ApiClient, ctx: RunContext) -> manifests.PrometheusTarget:
        namespace = manifests.prometheus_namespace(ctx)
        selector = ",".join(f"{k}={v}" for k, v in manifests.PROMETHEUS_LABELS.items())
        core = _core(api)
        try:
            if namespace:
                resp = core.list_namespaced_pod(
                    namespace, label_selector=selector, _preload_content=False
                )
            else:
                resp = core.list_pod_for_all_namespaces(
                    label_selector=selector, _preload_content=False
                )
        except Exception:
            return manifests.PrometheusTarget(namespace, 0)
        pods = [
            p
            for p in _json(resp).get("items") or []
            if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") in ("Running", "Pending")
        ]
        found = {p["metadata"]["namespace"] for p in pods}
        if namespace is None and len(found) == 1:
            namespace = found.pop()
        return manifests.PrometheusTarget(namespace, len(pods))


def apply_check_objects(api: ApiClient, objects: list[Obj]) -> str | None:
    """Create the check's objects in order; the first failure as a message, else None."""
    from kubernetes.client.exceptions import ApiException

    for obj in objects:
        try:
            run_kinds.create(api, obj)
        except ApiException as exc:
            if exc.status == 409:
                continue
            what = f"{obj['kind']} {obj['metadata']['name']}"
            return f"cannot create {what}: {describe_api_error(exc)}{_reason(exc)}"
        except Exception as exc:
            return f"cannot create {obj['kind']} {obj['metadata']['name']}: {exc}"
    return None


def _reason(exc: Any) -> str:
    try:
        message = json.loads(exc.body).get("message")
    except (TypeError, ValueError, AttributeError):
        return ""
    return f": {message}" if message else ""


@dataclass
class _Follow:
    """The waiting state of one check's Job."""

    check: PlannedCheck
    job_name: str
    pod: Obj | None = None
    job: Obj | None = None
    pod_deleted: bool = False
    job_deleted: bool = False
    unschedulable_since: float | None = None
    config_error_since: float | None = None
    unreachable_since: float | None = None
    last_error: str = ""
    told: set[str] = field(default_factory=set)


class JobExecutor:
    """Runs each check as a Job; see the module docstring for the lifecycle."""

    def __init__(
        self,
        *,
        api_unreachable_seconds: float = d.API_UNREACHABLE_SECONDS,
        unschedulable_grace_seconds: float = d.UNSCHEDULABLE_GRACE_SECONDS,
        cleanup_timeout_seconds: float = d.CLEANUP_TIMEOUT_SECONDS,
    ) -> None:
        self.api_unreachable_seconds = api_unreachable_seconds
        self.unschedulable_grace_seconds = unschedulable_grace_seconds
        self.cleanup_timeout_seconds = cleanup_timeout_seconds
        self._api: ApiClient | None = None
        self._setup = RunSetup()
        self._stopping = threading.Event()
        self._watches: set[Watch] = set()
        self._lock = threading.Lock()

    # ---- lifecycle ------------------------------------------------------------------
    def start(self, ctx: RunContext) -> None:
        """Create the run namespace (if absent) and the inputs ConfigMap."""
        self._api = api_client(ctx.kube)
        self._setup.start(self._api, ctx)

    def stop(self) -> None:
        """Close every watch stream; each ``run`` returns 'interrupted' at once."""
        self._stopping.set()
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            watch.close()

    def finish(self, ctx: RunContext) -> list[str]:
        """Delete everything of the run and wait for it, unless ``--no-cleanup``."""
        self.stop()
        return cleanup.finish_run(ctx, self.cleanup_timeout_seconds)

    def nodes(self, ctx: RunContext) -> list[Obj]:
        """The cluster's Node objects."""
        if self._api is None:
            raise RuntimeError("JobExecutor.nodes before start")
        return self._setup.nodes(self._api)

    # ---- one check --------------------------------------------------------------------
    def gpu_pool(self, ctx: RunContext) -> GpuPool:
        """The shared Lease and the cluster's live inventory of free GPUs."""
        return for_cluster(ctx)

    def run(self, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        """Run ``check`` as a Job and return its result; never raises for check failures."""
        if self._api is None:
            raise RuntimeError("JobExecutor.run before start")
        return self._run(self._api, check, ctx)

    def _run(self, api: ApiClient, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        start_ms = _now_ms()
        prometheus = self._setup.prometheus(api, ctx) if check.spec.queries_prometheus else None
        objects = manifests.check_objects(ctx, check, prometheus)
        failed = apply_check_objects(api, objects[:-1])
        if failed:
            return CheckResult.ended(
                check, Status.OTHER, failed, Detail.INTERNAL, start_ms=start_ms
            )
        job_name = names.check_name(ctx.run_id, check.name)
        events: queue.Queue[WatchEvent] = queue.Queue()
        watches = [
            Watch(
                "pod",
                _core(api).list_namespaced_pod,
                events,
                namespace=ctx.namespace,
                label_selector=f"job-name={job_name}",
            ),
            Watch(
                "job",
                _batch(api).list_namespaced_job,
                events,
                namespace=ctx.namespace,
                field_selector=f"metadata.name={job_name}",
            ),
        ]
        with self._lock:
            self._watches.update(watches)
        follow = _Follow(check, job_name)
        try:
            for watch in watches:
                watch.start()
            failed = apply_check_objects(api, objects[-1:])
            if failed:
                return CheckResult.ended(
                    check, Status.OTHER, failed, Detail.INTERNAL, start_ms=start_ms
                )
            result = self._follow(api, ctx, follow, events)
        finally:
            for watch in watches:
                watch.close()
            with self._lock:
                self._watches.difference_update(watches)
        if follow.pod is not None:  # what the check's own pod ran, by digest, before its workloads
            ran = ImageRun.of(follow.pod, VALIDATOR)
            result = result.model_copy(update={"images": [*ran, *result.images]})
        if result.start_ms >= result.stop_ms or result.start_ms < start_ms:
            # decided by the orchestrator: the check's span is from its Job's creation
            result = result.model_copy(update={"start_ms": start_ms, "stop_ms": _now_ms()})
        return result

    def _stopped(self, ctx: RunContext) -> bool:
        return self._stopping.is_set() or ctx.cancel.is_set()

    def _follow(
        self, api: ApiClient, ctx: RunContext, f: _Follow, events: queue.Queue[WatchEvent]
    ) -> CheckResult:
        deadline = time.monotonic() + f.check.timeout.total_seconds() + d.DEADLINE_SLACK_SECONDS
        while True:
            if self._stopped(ctx):
                return self._end(
                    f, Status.OTHER, "stopped before the check finished", Detail.INTERRUPTED
                )
            for event in drain(events, d.POLL_SECONDS):
                self._take(f, event)
            if self._stopped(ctx):
                continue
            verdict = self._decide(api, ctx, f, deadline)
            if verdict is not None:
                return verdict

    def _take(self, f: _Follow, event: WatchEvent) -> None:
        now = time.monotonic()
        if event.type == "UNREACHABLE":
            f.unreachable_since = f.unreachable_since or now
            f.last_error = event.error
            return
        f.unreachable_since = None
        if event.type in ("REACHABLE", "SYNCED"):
            return
        if event.type == "ERROR":
            f.last_error = event.error
            f.job_deleted = f.job_deleted  # a refused watch is decided below
            f.told.add("watch-error")
            return
        if event.source == "pod":
            if event.type == "DELETED":
                f.pod_deleted = not pod_status.terminated(event.obj)
                f.pod = event.obj if pod_status.terminated(event.obj) else f.pod
            else:
                f.pod, f.pod_deleted = event.obj, False
        elif event.type == "DELETED":
            f.job_deleted = True
        else:
            f.job = event.obj

    def _tell(self, ctx: RunContext, f: _Follow, key: str, message: str, node: str | None) -> None:
        if key not in f.told:
            f.told.add(key)
            ctx.events(
                Event(EventKind.CHECK_UPDATE, f.check.phase.value, f.check.name, message, node=node)
            )

    def _end(self, f: _Follow, status: Status, message: str, detail: Detail | None) -> CheckResult:
        node = pod_status.node_of(f.pod) if f.pod else None
        return CheckResult.ended(f.check, status, message, detail, node=node)

    def _decide(
        self, api: ApiClient, ctx: RunContext, f: _Follow, deadline: float
    ) -> CheckResult | None:
        now = time.monotonic()
        pod = f.pod
        if "watch-error" in f.told and "watch-error-done" not in f.told:
            return self._end(
                f, Status.OTHER, f"cannot watch the check's Job: {f.last_error}", Detail.INTERNAL
            )
        if pod is not None:
            node = pod_status.node_of(pod)
            if node:
                self._tell(ctx, f, "scheduled", f"scheduled on {node}", node)
            evicted = pod_status.evicted(pod)
            if evicted:
                return self._end(
                    f, Status.OTHER, f"the check pod was evicted: {evicted}", Detail.EVICTED
                )
            state = pod_status.terminated(pod)
            if state is not None:
                return self._finished(api, ctx, f, state)
            cs = pod_status.container_status(pod)
            if cs and (cs.get("state") or {}).get("running"):
                self._tell(ctx, f, "running", f"running on {node}", node)
        failure = outcome.job_failure(f.job) if f.job else None
        if failure and failure[0] == "DeadlineExceeded":
            return self._timed_out(f)
        if f.job_deleted or f.pod_deleted:
            return self._end(f, Status.OTHER, self._deleted_message(api, ctx, f), Detail.DELETED)
        if failure and pod is None:
            return self._end(
                f, Status.OTHER, f"the Job failed: {failure[0]}: {failure[1]}", Detail.CRASHED
            )
        if pod is not None:
            verdict = self._stuck(ctx, f, pod, now)
            if verdict is not None:
                return verdict
        if f.unreachable_since and now - f.unreachable_since >= self.api_unreachable_seconds:
            return self._end(
                f,
                Status.OTHER,
                f"lost contact with the API server for {int(now - f.unreachable_since)}s "
                f"(retried with backoff; last error: {f.last_error}); the check's outcome is "
                f"unknown and its Job {ctx.namespace}/{f.job_name} may still run",
                Detail.API_UNREACHABLE,
            )
        if now >= deadline:
            return self._end(
                f,
                Status.OTHER,
                f"timed out: no outcome within the check's timeout of "
                f"{int(f.check.timeout.total_seconds())}s",
                Detail.TIMEOUT,
            )
        return None

    def _stuck(self, ctx: RunContext, f: _Follow, pod: Obj, now: float) -> CheckResult | None:
        reason = pod_status.unschedulable(pod)
        if reason is None:
            f.unschedulable_since = None
        else:
            self._tell(ctx, f, "unschedulable", f"unschedulable: {reason}", None)
            f.unschedulable_since = f.unschedulable_since or now
            if now - f.unschedulable_since >= self.unschedulable_grace_seconds:
                return self._end(
                    f,
                    Status.OTHER,
                    f"the check pod cannot be scheduled: {reason}",
                    Detail.UNSCHEDULABLE,
                )
        waiting = pod_status.waiting(pod)
        if waiting is None:
            f.config_error_since = None
            return None
        why, message = waiting
        image = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("image")
        if why in pod_status.IMAGE_PULL_FIRST:
            self._tell(
                ctx,
                f,
                "pull",
                f"pulling {image} failed, retrying: {message}",
                pod_status.node_of(pod),
            )
        if why in pod_status.IMAGE_PULL_FINAL:
            return self._end(
                f,
                Status.OTHER,
                f"cannot pull the validator image {image}: {why}: {message}",
                Detail.IMAGE_PULL,
            )
        if why in pod_status.CONFIG_ERRORS:
            f.config_error_since = f.config_error_since or now
            if now - f.config_error_since >= d.CONFIG_ERROR_GRACE_SECONDS:
                return self._end(
                    f,
                    Status.OTHER,
                    f"the check container cannot start: {why}: {message}",
                    Detail.CRASHED,
                )
        return None

    def _deleted_message(self, api: ApiClient, ctx: RunContext, f: _Follow) -> str:
        from kubernetes.client.exceptions import ApiException

        try:
            ns = _json(_core(api).read_namespace(ctx.namespace, _preload_content=False))
            gone = (ns.get("status") or {}).get("phase") == "Terminating"
        except ApiException as exc:
            gone = exc.status == 404
        except Exception:
            gone = False
        if gone:
            return f"the run namespace {ctx.namespace} was deleted from outside the run"
        if f.job_deleted:
            return f"the check's Job {ctx.namespace}/{f.job_name} was deleted from outside the run"
        return f"the check pod of Job {f.job_name} was deleted before it finished"

    def _timed_out(self, f: _Follow) -> CheckResult:
        """The Job's activeDeadlineSeconds ran out before the check finished."""
        seconds = int(f.check.timeout.total_seconds())
        return self._end(
            f,
            Status.OTHER,
            f"timed out: the check did not finish within its timeout of {seconds}s "
            "(the Job's activeDeadlineSeconds)",
            Detail.TIMEOUT,
        )

    def _finished(self, api: ApiClient, ctx: RunContext, f: _Follow, state: Obj) -> CheckResult:
        """The container ended: read the result object (with retries) and the logs."""
        from kubernetes.client.exceptions import ApiException

        code = state.get("exitCode")
        if code not in STATUS_BY_EXIT and f.job is not None:
            self._refresh_job(api, ctx, f)
            failure = outcome.job_failure(f.job) if f.job else None
            if failure and failure[0] == "DeadlineExceeded":
                return self._timed_out(f)
        configmap: Obj | None = None
        name = names.result_name(ctx.run_id, f.check.name)
        give_up = time.monotonic() + self.api_unreachable_seconds
        while True:
            try:
                configmap = _json(
                    _core(api).read_namespaced_config_map(
                        name, ctx.namespace, _preload_content=False
                    )
                )
                break
            except ApiException as exc:
                if exc.status == 404:
                    break
                error = describe_api_error(exc)
            except Exception as exc:
                error = str(exc)
            if time.monotonic() > give_up or self._stopped(ctx):
                return self._end(
                    f,
                    Status.OTHER,
                    f"cannot read the check's result: {error}",
                    Detail.API_UNREACHABLE,
                )
            time.sleep(d.API_BACKOFF_MAX / 5)
        memory = f.check.spec.resources.memory
        result = outcome.from_termination(f.check.name, state, configmap, memory)
        pod = f.pod or {}
        return result.model_copy(
            update={"node": pod_status.node_of(pod), "stdout": self._logs(api, ctx, pod)}
        )

    def _refresh_job(self, api: ApiClient, ctx: RunContext, f: _Follow) -> None:
        try:
            f.job = _json(
                _batch(api).read_namespaced_job(f.job_name, ctx.namespace, _preload_content=False)
            )
        except Exception:
            return

    def _logs(self, api: ApiClient, ctx: RunContext, pod: Obj) -> list[str]:
        """The pod's log tail: diagnostics only, never the verdict."""
        name = (pod.get("metadata") or {}).get("name")
        if not name:
            return []
        try:
            text = read_pod_log(
                _core(api), name, ctx.namespace, tail_lines=1000, _request_timeout=10
            )
        except Exception:
            return []
        return bounded_lines(text)
