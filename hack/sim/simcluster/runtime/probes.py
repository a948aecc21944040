"""Startup, readiness and liveness probes of a running container, as the kubelet runs them.

Every probe runs inside the container's namespaces (`nsenter` into its mount,
network and UTS namespaces), so an `exec` probe sees the container's files and
an `httpGet`/`tcpSocket` probe dials the pod IP (the kubelet's default host)
from inside the pod; `host: 127.0.0.1`/`localhost` dials the pod's loopback. A
probe whose `host` is some other address fails without dialling anything.

Timing and thresholds follow the API defaults: initialDelaySeconds 0,
periodSeconds 10, timeoutSeconds 1, successThreshold 1, failureThreshold 3.
A startup probe holds the others back until it succeeds; a failed startup or
liveness probe kills the container (which then restarts as its pod's
restartPolicy says); readiness sets the container's `ready`.

Run as `python -m simcluster.runtime.probes http|tcp ...` for the network kinds.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
MODULE = "simcluster.runtime.probes"
# The kubelet's timeoutSeconds bounds the request it makes itself. Here a process started
# for the probe makes it, and that process's start-up (a Python interpreter: seconds on a
# loaded 2-CPU machine) is no part of the request: it is allowed on top, and the request
# inside gets the probe's timeout (TIMEOUT_ENV).
STARTUP_ALLOWANCE = 10.0
TIMEOUT_ENV = "SIM_PROBE_TIMEOUT"
KINDS = ("startupProbe", "readinessProbe", "livenessProbe")


@dataclass(frozen=True)
class Timing:
    """When and how often a probe runs, and how many results flip it."""

    initial: float
    period: float
    timeout: float
    success: int
    failure: int

    @classmethod
    def of(cls, probe: dict[str, Any]) -> Timing:
        """The probe's timing with the API defaults filled in."""
        return cls(
            float(probe.get("initialDelaySeconds", 0)),
            float(probe.get("periodSeconds", 10)),
            float(probe.get("timeoutSeconds", 1)),
            int(probe.get("successThreshold", 1)),
            int(probe.get("failureThreshold", 3)),
        )


def _port(value: Any, container: dict[str, Any]) -> int:
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    named = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
    if value not in named:
        raise ValueError(f"port {value!r} is not a named port of the container")
    return int(named[value])


def command(
    probe: dict[str, Any], container: dict[str, Any], python: str, pod_ip: str
) -> list[str] | str:
    """The argv that runs one probe inside the container, or why it cannot run."""
    if "exec" in probe:
        return list(probe["exec"].get("command") or []) or "exec probe without a command"
    for kind in ("httpGet", "tcpSocket"):
        if kind in probe:
            spec = probe[kind]
            host = str(spec.get("host") or pod_ip)
            if host == "localhost":
                host = "127.0.0.1"
            if host not in (pod_ip, *LOOPBACK_HOSTS):
                return f"probe host {host} is not the pod's own address; not dialled"
            try:
                port = _port(spec.get("port"), container)
            except ValueError as e:
                return str(e)
            if kind == "tcpSocket":
                return [python, "-m", MODULE, "tcp", host, str(port)]
            scheme = str(spec.get("scheme") or "HTTP").lower()
            path = str(spec.get("path") or "/")
            return [
                python,
                "-m",
                MODULE,
                "http",
                scheme,
                host,
                str(port),
                path,
            ]
    return f"probe type {sorted(probe)} is not supported by the simulated kubelet"


def run_once(
    argv: list[str] | str, pid: int, env: dict[str, str], timeout: float, pythonpath: str
) -> tuple[bool, str]:
    """Run a probe inside the namespaces of process `pid`: (success, output)."""
    if isinstance(argv, str):
        return False, argv
    if not _entered(pid):
        return False, "container not started"
    enter = ["nsenter", f"--target={pid}", "--mount", "--net", "--uts", "--", *argv]
    ours = argv[1:3] == ["-m", MODULE]  # a network probe: the request alone is timed
    try:
        out = subprocess.run(
            enter,
            env={**env, "PYTHONPATH": pythonpath, TIMEOUT_ENV: str(timeout)},
            capture_output=True,
            timeout=timeout + STARTUP_ALLOWANCE if ours else timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False, f"command timed out after {timeout:g}s"
    text = (out.stdout + out.stderr).decode(errors="replace").strip()
    return out.returncode == 0, text


def _entered(pid: int, wait: float = 5.0) -> bool:
    """True once process `pid` is in its own mount namespace (it sets it up as it starts)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            if os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt"):
                return True
        except OSError:
            return False
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


class Prober(threading.Thread):
    """Runs one container's probes until `stop` is set.

    `ready(bool)` is called when readiness changes (and once startup passes);
    `kill(reason)` when a startup or liveness probe has failed for good.
    """

    def __init__(
        self,
        container: dict[str, Any],
        run: Callable[[list[str] | str, float], tuple[bool, str]],
        python: str,
        ready: Callable[[bool], None],
        kill: Callable[[str], None],
        pod_ip: str,
    ) -> None:
        super().__init__(daemon=True)
        self.container, self.run_probe, self.python = container, run, python
        self.pod_ip = pod_ip
        self.on_ready, self.on_kill = ready, kill
        self.stop = threading.Event()

    def _decide(self, t: Timing, argv: list[str] | str) -> tuple[bool, str] | None:
        """Probe until a threshold is reached: (passed, last output); None when stopped."""
        good = bad = 0
        while True:
            ok, last = self.run_probe(argv, t.timeout)
            good, bad = (good + 1, 0) if ok else (0, bad + 1)
            if good >= t.success or bad >= t.failure:
                return good >= t.success, last
            if self.stop.wait(t.period):
                return None

    def _loop(self, kind: str, on_result: Callable[[bool, str], bool]) -> None:
        """Run probe `kind` every period while `on_result` returns True."""
        probe = self.container[kind]
        t, argv = Timing.of(probe), command(probe, self.container, self.python, self.pod_ip)
        if self.stop.wait(t.initial):
            return
        while (result := self._decide(t, argv)) is not None and on_result(*result):
            if self.stop.wait(t.period):
                return

    def run(self) -> None:
        """Startup first, then readiness and liveness side by side."""
        c = self.container
        started = threading.Event()
        if "startupProbe" in c:

            def startup(ok: bool, last: str) -> bool:
                if ok:
                    started.set()
                else:
                    self.on_kill(f"Startup probe failed: {last}")
                return False

            self._loop("startupProbe", startup)
            if not started.is_set():
                return
        threads = []
        if "livenessProbe" in c:

            def liveness(ok: bool, last: str) -> bool:
                if not ok:
                    self.on_kill(f"Liveness probe failed: {last}")
                return ok

            threads.append(threading.Thread(target=self._loop, args=("livenessProbe", liveness)))
        if "readinessProbe" in c:
            shown: list[bool] = []

            def readiness(ok: bool, last: str) -> bool:
                if shown != [ok]:
                    shown[:] = [ok]
                    self.on_ready(ok)
                return True

            threads.append(threading.Thread(target=self._loop, args=("readinessProbe", readiness)))
        else:
            self.on_ready(True)
        for t in threads:
            t.daemon = True
            t.start()
        for t in threads:
            t.join()


def _http(scheme: str, host: str, port: int, path: str) -> int:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # the kubelet skips verification
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx)
    )
    try:
        with opener.open(f"{scheme}://{host}:{port}{path}", timeout=_timeout()) as r:
            code = int(r.status)
    except urllib.error.HTTPError as e:
        code = e.code
    print(f"HTTP probe failed with statuscode: {code}" if not 200 <= code < 400 else code)
    return 0 if 200 <= code < 400 else 1


def _timeout() -> float:
    """The probe's timeoutSeconds, as run_once passes it."""
    return float(os.environ.get(TIMEOUT_ENV, "1"))


def main(argv: list[str]) -> int:
    """`http SCHEME HOST PORT PATH` or `tcp HOST PORT`, from inside the pod."""
    try:
        if argv[0] == "tcp":
            with socket.create_connection((argv[1], int(argv[2])), timeout=_timeout()):
                return 0
        return _http(argv[1], argv[2], int(argv[3]), argv[4])
    except OSError as e:  # refused, unreachable, or no answer within the timeout
        print(f"probe failed: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
