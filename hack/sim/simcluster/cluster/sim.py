"""Start, stop and inspect one simulated cluster run.

The run lives in one folder (`paths.sim_dir()`): PKI, kubeconfigs, etcd data,
logs, the runtime's pod folders and `state.json`, which records the ports and
every process we started (pid + start time) so `down` stops exactly those.
Everything runs inside the cluster's own network namespace (simcluster.net):
a process that talks to the cluster calls `Sim.enter()` first.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from simcluster.cluster import control_plane as cp
from simcluster.cluster import paths, pki, processes
from simcluster.cluster.processes import Proc
from simcluster.net import namespace
from simcluster.nodes import platforms
from simcluster.runtime.ownership import RUNTIME_OWNED_JQ
from simcluster.runtime.pod_status import IMAGE_ID_TEMPLATE

NETNS = "netns"  # the process holding the cluster's network namespace


class SimUnavailable(RuntimeError):
    """The simulated cluster cannot run here (binaries missing, etc.)."""


class Sim:
    """Handle on the simulated cluster whose run folder is `sim_dir`."""

    def __init__(self, sim_dir: Path | None = None) -> None:
        self.dir = Path(sim_dir) if sim_dir else paths.sim_dir()
        self.kubeconfig = self.dir / "kubeconfig"
        self.state_file = self.dir / "state.json"
        self.pki_dir = self.dir / "pki"
        self.logs = self.dir / "logs"

    # ---- state -----------------------------------------------------------
    def state(self) -> dict[str, Any] | None:
        """The recorded state of the run, or None when nothing was started."""
        try:
            data: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return data

    def _save(self, state: dict[str, Any]) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.state_file)

    def procs(self) -> dict[str, Proc]:
        """Processes recorded for this run, by component name."""
        st = self.state() or {}
        return {name: Proc(**p) for name, p in st.get("procs", {}).items()}

    def is_up(self) -> bool:
        """True when every recorded component is still running."""
        procs = self.procs()
        return bool(procs) and all(processes.alive(p) for p in procs.values())

    @property
    def platform(self) -> platforms.Platform:
        """The platform profile the run was started with (`kubeadm` when none was recorded)."""
        st = self.state() or {}
        return platforms.load(str(st.get("platform") or platforms.DEFAULT))

    @property
    def ports(self) -> cp.Ports:
        """Loopback ports of the running cluster."""
        st = self.state()
        if not st:
            raise SimUnavailable(f"no simulated cluster recorded in {self.dir}")
        return cp.Ports(**st["ports"])

    @property
    def server(self) -> str:
        """The API server URL (always loopback)."""
        return f"https://{cp.LOOPBACK}:{self.ports.apiserver}"

    # ---- lifecycle -------------------------------------------------------
    def enter(self) -> None:
        """Move this process (its calling thread) into the running cluster's network namespace."""
        holder = self.procs().get(NETNS)
        if holder is None or not processes.alive(holder):
            raise SimUnavailable(f"no simulated cluster runs in {self.dir}")
        if not namespace.inside(holder.pid):
            namespace.enter(holder.pid)

    def up(self, timeout: float = 90.0, platform: str | None = None) -> Path:
        """Start the cluster unless it already runs (then enter it); return the kubeconfig path.

        `platform` names the profile its nodes follow (`kubeadm` when None); a
        running cluster of another profile is refused (PlatformError), never
        relabelled. The calling process ends up inside the cluster's network namespace.
        """
        wanted = platforms.load(platform or platforms.DEFAULT)
        if self.is_up():
            running = self.platform.name
            if platform is not None and running != wanted.name:
                raise platforms.PlatformError(
                    f"the simulated cluster in {self.dir} runs platform {running}, not "
                    f"{wanted.name}; stop it with `hack/sim/sim down` first"
                )
            self.enter()
            return self.kubeconfig
        if self.state() is not None:
            self.down()  # leftovers of a crashed run
        missing = paths.missing_binaries()
        if missing:
            raise SimUnavailable(
                f"simulated-cluster binaries not built ({', '.join(missing)} missing in "
                f"{paths.bin_dir()}); run `make sim-build`"
            )
        if shutil.which("openssl") is None:
            raise SimUnavailable("openssl is not installed (needed to generate the cluster PKI)")
        why = namespace.unavailable()
        if why:
            raise SimUnavailable(f"the cluster's own network namespace cannot be made: {why}")
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / ".gitignore").write_text("*\n")
        try:
            self._start(timeout, wanted.name)
        except BaseException:
            self._dump_logs()
            self.down()
            raise
        return self.kubeconfig

    def _env(self) -> dict[str, str]:
        """A minimal environment for components: nothing of the caller's shell."""
        home = self.dir / "home"
        home.mkdir(exist_ok=True)
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}

    def _start(self, timeout: float, platform: str) -> None:
        deadline = time.monotonic() + timeout
        bins = paths.bin_dir()
        keys = pki.generate(self.pki_dir)
        ports = cp.Ports.pick()
        state: dict[str, Any] = {
            "ports": ports.to_json(),
            "procs": {},
            "argv": {},
            "platform": platform,
        }
        self._save(state)
        server = f"https://{cp.LOOPBACK}:{ports.apiserver}"
        self.kubeconfig.write_text(
            cp.kubeconfig_text(server, keys.ca.cert, keys.admin.cert, keys.admin.key, "admin")
        )
        self.kubeconfig.chmod(0o600)
        kcm_kc = self.pki_dir / "controller-manager.kubeconfig"
        kcm_kc.write_text(
            cp.kubeconfig_text(
                server,
                keys.ca.cert,
                keys.controller_manager.cert,
                keys.controller_manager.key,
                "system:kube-controller-manager",
            )
        )
        sched_kc = self.pki_dir / "scheduler.kubeconfig"
        sched_kc.write_text(
            cp.kubeconfig_text(
                server,
                keys.ca.cert,
                keys.scheduler.cert,
                keys.scheduler.key,
                "system:kube-scheduler",
            )
        )
        stages = self.dir / "kwok-stages.yaml"
        stages.write_text(
            (paths.SIM_ROOT / "kwok-stages.yaml")
            .read_text()
            .replace("@RUNTIME_OWNED@", RUNTIME_OWNED_JQ)
            .replace("@IMAGE_ID@", IMAGE_ID_TEMPLATE)
        )

        def spawn(name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
            proc = processes.spawn(name, argv, self.logs / f"{name}.log", env=env or self._env())
            state["procs"][name] = proc.to_json()
            self._save(state)

        # First the network namespace: everything started after this is inside it.
        host_ns = os.readlink("/proc/self/ns/net")
        spawn(NETNS, namespace.HOLDER_ARGV)
        namespace.enter_new(state["procs"][NETNS]["pid"])
        namespace.set_up(host_ns)
        spawn("etcd", cp.etcd_args(bins, self.dir / "etcd", ports))
        _wait(lambda: _http_ok(f"http://{cp.LOOPBACK}:{ports.etcd}/health"), deadline, "etcd")
        spawn("kube-apiserver", cp.apiserver_args(bins, self.dir, keys, ports))
        self._wait_apiserver(deadline)
        spawn("kube-controller-manager", cp.controller_manager_args(bins, kcm_kc, keys, ports))
        spawn("kube-scheduler", cp.scheduler_args(bins, sched_kc, ports))
        spawn("kwok", cp.kwok_args(bins, self.kubeconfig, stages, ports))
        spawn("runtime", self._runtime_argv(), env=self._runtime_env())

        from simcluster.scenarios import (
            contents as scenario,  # needs the kubernetes client; import late
        )

        scenario.bootstrap(self, deadline)

    def _runtime_argv(self) -> list[str]:
        aicr = shutil.which("aicr")
        argv = [sys.executable, "-m", "simcluster.runtime", "--sim-dir", str(self.dir)]
        if aicr:
            argv += ["--aicr-bin-dir", str(Path(aicr).parent)]
        return argv

    def _runtime_env(self) -> dict[str, str]:
        env = self._env()
        env["PYTHONPATH"] = str(paths.SIM_ROOT)
        env["PYTHONUNBUFFERED"] = "1"
        env["AICR_SIM_CACHE"] = str(paths.cache_root())  # runsc, component binaries: HOME differs
        return env

    def _wait_apiserver(self, deadline: float) -> None:
        keys = self.pki_dir
        ctx = ssl.create_default_context(cafile=str(keys / "ca.crt"))
        ctx.load_cert_chain(str(keys / "admin.crt"), str(keys / "admin.key"))
        url = f"{self.server}/readyz"
        _wait(lambda: _http_ok(url, ctx), deadline, "kube-apiserver /readyz")

    def down(self) -> None:
        """Stop every process this run started (by pid) and remove its folder."""
        procs = self.procs()
        # Runtime first so it can stop the pod processes it started.
        order = [
            "runtime",
            "kwok",
            "kube-scheduler",
            "kube-controller-manager",
            "kube-apiserver",
            "etcd",
            NETNS,
        ]
        for name in sorted(procs, key=lambda n: order.index(n) if n in order else -1):
            processes.stop(procs[name])
        for leftover in self._pod_process_records():
            processes.stop(leftover, timeout=2)
        if self.dir.exists():
            shutil.rmtree(self.dir)

    def _pod_process_records(self) -> list[Proc]:
        out = []
        for f in (self.dir / "pods").glob("*/*.proc.json"):
            try:
                out.append(Proc(**json.loads(f.read_text())))
            except (OSError, ValueError, TypeError):
                continue
        return out

    # ---- faults on the control plane --------------------------------------
    def stop_apiserver(self) -> None:
        """Stop the API server (clients see connection refused) until started again."""
        procs = self.procs()
        processes.stop(procs["kube-apiserver"])

    def start_apiserver(self, timeout: float = 60.0) -> None:
        """Start the API server again with the same flags, and wait for it to be ready."""
        state = self.state()
        assert state is not None
        old = Proc(**state["procs"]["kube-apiserver"])
        if processes.alive(old):
            return
        proc = processes.spawn(
            old.name, old.argv, self.logs / "kube-apiserver.log", env=self._env()
        )
        state["procs"]["kube-apiserver"] = proc.to_json()
        self._save(state)
        self._wait_apiserver(time.monotonic() + timeout)

    def _dump_logs(self) -> None:
        """On a failed start, show the tail of each component log (CI has no other view)."""
        for log in sorted(self.logs.glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-25:]
            print(f"--- {log.name} (last {len(lines)} lines)", file=sys.stderr)
            print("\n".join(lines), file=sys.stderr)


def _http_ok(url: str, ctx: ssl.SSLContext | None = None) -> bool:
    # No proxy handler: a *_proxy variable must never route loopback calls elsewhere.
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx)
    )
    try:
        with opener.open(url, timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _wait(ok: Any, deadline: float, what: str) -> None:
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready in time")


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
