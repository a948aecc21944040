"""A deleted pod's containers are stopped as a kubelet stops them: SIGTERM to all at
once, SIGKILL for what is left when the pod's one grace period ends, and no container
started once the deletion was seen."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from simcluster.runtime.worker import PodWorker

# Exits 0 on SIGTERM only once the other container got its SIGTERM too (its marker).
CONTAINER = textwrap.dedent(
    """
    import os, signal, sys, time
    me, other = sys.argv[1], sys.argv[2]
    def term(*_):
        open(me + ".term", "w").close()
        while not os.path.exists(other + ".term"):
            time.sleep(0.01)
        sys.exit(0)
    signal.signal(signal.SIGTERM, term)
    open(me + ".up", "w").close()
    while True:
        time.sleep(1)
    """
)


def _start(tmp_path: Path, me: str, other: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", CONTAINER, str(tmp_path / me), str(tmp_path / other)]
    return subprocess.Popen(argv, start_new_session=True)


def test_every_container_gets_sigterm_at_once_within_one_grace_period(tmp_path: Path) -> None:
    procs = {"a": _start(tmp_path, "a", "b"), "b": _start(tmp_path, "b", "a")}
    try:
        while not all((tmp_path / f"{n}.up").exists() for n in procs):
            time.sleep(0.01)
        pod = SimpleNamespace(_grace=lambda: 5.0, procs=procs, lock=threading.Lock())
        PodWorker._stop_processes(pod)  # type: ignore[arg-type]
        # One container after another, the first would wait for the other's SIGTERM
        # until its grace period ran out and be killed (-9).
        assert {n: p.returncode for n, p in procs.items()} == {"a": 0, "b": 0}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


def test_no_container_starts_once_the_pod_is_being_deleted() -> None:
    deleting = threading.Event()
    deleting.set()
    pod = SimpleNamespace(deleting=deleting, lock=threading.Lock(), procs={})
    code = PodWorker._spawn_and_wait(pod, {"name": "c"}, {}, Path("spec"), "cid", None)  # type: ignore[arg-type]
    assert (code, pod.procs) == (137, {})  # killed before it started, as a kubelet shows it
