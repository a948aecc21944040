"""``LocalExecutor``: the same checks as subprocesses on the invoking machine.

For development and for clusters that cannot pull the validator image. The run
creates exactly the objects of the Job path except the Job itself: namespace,
inputs, and per check its ServiceAccount, RBAC, result ConfigMap and workload
namespace. Each subprocess authenticates with a TokenRequest token of its
check's own ServiceAccount (never the user's credentials), so RBAC behaves as in
the cluster, and hands its result back through the same result ConfigMap.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from aicr import defaults as d
from aicr.ctrf import Status
from aicr.kube import names
from aicr.kube.target import api_client, describe_api_error
from aicr.plan import PlannedCheck
from aicr.result import CheckResult, Detail, bounded_lines
from aicr.runner import cleanup, manifests, outcome
from aicr.runner.context import RunContext
from aicr.runner.events import Event, EventKind
from aicr.runner.gpu_pool import GpuPool, for_cluster
from aicr.runner.job import RunSetup, apply_check_objects

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

# Environment a check subprocess must not inherit: it gets its own credentials.
SCRUBBED_ENV = ("KUBECONFIG", "AICR_CONTEXT", d.RESULT_CONFIGMAP_ENV, d.RUN_DIR_ENV)


def token_kubeconfig(api: ApiClient, token: str) -> dict[str, Any]:
    """A kubeconfig for the same API server that authenticates only with ``token``."""
    conf = api.configuration
    cluster: dict[str, Any] = {"server": conf.host}
    ca_data = getattr(conf, "ca_cert_data", None)  # newer clients may keep the CA in memory
    if conf.ssl_ca_cert:
        cluster["certificate-authority"] = str(conf.ssl_ca_cert)
    elif ca_data:
        raw = ca_data.encode() if isinstance(ca_data, str) else bytes(ca_data)
        cluster["certificate-authority-data"] = base64.b64encode(raw).decode()
    if not conf.verify_ssl:
        cluster["insecure-skip-tls-verify"] = True
    if getattr(conf, "tls_server_name", None):
        cluster["tls-server-name"] = conf.tls_server_name
    if conf.proxy:
        cluster["proxy-url"] = conf.proxy
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": "check", "user": {"token": token}}],
        "contexts": [{"name": "check", "context": {"cluster": "cluster", "user": "check"}}],
        "current-context": "check",
    }


class LocalExecutor:
    """Runs each check as ``aicr check run NAME`` in a local subprocess."""

    def __init__(self, *, cleanup_timeout_seconds: float = d.CLEANUP_TIMEOUT_SECONDS) -> None:
        self.cleanup_timeout_seconds = cleanup_timeout_seconds
        self._api: ApiClient | None = None
        self._setup = RunSetup()
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._stopping = threading.Event()

    @property
    def _root(self) -> Path:
        assert self._dir is not None
        return Path(self._dir.name)

    def start(self, ctx: RunContext) -> None:
        """Run namespace and inputs in the cluster, and the same inputs as local files."""
        self._api = api_client(ctx.kube)
        self._setup.start(self._api, ctx)
        self._dir = tempfile.TemporaryDirectory(prefix=f"aicr-{ctx.run_id}-")
        run_dir = self._root / "run"
        run_dir.mkdir()
        for key, value in manifests.inputs_configmap(ctx)["data"].items():
            (run_dir / key).write_text(value, encoding="utf-8")

    def nodes(self, ctx: RunContext) -> list[dict[str, Any]]:
        """The cluster's Node objects."""
        if self._api is None:
            raise RuntimeError("LocalExecutor.nodes before start")
        return self._setup.nodes(self._api)

    def stop(self) -> None:
        """Running subprocesses are terminated; ``run`` returns 'interrupted'."""
        self._stopping.set()

    def finish(self, ctx: RunContext) -> list[str]:
        """Delete the run's objects (unless --no-cleanup) and the local files."""
        self.stop()
        if self._dir is not None:
            self._dir.cleanup()
        return cleanup.finish_run(ctx, self.cleanup_timeout_seconds)

    def _token(self, api: ApiClient, ctx: RunContext, check: PlannedCheck) -> str:
        from kubernetes import client

        seconds = max(d.TOKEN_MIN_SECONDS, int(check.timeout.total_seconds()) + 300)
        core: Any = client.CoreV1Api(api)
        response = core.create_namespaced_service_account_token(
            names.check_name(ctx.run_id, check.name),
            ctx.namespace,
            {"spec": {"expirationSeconds": seconds}},
        )
        return str(response.status.token)

    def gpu_pool(self, ctx: RunContext) -> GpuPool:
        """The shared Lease and the cluster's live inventory of free GPUs."""
        return for_cluster(ctx)

    def run(self, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        """Create the check's identity and RBAC, run the subprocess, read its result."""
        if self._api is None:
            raise RuntimeError("LocalExecutor.run before start")
        return self._run(self._api, check, ctx)

    def _run(self, api: ApiClient, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        from kubernetes.client.exceptions import ApiException

        start_ms = int(time.time() * 1000)
        objects = manifests.check_objects(ctx, check)[:-1]  # everything but the Job
        failed = apply_check_objects(api, objects)
        if failed:
            return CheckResult.ended(check, Status.OTHER, failed, Detail.INTERNAL)
        try:
            token = self._token(api, ctx, check)
        except ApiException as exc:
            return CheckResult.ended(
                check,
                Status.OTHER,
                f"cannot get a token for the check: {describe_api_error(exc)}",
                Detail.INTERNAL,
            )
        work = self._root / check.name
        work.mkdir()
        kubeconfig = work / "kubeconfig"
        kubeconfig.touch(0o600)
        kubeconfig.write_text(yaml.safe_dump(token_kubeconfig(api, token)), encoding="utf-8")
        termination = work / "termination-log"
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        env.update(
            {
                "KUBECONFIG": str(kubeconfig),
                d.TERMINATION_LOG_ENV: str(termination),
                d.RESULT_CONFIGMAP_ENV: names.result_name(ctx.run_id, check.name),
                d.CHECK_TIMEOUT_ENV: str(int(check.timeout.total_seconds())),
            }
        )
        log = work / "output.log"
        argv = [
            sys.executable,
            "-m",
            "aicr.cli.main",
            "check",
            "run",
            check.name,
            "--run-dir",
            str(self._root / "run"),
        ]
        ctx.events(Event(EventKind.CHECK_UPDATE, check.phase.value, check.name, "running locally"))
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            ended = self._wait(proc, ctx, check)
        if ended is not None:
            return ended.model_copy(update={"start_ms": start_ms})
        state = {
            "exitCode": proc.returncode,
            "message": termination.read_text(encoding="utf-8") if termination.exists() else "",
        }
        result = outcome.from_termination(check.name, state, self._result(api, ctx, check))
        stdout = bounded_lines(log.read_text(encoding="utf-8", errors="replace"))
        return result.model_copy(update={"stdout": stdout})

    def _wait(
        self, proc: subprocess.Popen[bytes], ctx: RunContext, check: PlannedCheck
    ) -> CheckResult | None:
        deadline = time.monotonic() + check.timeout.total_seconds()
        while proc.poll() is None:
            if self._stopping.is_set() or ctx.cancel.is_set():
                _terminate(proc)
                return CheckResult.ended(
                    check, Status.OTHER, "stopped before the check finished", Detail.INTERRUPTED
                )
            if time.monotonic() >= deadline:
                _terminate(proc)
                return CheckResult.ended(
                    check,
                    Status.OTHER,
                    "timed out: the check did not finish within its timeout "
                    f"of {int(check.timeout.total_seconds())}s",
                    Detail.TIMEOUT,
                )
            time.sleep(d.POLL_SECONDS / 2)
        return None

    def _result(
        self, api: ApiClient, ctx: RunContext, check: PlannedCheck
    ) -> dict[str, Any] | None:
        import json

        from kubernetes import client

        core: Any = client.CoreV1Api(api)
        try:
            response = core.read_namespaced_config_map(
                names.result_name(ctx.run_id, check.name), ctx.namespace, _preload_content=False
            )
        except Exception:
            return None
        data: dict[str, Any] = json.loads(response.data)
        return data


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the check's process group, SIGKILL after the pods' grace period."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=d.TERMINATION_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
