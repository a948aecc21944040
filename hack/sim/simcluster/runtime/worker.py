"""One pod's life under the process runtime: the part a kubelet plays.

Containers of the images the host plays run as local processes (see `enter`);
containers of other images in a runtime-owned pod are only shown as running.
Each pod but a hostNetwork one gets a sandbox first: a network namespace of its
own with its pod IP on the cluster's bridge (`simcluster.net.sandbox`). Faults
replace the process with the status a real node would report.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from simcluster.cluster import kube, paths, processes
from simcluster.faults import pods as pod_faults
from simcluster.gpu import devices, dra_sharing, modes
from simcluster.gpu.devices import DevicePlugin
from simcluster.gpu.model import (
    container_gpus,
    node_faults,
    node_profile,
    run_as_user,
    runs_smi,
    smi_argv,
    write_tools,
)
from simcluster.gpu.nccl import IMAGE_DIRS, IMAGE_LD_LIBRARY_PATH, image_version
from simcluster.gpu.smi import gpu_uuid, mig_uuid
from simcluster.net import sandbox as pod_sandbox
from simcluster.net.addresses import GATEWAY
from simcluster.runtime import gvisor, handlers, images, pod_status, probes
from simcluster.runtime.logs import LogWriter, now_rfc3339nano, tail_text
from simcluster.runtime.ownership import (
    NCCL_TESTS_REPO,
    host_plays,
    image_repo_name,
)
from simcluster.runtime.pod_files import PodFiles
from simcluster.runtime.volumes import PodMaterialiser, VolumeError, expand

log = logging.getLogger("runtime")
BACKOFF_START = 10.0
CONFIG_RETRY_SECONDS = 1.0  # how often a container config error is retried
VOLUME_SYNC_SECONDS = 3.0  # ConfigMap/Secret volume refresh (a kubelet: about a minute)
BACKOFF_MAX = 300.0
EVICTION_MESSAGE = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. "
)


@dataclass
class RuntimeContext:
    """What every pod worker shares: API access and where things are."""

    api: client.ApiClient
    sim_dir: Path
    apiserver_port: int
    aicr_bin_dir: str | None
    python: str
    cluster_ns: str  # the cluster's network namespace (readlink form): pod sandboxes go there
    workers: dict[str, PodWorker] = field(default_factory=dict)
    pod_ips: pod_sandbox.AddressPool = field(default_factory=pod_sandbox.AddressPool)
    devices: DevicePlugin = field(default_factory=DevicePlugin)
    finished: set[str] = field(default_factory=set)  # uids already taken on

    @property
    def core(self) -> client.CoreV1Api:
        """Core API of the admin client."""
        return client.CoreV1Api(self.api)

    @property
    def pods_dir(self) -> Path:
        """Folder of all pod folders."""
        return self.sim_dir / "pods"


class PodWorker(threading.Thread):
    """Plays one pod from start to deletion."""

    def __init__(self, ctx: RuntimeContext, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        super().__init__(daemon=True, name=f"pod-{meta['namespace']}/{meta['name']}")
        self.ctx = ctx
        self.pod = pod
        self.ns, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        self.files = PodFiles.for_pod(ctx.pods_dir, self.ns, self.name, self.uid)
        self.deleting = threading.Event()
        self.lock = threading.Lock()
        self.phase = "Pending"
        self.reason: str | None = None
        self.message: str | None = None
        self.extra_conditions: list[dict[str, Any]] = []
        self.statuses = {c["name"]: pod_status.base_status(c) for c in pod["spec"]["containers"]}
        self.init_statuses = {
            c["name"]: pod_status.base_status(c) for c in pod["spec"].get("initContainers") or []
        }
        self.initialized = not self.init_statuses
        self.handler = handlers.DEFAULT  # of the pod's RuntimeClass, read when it starts
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.start_time = now_rfc3339nano()[:19] + "Z"
        self.host_network = bool(pod["spec"].get("hostNetwork"))
        self.sandbox: pod_sandbox.Sandbox | None = None
        self.pod_ip: str | None = pod_status.HOST_IP if self.host_network else None

    # ---- status --------------------------------------------------------------
    def publish(self) -> None:
        """Write our view of the pod into pods/status (retrying on conflicts)."""
        for _ in range(20):
            try:
                cur = self.ctx.api.sanitize_for_serialization(
                    self.ctx.core.read_namespaced_pod_status(self.name, self.ns)
                )
                if cur["metadata"]["uid"] != self.uid:
                    return
                with self.lock:
                    cur["status"] = self._status(cur.get("status") or {})
                self.ctx.core.replace_namespaced_pod_status(self.name, self.ns, cur)
                return
            except ApiException as e:
                if e.status == 404:
                    return
                if e.status != 409:
                    log.warning("%s/%s: status update failed: %s", self.ns, self.name, e.reason)
                time.sleep(0.2)
            except Exception as e:  # apiserver down: retry until back
                log.warning("%s/%s: status update failed: %s", self.ns, self.name, e)
                time.sleep(1)

    def _status(self, old: dict[str, Any]) -> dict[str, Any]:
        scheduled = next(
            (c for c in old.get("conditions") or [] if c.get("type") == "PodScheduled"), None
        )
        cs = list(self.statuses.values())
        ready = self.phase == "Running" and all(c["ready"] for c in cs)
        unready = [c["name"] for c in cs if not c["ready"]]
        status: dict[str, Any] = {
            "phase": self.phase,
            "conditions": pod_status.conditions(
                self.phase, self.initialized, ready, unready, scheduled
            )
            + self.extra_conditions,
            "hostIP": pod_status.HOST_IP,
            "hostIPs": [{"ip": pod_status.HOST_IP}],
            "startTime": self.start_time,
            "containerStatuses": cs,
            "qosClass": old.get("qosClass"),
        }
        # Not the kubelet's to change: the resourceclaim controller's names of generated claims.
        for owned_elsewhere in ("resourceClaimStatuses", "extendedResourceClaimStatus"):
            if owned_elsewhere in old:
                status[owned_elsewhere] = old[owned_elsewhere]
        if self.pod_ip:  # once the sandbox is up, as a kubelet reports it
            status["podIP"], status["podIPs"] = self.pod_ip, [{"ip": self.pod_ip}]
        if self.init_statuses:
            status["initContainerStatuses"] = list(self.init_statuses.values())
        if self.reason:
            status["reason"] = self.reason
        if self.message:
            status["message"] = self.message
        return status

    # ---- lifecycle -------------------------------------------------------------
    def run(self) -> None:
        """Play the pod; on deletion stop its processes and remove it."""
        try:
            self._run()
        except Exception:
            log.error("%s/%s: runtime error\n%s", self.ns, self.name, traceback.format_exc())
        self.deleting.wait()
        self._finish_deletion()

    def request_delete(self) -> None:
        """The pod got a deletionTimestamp: stop its processes as a kubelet would."""
        if self.deleting.is_set():
            return
        self.deleting.set()
        threading.Thread(target=self._stop_processes, daemon=True).start()

    def _stop_processes(self) -> None:
        """Stop every container at once within the pod's grace period, as a kubelet does."""
        grace = self._grace()
        with self.lock:  # a container starting now sees `deleting` and never starts
            procs = list(self.procs.values())
        _kill_groups(procs, grace)

    def _grace(self) -> float:
        try:
            pod = self.ctx.core.read_namespaced_pod(self.name, self.ns)
            g = pod.metadata.deletion_grace_period_seconds
        except Exception:
            g = None
        return float(
            g if g is not None else self.pod["spec"].get("terminationGracePeriodSeconds", 30)
        )

    def _finish_deletion(self) -> None:
        self._stop_processes()
        self.stop_sandbox()
        try:
            self.ctx.core.delete_namespaced_pod(
                self.name,
                self.ns,
                body=client.V1DeleteOptions(
                    grace_period_seconds=0, preconditions=client.V1Preconditions(uid=self.uid)
                ),
            )
        except ApiException as e:
            if e.status not in (404, 409):
                log.warning("%s/%s: final delete failed: %s", self.ns, self.name, e.reason)
        self.ctx.workers.pop(self.uid, None)

    def _run(self) -> None:
        fault = pod_faults.fault_for(self.ctx.sim_dir, self.pod)
        if fault:
            log.info("%s/%s: playing fault %s", self.ns, self.name, fault)
        if fault == "image-pull":
            self._image_pull_fault()
            return
        self.handler = handlers.of_pod(self.ctx.api, self.pod)
        if not handlers.available(self.ctx.api, self.handler, self._node(), paths.runsc_bin()):
            self._stuck_creating(
                handlers.SANDBOX_FAILED, handlers.not_configured_message(self.handler)
            )
            return
        if self._claims_unprepared():
            return
        if not self.host_network and not self._start_sandbox():
            return
        assert self.pod_ip is not None
        mat = PodMaterialiser(self.ctx.core, self.pod, self.files, self.pod_ip)
        shown = None
        while True:
            try:
                self.volumes = mat.materialise()
                break
            except (VolumeError, ApiException) as e:
                msg = str(e) if isinstance(e, VolumeError) else f"{e.status} {e.reason}"
                if msg != shown:
                    shown = msg
                    for cs in self.statuses.values():
                        pod_status.waiting(cs, "CreateContainerConfigError", msg)
                    self.publish()
            # The kubelet retries too: a source may appear later (kube-root-ca.crt is
            # published into a new namespace a moment after the namespace exists).
            if self.deleting.wait(CONFIG_RETRY_SECONDS):
                return
        self.mat = mat
        threading.Thread(target=self._sync_volumes, daemon=True).start()
        # Init containers, one after another.
        for c in self.pod["spec"].get("initContainers") or []:
            if self.deleting.is_set():
                return
            if c.get("restartPolicy") == "Always":  # sidecar: shown as running
                pod_status.running(self.init_statuses[c["name"]], self._cid(c, 0), True)
                continue
            ok = self._container_loop(c, self.init_statuses[c["name"]], init=True, fault=None)
            if not ok:
                self.phase = "Failed"
                self.publish()
                return
        self.initialized = True
        if fault == "evict":
            self._evict_fault()
            return
        self.phase = "Running"
        threads = [
            threading.Thread(
                target=self._container_loop,
                args=(c, self.statuses[c["name"]], False, fault),
                daemon=True,
            )
            for c in self.pod["spec"]["containers"]
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.deleting.is_set():
            return
        codes = [cs["state"].get("terminated", {}).get("exitCode") for cs in self.statuses.values()]
        if all(c is not None for c in codes):
            self.phase = "Succeeded" if all(c == 0 for c in codes) else "Failed"
            self.publish()

    # ---- sandbox -------------------------------------------------------------
    def _start_sandbox(self) -> bool:
        """The pod's own network namespace with its IP; False (and the reason shown) if not."""
        ip = self.ctx.pod_ips.take()
        try:
            self.sandbox = pod_sandbox.setup(f"{self.name}/sandbox", ip, self.ctx.cluster_ns)
        except OSError as e:
            self.ctx.pod_ips.release(ip)
            self._stuck_creating("FailedCreatePodSandBox", f"Failed to create pod sandbox: {e}")
            return False
        self.files.root.mkdir(parents=True, exist_ok=True)
        self.files.sandbox_record().write_text(json.dumps(self.sandbox.holder.to_json()))
        self.pod_ip = ip
        return True

    def stop_sandbox(self) -> None:
        """End the pod's network namespace and free its IP (after its processes are gone)."""
        if self.sandbox is None:
            return
        pod_sandbox.teardown(self.sandbox.holder)
        self.files.sandbox_record().unlink(missing_ok=True)
        self.ctx.pod_ips.release(self.sandbox.ip)
        self.sandbox = None

    def _sync_volumes(self) -> None:
        """Keep ConfigMap and Secret volumes current while the pod lives (the kubelet's sync)."""
        while not self.deleting.wait(VOLUME_SYNC_SECONDS):
            try:
                if self.mat.refresh(self.volumes):
                    log.info("%s/%s: volume files updated", self.ns, self.name)
            except Exception as e:  # the API server may be down: try again next time
                log.warning("%s/%s: volume sync failed: %s", self.ns, self.name, e)

    def _cid(self, c: dict[str, Any], run: int) -> str:
        return pod_status.container_id(self.uid, c["name"], run)

    def _container_loop(
        self, c: dict[str, Any], cs: dict[str, Any], init: bool, fault: str | None
    ) -> bool:
        """Run a container, restarting it as the pod's restartPolicy says; True if it succeeded."""
        policy = self.pod["spec"].get("restartPolicy", "Always")
        if init and policy == "Always":
            policy = "OnFailure"
        run = 0
        while not self.deleting.is_set():
            if init and not host_plays(c):  # an image the host cannot play: shown as completed
                started = now_rfc3339nano()[:19] + "Z"
                pod_status.terminated(cs, self._cid(c, run), 0, "Completed", "", started)
                return True
            shown_only = fault is None and not host_plays(c)
            if fault == "never-ready" or shown_only:
                pod_status.running(cs, self._cid(c, run), ready=fault != "never-ready")
                self.publish()
                self.deleting.wait()
                return False
            code = self._run_once(c, cs, run, fault)
            if self.deleting.is_set():
                return False
            if not (policy == "Always" or (policy == "OnFailure" and code != 0)):
                self.publish()
                return code == 0
            last = cs["state"]["terminated"]
            delay = min(BACKOFF_START * 2**run, BACKOFF_MAX)
            run += 1
            cs["restartCount"] = run
            cs["lastState"] = {"terminated": last}
            pod_status.waiting(
                cs,
                "CrashLoopBackOff",
                f"back-off {int(delay)}s restarting failed container={c['name']} "
                f"pod={self.name}_{self.ns}({self.uid})",
            )
            self.publish()
            if self.deleting.wait(delay):
                return False
        return False

    def _run_once(self, c: dict[str, Any], cs: dict[str, Any], run: int, fault: str | None) -> int:
        cid = self._cid(c, run)
        name = c["name"]
        cdir = self.files.container(name)
        (cdir / "exited").unlink(missing_ok=True)
        term = self.files.termination_log(name)
        term.write_bytes(b"")
        logw = LogWriter(self.files.log_path(name, run=run))
        started = now_rfc3339nano()[:19] + "Z"
        try:
            if fault in ("crash", "oom"):
                pod_status.running(cs, cid, ready=True)
                self.publish()
                logw.write("stderr", b"sim: simulated " + fault.encode())
                time.sleep(0.5)
                code, reason = (137, "OOMKilled") if fault == "oom" else (1, "Error")
                pod_status.terminated(cs, cid, code, reason, "", started)
                return code
            try:
                spec = self._exec_spec(c, cdir, run)
            except (VolumeError, ApiException) as e:
                pod_status.waiting(cs, "CreateContainerConfigError", str(e))
                self.publish()
                self.deleting.wait()
                return 1
            if json.loads(spec.read_text())["argv"]:
                code = self._spawn_and_wait(c, cs, spec, cid, logw)
            else:
                code = 128
        finally:
            logw.close()
            (cdir / "exited").write_text("")
        start_error = cdir / f"start-error-{run}"
        if code == 128 and start_error.exists():
            msg = start_error.read_text()
            pod_status.terminated(cs, cid, 128, "StartError", msg, started)
            return code
        msg = term.read_bytes()[:4096].decode(errors="replace")
        if not msg and code != 0 and c.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            msg = tail_text(self.files.log_path(name, run=run))
        pod_status.terminated(cs, cid, code, "Completed" if code == 0 else "Error", msg, started)
        return code

    @property
    def node_name(self) -> str:
        """The node the pod is bound to."""
        return str(self.pod["spec"]["nodeName"])

    def _node(self) -> dict[str, Any]:
        return kube.to_dict(self.ctx.api, self.ctx.core.read_node(self.node_name))

    def _current_pod(self) -> dict[str, Any]:
        try:
            return kube.to_dict(self.ctx.api, self.ctx.core.read_namespaced_pod(self.name, self.ns))
        except ApiException:
            return self.pod

    def _exec_spec(self, c: dict[str, Any], cdir: Path, run: int) -> Path:
        port = str(self.ctx.apiserver_port)
        path_dirs = [d for d in (self.ctx.aicr_bin_dir,) if d] + [
            "/usr/local/sbin",
            "/usr/local/bin",
            "/usr/sbin",
            "/usr/bin",
            "/sbin",
            "/bin",
        ]
        home = cdir / "home"
        home.mkdir(exist_ok=True)
        layers = cdir / "layers"
        layers.mkdir(exist_ok=True)
        # The API server answers on the pods' gateway, and on loopback for hostNetwork pods.
        api_host = GATEWAY if self.sandbox else pod_status.HOST_IP
        base = {
            "PATH": ":".join(path_dirs),
            "HOSTNAME": self.pod["spec"].get("hostname") or self.name,
            "HOME": str(home),
            "KUBERNETES_SERVICE_HOST": api_host,
            "KUBERNETES_SERVICE_PORT": port,
            "KUBERNETES_SERVICE_PORT_HTTPS": port,
            "KUBERNETES_PORT": f"tcp://{api_host}:{port}",
        }
        env = self.mat.env(c, base)
        argv = [expand(a, env) for a in images.argv(c, self.ctx.sim_dir, self.ctx.python)]
        node = self._node()
        allocation = container_gpus(self.ctx.api, self._current_pod(), c, node, self.ctx.devices)
        gpus = allocation.visible
        profile = node_profile(node)
        if profile is not None:
            profile["gpus"] = gpus
            profile["migs"] = allocation.migs
        nccl = image_repo_name(c["image"]) == NCCL_TESTS_REPO
        nccl_state = self.ctx.sim_dir / "gpu" / "nccl" / self.ns if nccl else None
        version = image_version(c["image"]) if nccl else ""
        uid = run_as_user(self.pod, c)
        tools = write_tools(cdir, profile, self.ctx.python, nccl_state, version, uid)
        if runs_smi(c):  # the GPU node model plays nvidia-smi for this pod
            argv = smi_argv(cdir, argv, self.ctx.python)
        unplayable = None
        if images.plays(c):  # the inference server stand-in, the load generator
            played = images.play(c, argv, env, node, self.ctx.python)
            argv, env, unplayable = played.argv, played.env, played.problem
        if gpus:  # what the NVIDIA container toolkit gives a GPU container (MIG devices by theirs)
            env["NVIDIA_VISIBLE_DEVICES"] = ",".join(
                [mig_uuid(self.node_name, m["gpu"], m["mig"]) for m in allocation.migs]
                or [gpu_uuid(self.node_name, i) for i in gpus]
            )
        if gpus or nccl:  # the nccl-tests image's own tools are played by the GPU model
            env["PATH"] = f"{tools}:{env['PATH']}"
        if nccl:  # the image's ENV, which the pod's own env overrides
            env.setdefault("LD_LIBRARY_PATH", IMAGE_LD_LIBRARY_PATH)
        kernel = str(((node.get("status") or {}).get("nodeInfo") or {}).get("kernelVersion", ""))
        mounts = []
        kinds = {v["name"]: v for v in self.pod["spec"].get("volumes") or []}
        for m in c.get("volumeMounts") or []:
            src = self.volumes[m["name"]]
            if m.get("subPath"):
                src = src / m["subPath"]
            vol = kinds[m["name"]]
            always_ro = any(
                k in vol for k in ("configMap", "secret", "projected", "downwardAPI", "hostPath")
            )
            mounts.append(
                {
                    "source": str(src),
                    "target": m["mountPath"],
                    "readOnly": bool(m.get("readOnly")) or always_ro,
                }
            )
        if nccl:  # the image's tools at their paths in it (mpirun is called by path)
            mounts += [{"source": str(tools), "target": d, "readOnly": True} for d in IMAGE_DIRS]
        # gVisor shows its own kernel
        sandboxed = self.handler != handlers.DEFAULT and self.handler == handlers.sandbox_handler(
            self._node()
        )
        if not sandboxed:
            mounts += _kernel_overlays(cdir, kernel)
        mounts.append(
            {
                "source": str(self.files.termination_log(c["name"])),
                "target": c.get("terminationMessagePath") or "/dev/termination-log",
                "readOnly": False,
            }
        )
        keep = (paths.PROJECT_ROOT, self.ctx.sim_dir, cdir)
        spec = {
            "argv": argv,
            "env": env,
            "cwd": c.get("workingDir") or "/",
            "mounts": mounts,
            "startErrorFile": str(cdir / f"start-error-{run}"),
            "hostname": base["HOSTNAME"],
            "gpus": gpus,
            "podResources": allocation.resources,  # what the kubelet's pod-resources API lists
            "kernel": kernel,
            # The pod's network namespace (absent for hostNetwork: the cluster's own).
            "netns": self.sandbox.netns_path if self.sandbox else None,
            "netnsId": self.sandbox.netns if self.sandbox else None,
            # Host folders that stand in for the image's own files (see enter.restore_hidden).
            "keep": sorted({sys.prefix, sys.base_prefix, *map(str, keep)}),
            "layers": str(layers),  # where enter's private layers live (a tmpfs there)
        }
        if sandboxed:
            box_id = gvisor.container_id(f"{self.uid}-{c['name']}-{run}")
            spec["sandbox"] = {
                "runsc": str(paths.runsc_bin()),
                "state": str(cdir / "runsc"),
                "bundle": str(cdir / f"bundle-{run}"),
                "id": box_id,
            }
        (cdir / f"start-error-{run}").unlink(missing_ok=True)
        if unplayable or not argv:
            unreadable = "the simulated runtime cannot read an image's entrypoint: set `command`"
            (cdir / f"start-error-{run}").write_text(unplayable or unreadable)
        p = cdir / f"spec-{run}.json"
        p.write_text(json.dumps(spec))
        p.chmod(0o600)
        return p

    def _spawn_and_wait(
        self, c: dict[str, Any], cs: dict[str, Any], spec: Path, cid: str, logw: LogWriter
    ) -> int:
        with self.lock:  # either `_stop_processes` sees this process or it is never started
            if self.deleting.is_set():
                return 128 + signal.SIGKILL
            proc = subprocess.Popen(
                [self.ctx.python, "-m", "simcluster.runtime.enter", str(spec)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PYTHONPATH": str(paths.SIM_ROOT), "PATH": "/usr/bin:/bin"},
                start_new_session=True,
            )
            self.procs[c["name"]] = proc
        ticks = processes.start_ticks(proc.pid)
        rec = processes.Proc(f"{self.name}/{c['name']}", proc.pid, ticks or 0, [], "")
        self.files.proc_record(c["name"]).write_text(json.dumps(rec.to_json()))
        pumps = [logw.pump("stdout", proc.stdout), logw.pump("stderr", proc.stderr)]  # type: ignore[arg-type]
        probed = any(k in c for k in probes.KINDS)
        pod_status.running(cs, cid, ready=not probed)
        cs["started"] = "startupProbe" not in c
        self.publish()
        prober = self._prober(c, cs, proc, json.loads(spec.read_text())["env"]) if probed else None
        code = proc.wait()
        box = json.loads(spec.read_text()).get("sandbox")
        if box:
            gvisor.delete(box)
        if prober:
            prober.stop.set()
        for t in pumps:
            t.join(timeout=5)
        self.files.proc_record(c["name"]).unlink(missing_ok=True)
        self.procs.pop(c["name"], None)
        return 128 + -code if code < 0 else code

    def _prober(
        self,
        c: dict[str, Any],
        cs: dict[str, Any],
        proc: subprocess.Popen[bytes],
        env: dict[str, str],
    ) -> probes.Prober:
        def ready(ok: bool) -> None:
            with self.lock:
                cs.update(ready=ok, started=True)
            self.publish()

        def kill(reason: str) -> None:
            log.info(
                "%s/%s: %s; container %s will be restarted", self.ns, self.name, reason, c["name"]
            )
            _kill_group(proc, float(self.pod["spec"].get("terminationGracePeriodSeconds", 30)))

        def run(argv: list[str] | str, timeout: float) -> tuple[bool, str]:
            return probes.run_once(argv, proc.pid, env, timeout, str(paths.SIM_ROOT))

        assert self.pod_ip is not None
        prober = probes.Prober(c, run, self.ctx.python, ready, kill, self.pod_ip)
        prober.start()
        return prober

    # ---- faults ------------------------------------------------------------------
    def _image_pull_fault(self) -> None:
        for reason in ("ErrImagePull", "ImagePullBackOff"):
            for c in self.pod["spec"]["containers"]:
                img = c["image"]
                msg = (
                    f'Back-off pulling image "{img}"'
                    if reason == "ImagePullBackOff"
                    else f'failed to pull and unpack image "{img}": failed to resolve reference '
                    f'"{img}": {img}: not found (simulated)'
                )
                pod_status.waiting(self.statuses[c["name"]], reason, msg)
            self.publish()
            if self.deleting.wait(2):
                return

    def _claims_unprepared(self) -> bool:
        """A pod using claims stays ContainerCreating when the node's DRA driver is down, or
        cannot prepare a claim's GpuConfig (a sharing strategy whose gate is off, an MPS
        control daemon that never becomes ready)."""
        spec = self.pod["spec"]
        names = sorted({n for c in spec["containers"] for n in devices.claim_names(self.pod, c)})
        if not names:
            return False
        faults = node_faults(self._node())
        if "dra-driver-down" in faults:
            message = (
                "Failed to prepare dynamic resources: prepare dynamic resources: failed to get "
                f"gRPC client for driver {devices.DRA_DRIVER}: plugin name {devices.DRA_DRIVER} "
                "not found in the list of registered DRA plugins"
            )
            self._stuck_creating("FailedPrepareDynamicResources", message)
            return True
        on = self._dra_gates()
        resource = client.ResourceV1Api(self.ctx.api)
        for name in names:
            got = kube.ignore_not_found(
                lambda name=name: resource.read_namespaced_resource_claim(name, self.ns)
            )
            if got is None:  # deleted meanwhile: the pod goes with it
                continue
            message = dra_sharing.prepare_error(
                kube.to_dict(self.ctx.api, got), on, "mps-daemon-not-ready" not in faults
            )
            if message is not None:
                self._stuck_creating("FailedPrepareDynamicResources", message)
                return True
        return False

    def _dra_gates(self) -> dict[str, bool]:
        """The DRA kubelet plugin's sharing gates: its DaemonSet's env, else the values'."""
        apps = client.AppsV1Api(self.ctx.api)
        ds = kube.ignore_not_found(
            lambda: apps.read_namespaced_daemon_set(dra_sharing.PLUGIN, dra_sharing.NAMESPACE)
        )
        found = dra_sharing.env_gates(kube.to_dict(self.ctx.api, ds)) if ds is not None else None
        return found if found is not None else dra_sharing.gates(modes.dra_values("dra"))

    def _stuck_creating(self, reason: str, message: str) -> None:
        """The pod never gets its containers: ContainerCreating, and a kubelet Warning event."""
        for cs in self.statuses.values():
            pod_status.waiting(cs, "ContainerCreating")
        self.publish()
        now = now_rfc3339nano()[:19] + "Z"
        event = {
            "metadata": {"generateName": f"{self.name}.", "namespace": self.ns},
            "involvedObject": {
                "kind": "Pod",
                "apiVersion": "v1",
                "name": self.name,
                "namespace": self.ns,
                "uid": self.uid,
            },
            "reason": reason,
            "message": message,
            "type": "Warning",
            "source": {"component": "kubelet", "host": self.node_name},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        kube.ignore_not_found(lambda: self.ctx.core.create_namespaced_event(self.ns, event))
        log.info("%s/%s: %s", self.ns, self.name, message)

    def _evict_fault(self) -> None:
        self.phase = "Running"
        for c in self.pod["spec"]["containers"]:
            pod_status.running(self.statuses[c["name"]], self._cid(c, 0), ready=True)
        self.publish()
        if self.deleting.wait(1):
            return
        started = now_rfc3339nano()[:19] + "Z"
        for c in self.pod["spec"]["containers"]:
            pod_status.terminated(
                self.statuses[c["name"]], self._cid(c, 0), 137, "Error", "", started
            )
        self.phase, self.reason = "Failed", "Evicted"
        self.message = EVICTION_MESSAGE
        self.extra_conditions = [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "TerminationByKubelet",
                "message": EVICTION_MESSAGE,
                "lastTransitionTime": started,
            }
        ]
        self.publish()


def _kernel_overlays(cdir: Path, kernel: str) -> list[dict[str, Any]]:
    """Read-only mounts that make the container see its node's kernel release.

    Over /proc/version and /proc/sys/kernel/osrelease, and an /etc/ld.so.preload
    naming the uname(2) shim (`uname_shim.c`, copied into the container's folder
    so no pod volume can hide it): `uname -r`, Python's `os.uname()` and any
    dynamically linked program read the node's kernel. Statically linked
    programs still see the host's.
    """
    if not kernel:
        return []
    files = {
        "/proc/version": f"Linux version {kernel} (sim@aicr) #1 SMP PREEMPT_DYNAMIC\n",
        "/proc/sys/kernel/osrelease": f"{kernel}\n",
    }
    shim = paths.uname_shim()
    if shim.is_file():
        mine = cdir / shim.name
        shutil.copyfile(shim, mine)
        files["/etc/ld.so.preload"] = f"{mine}\n"
    out = []
    for n, (target, text) in enumerate(files.items()):
        src = cdir / f"kernel-{n}"
        src.write_text(text)
        src.chmod(0o644)
        out.append({"source": str(src), "target": target, "readOnly": True})
    return out


def _kill_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the container's process group, SIGKILL after the grace period."""
    _kill_groups([proc], grace)


def _kill_groups(procs: list[subprocess.Popen[bytes]], grace: float) -> None:
    """SIGTERM every process group at once, SIGKILL the ones left when the grace period ends.

    The period is the pod's, shared by its containers, not one per container in turn.
    """
    live = [p for p in procs if p.poll() is None]
    for p in live:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + max(grace, 0.1)
    for p in live:
        try:
            p.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
