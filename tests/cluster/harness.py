"""`SimCluster`: what a cluster test gets from the `sim_cluster` fixture.

A thin test-side face over hack/sim's `Sim`: API clients, waiting, run-unique
namespaces, GPU modes, scenarios, faults and API-server restarts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from kubernetes import client
from kubernetes.client.rest import ApiException
from simcluster.cluster import kube
from simcluster.cluster.sim import Sim
from simcluster.components import install as components
from simcluster.components import registry as component_registry
from simcluster.faults import pods as pod_faults
from simcluster.faults import registry as faults
from simcluster.nodes.layout import GPU_NODES, LAYOUT
from simcluster.scenarios import contents as scenario
from simcluster.scenarios import named as named_scenarios

T = TypeVar("T")
SIM_CLI = Path(__file__).resolve().parents[2] / "hack" / "sim" / "sim"
TEST_NS_LABEL = "sim.aicr.dev/test"
VALIDATOR_IMAGE = "ghcr.io/aicr-dev/aicr-validator:v0.0.0-sim"


class SimCluster:
    """A running simulated cluster, as seen by tests."""

    nodes = tuple(n.name for n in LAYOUT)
    gpu_nodes = GPU_NODES
    validator_image = VALIDATOR_IMAGE

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.kubeconfig: Path = sim.kubeconfig
        self.run_id = uuid.uuid4().hex[:6]
        self._dirty = False
        self._count = 0

    # ---- clients ----------------------------------------------------------------------
    def api(self) -> client.ApiClient:
        """A new ApiClient with cluster-admin rights (from the admin kubeconfig)."""
        return kube.api_client(self.kubeconfig)

    def core(self) -> client.CoreV1Api:
        """CoreV1Api on a new admin client."""
        return client.CoreV1Api(self.api())

    def api_as(self, token: str) -> client.ApiClient:
        """A client that authenticates with a bearer token (e.g. a ServiceAccount's)."""
        cfg = client.Configuration()
        cfg.host = self.sim.server
        cfg.ssl_ca_cert = str(self.sim.pki_dir / "ca.crt")
        cfg.api_key = {"authorization": f"Bearer {token}"}
        return client.ApiClient(cfg)

    def token_for(self, namespace: str, service_account: str, seconds: int = 600) -> str:
        """A short-lived token of a ServiceAccount from the TokenRequest API."""
        req = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
        )
        resp = self.core().create_namespaced_service_account_token(service_account, namespace, req)
        return str(resp.status.token)

    # ---- waiting ----------------------------------------------------------------------
    def wait_gpus_idle(self, timeout: float = 120) -> None:
        """Wait until no pod holds a device-plugin GPU. Earlier modules delete their
        namespaces without waiting, and a pod still terminating there holds its GPUs
        (the scheduler and the checks count it until it is gone)."""
        core = self.core()

        def idle() -> bool:
            for pod in core.list_pod_for_all_namespaces().items:
                if pod.status.phase in ("Succeeded", "Failed"):
                    continue
                for c in pod.spec.containers:
                    asked = {**((c.resources and c.resources.requests) or {}),
                             **((c.resources and c.resources.limits) or {})}  # fmt: skip
                    if asked.get("nvidia.com/gpu", "0") != "0":
                        return False
            return True

        self.wait_for(idle, timeout, message="no pod holding a GPU")

    @staticmethod
    def wait_for(
        predicate: Callable[[], T | None],
        timeout: float = 30.0,
        interval: float = 0.2,
        message: str = "condition",
    ) -> T:
        """Poll `predicate` until it returns a truthy value; return it, or fail on timeout.

        API errors while polling count as "not yet" (e.g. while the API server restarts).
        """
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            try:
                value = predicate()
                if value:
                    return value
                last = value
            except (ApiException, OSError) as e:
                last = e
            except Exception as e:  # urllib3 errors while the API server is down
                if type(e).__module__.startswith("urllib3"):
                    last = e
                else:
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout}s waiting for {message}: {last}")
            time.sleep(interval)

    def pod(self, namespace: str, name: str) -> dict[str, Any]:
        """A pod as a plain dict in the API's JSON shape."""
        api = self.api()
        return kube.to_dict(api, client.CoreV1Api(api).read_namespaced_pod(name, namespace))

    def wait_for_pod(
        self,
        namespace: str,
        name: str,
        predicate: Callable[[dict[str, Any]], bool],
        timeout: float = 30.0,
        message: str = "",
    ) -> dict[str, Any]:
        """Wait until `predicate(pod)` holds; return the pod.

        On timeout the error shows where the pod got to (node, phase, conditions),
        so a failure says whether the scheduler or the runtime never acted.
        """
        try:
            return self.wait_for(
                lambda: (p := self.pod(namespace, name)) and predicate(p) and p,
                timeout,
                message=message or f"pod {namespace}/{name}",
            )
        except TimeoutError as exc:
            now = self._pod_summary(namespace, name)
            raise TimeoutError(f"{exc}; the pod now: {now}") from None

    def _pod_summary(self, namespace: str, name: str) -> str:
        try:
            p = self.pod(namespace, name)
        except Exception as exc:  # the API server may be the reason
            return f"unreadable ({type(exc).__name__}: {exc})"
        status = p.get("status") or {}
        conditions = [
            f"{c['type']}={c['status']}" + (f" ({c['reason']}: {c.get('message', '')})"
                                            if c.get("reason") else "")
            for c in status.get("conditions") or []
        ]  # fmt: skip
        runtime = self.sim.logs / "runtime.log"
        lines = runtime.read_text(errors="replace").splitlines() if runtime.exists() else []
        about = [line for line in lines if f"{namespace}/{name}" in line][-5:]
        return (
            f"node={p['spec'].get('nodeName')} phase={status.get('phase')} "
            f"conditions={conditions} containerStatuses={status.get('containerStatuses')}; "
            f"runtime log about it: {about}; runtime log tail: {lines[-5:]}"
        )

    def wait_for_phase(
        self, namespace: str, name: str, *phases: str, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Wait until the pod's phase is one of `phases`."""
        return self.wait_for_pod(
            namespace,
            name,
            lambda p: p.get("status", {}).get("phase") in phases,
            timeout,
            f"pod {namespace}/{name} phase in {phases}",
        )

    # ---- namespaces -------------------------------------------------------------------
    def fresh_namespace(self, prefix: str = "t", labels: dict[str, str] | None = None) -> str:
        """Create a run-unique namespace (labelled for cleanup) and return its name."""
        self._count += 1
        name = f"{prefix}-{self.run_id}-{self._count}"
        meta = client.V1ObjectMeta(name=name, labels={TEST_NS_LABEL: "true", **(labels or {})})
        self.core().create_namespace(client.V1Namespace(metadata=meta))
        self.wait_for(
            lambda: self.core().read_namespaced_service_account("default", name),
            message=f"default ServiceAccount in {name}",
        )
        return name

    @contextmanager
    def namespace(self, prefix: str = "t", labels: dict[str, str] | None = None) -> Iterator[str]:
        """A fresh namespace for the `with` block, deleted (not awaited) after it."""
        name = self.fresh_namespace(prefix, labels)
        try:
            yield name
        finally:
            self.delete_namespace(name, wait=False)

    def delete_namespace(self, name: str, wait: bool = True, timeout: float = 60.0) -> None:
        """Delete a namespace; with `wait`, until it is gone."""
        core = self.core()
        kube.ignore_not_found(lambda: core.delete_namespace(name))
        if wait:
            self.wait_for(
                lambda: kube.ignore_not_found(lambda: core.read_namespace(name)) is None,
                timeout,
                message=f"namespace {name} to be deleted",
            )

    def delete_test_namespaces(self) -> None:
        """Delete every namespace tests created (by label), without waiting."""
        core = self.core()
        for ns in core.list_namespace(label_selector=f"{TEST_NS_LABEL}=true").items:
            kube.ignore_not_found(lambda n=ns.metadata.name: core.delete_namespace(n))

    # ---- scenarios --------------------------------------------------------------------
    def apply(self, manifests: Any, namespace: str | None = None) -> list[dict[str, Any]]:
        """Server-side apply YAML text, a Path, a dict or a list of those.

        Applying a Node (e.g. extra labels or taints) marks the cluster for `reset()`.
        """
        docs = scenario.load_manifests(manifests)
        if any(d.get("kind") == "Node" for d in docs):
            self._dirty = True
        return scenario.apply(self.sim, docs, namespace)

    def load_scenario(self, name: str) -> None:
        """Load a named scenario (hack/sim/scenarios) and wait until it is ready."""
        named_scenarios.run(self.sim, named_scenarios.load(name))

    # ---- components -------------------------------------------------------------------
    def apply_gpu_sharing(self, manifests: Any) -> None:
        """Apply a GPU Operator sharing config (ClusterPolicy, its ConfigMap) and let the GPU
        model advertise it (simcluster.gpu.sharing); `reset()` puts whole GPUs back."""
        self._dirty = True
        self.apply(manifests)
        scenario.apply_sharing(self.sim)

    def start_components(self, spec: str) -> list[str]:
        """Install the components `spec` names (and what they need); return those started now."""
        running = set(components.journal(self.sim))
        wanted = [c for c in component_registry.resolve(spec) if c.name not in running]
        if wanted:
            try:
                components.install(self.sim, wanted)
            except BaseException:
                # What this call applied must not outlive it: a component left half
                # installed would sit in the journal of every later module's cluster.
                applied = set(components.journal(self.sim))
                self.stop_components([c.name for c in wanted if c.name in applied])
                raise
        return [c.name for c in wanted]

    def stop_components(self, names: list[str]) -> None:
        """Remove components installed by `start_components`, newest first."""
        components.remove(self.sim, list(reversed(names)))

    def http_get(
        self, url: str, timeout: float = 10.0, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """GET `url` (with `headers`) from a process inside the cluster's network namespace.

        Pod and Service addresses exist only there, and the test process's own
        network guard allows loopback only, so the request runs under
        `hack/sim/sim exec`. Returns (status, body); status 0 with the error as body when it fails.
        """
        script = (
            "import json, sys, urllib.request, urllib.error\n"
            "o = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
            "q = urllib.request.Request(sys.argv[1], headers=json.loads(sys.argv[3]))\n"
            "try:\n r = o.open(q, timeout=float(sys.argv[2]))\n"
            " c, b = r.status, r.read()\n"
            "except urllib.error.HTTPError as e:\n c, b = e.code, e.read()\n"
            "except OSError as e:\n c, b = 0, str(e).encode()\n"
            "sys.stdout.write(f'{c}\\n'); sys.stdout.flush(); sys.stdout.buffer.write(b)\n"
        )
        proc = subprocess.run(
            [str(SIM_CLI), "exec", "--", sys.executable, "-c", script, url, str(timeout),
             json.dumps(headers or {})],
            env={**os.environ, "AICR_SIM_DIR": str(self.sim.dir)}, capture_output=True,
            timeout=timeout + 30, check=True,
        )  # fmt: skip
        status, _, body = proc.stdout.decode(errors="replace").partition("\n")
        return int(status), body

    def validate_config(self) -> dict[str, Any]:
        """The ValidateConfig `hack/sim/sim config` prints (the components' addresses)."""
        return components.validate_config(self.sim)

    def set_mode(self, mode: str) -> None:
        """GPU allocation mode: "device-plugin" (default), "dra" or "dual" (broken)."""
        self._dirty = True
        scenario.set_mode(self.sim, mode)  # type: ignore[arg-type]

    @property
    def mode(self) -> str:
        """The current GPU allocation mode."""
        return scenario.current_mode(self.sim)

    def set_node_images(self, node: str, images: list[str], size_bytes: int = 500_000_000) -> None:
        """Set a node's status.images (image-locality scoring)."""
        self._dirty = True
        scenario.set_node_images(self.sim, node, images, size_bytes)

    def inject_fault(
        self,
        fault: str,
        *,
        node: str | None = None,
        namespace: str | None = None,
        pod_name_prefix: str | None = None,
        job_name: str | None = None,
    ) -> None:
        """Make new matching pods show `fault` (image-pull|crash|oom|never-ready|evict).

        For pods the test cannot annotate (created by the product's Jobs). Pods the
        test creates itself can carry the annotation `sim.aicr.dev/fault` instead.
        """
        self._dirty = True
        pod_faults.add_rule(
            self.sim.dir,
            fault,  # type: ignore[arg-type]
            node=node,
            namespace=namespace,
            pod_name_prefix=pod_name_prefix,
            job_name=job_name,
        )

    def clear_faults(self) -> None:
        """Remove every injected fault rule."""
        pod_faults.clear_rules(self.sim.dir)

    def fault(self, name: str, node: str | None = None) -> list[str | None]:
        """Apply a fault of the registry, as `hack/sim/sim fault NAME [NODE]` does."""
        self._dirty = True
        return faults.apply(self.sim, name, node)

    def heal(self, node: str | None = None) -> list[dict[str, Any]]:
        """Heal applied faults, as `hack/sim/sim heal [NODE]` does."""
        return faults.heal(self.sim, node)

    def stop_apiserver(self) -> None:
        """Stop the API server (clients get connection refused): the `apiserver-down` fault."""
        self.fault("apiserver-down")

    def start_apiserver(self) -> None:
        """Start the API server again and wait until it is ready."""
        faults.heal(self.sim, fault="apiserver-down")

    def reset(self) -> None:
        """Back to the initial state: faults healed and cleared, nodes and mode reset."""
        self.sim.start_apiserver()
        faults.heal(self.sim)
        self.clear_faults()
        scenario.reset_nodes(self.sim)
        self._dirty = False

    def reset_if_dirty(self) -> None:
        """`reset()` only when the test changed cluster-wide state through this object."""
        if self._dirty:
            self.reset()
