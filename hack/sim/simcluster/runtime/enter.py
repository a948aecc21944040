"""Enter a private mount namespace, mount the pod's volumes, exec the command.

Run as `python -m simcluster.runtime.enter <spec.json>`. The bind mounts live
only in the new namespace, so the container sees its ConfigMaps, Secrets and
token at the pod's own mount paths (for example
/var/run/secrets/kubernetes.io/serviceaccount) while the host does not. A
missing mount point is made in a private layer (`private_layer`) over its
nearest existing host folder, so nothing is ever created on the host.
The container gets a /dev of its own (`private_dev`): the base devices and
only the GPUs allocated to it. The process also gets a UTS namespace with the
pod's hostname and joins its pod's network namespace (the pod sandbox, with
the pod IP on `eth0`); a hostNetwork pod's stays in the cluster's.
If the command cannot be started, the reason is written to the spec's
`startErrorFile` and the exit code is 128, as container runtimes report it.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import stat
import sys
from pathlib import Path

from simcluster.runtime import gvisor

CLONE_NEWNS = 0x00020000
MS_NOSUID = 2
MS_NODEV = 4
CLONE_NEWUTS = 0x04000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
MS_PRIVATE = 1 << 18

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(
    src: str | None, target: str, flags: int, fstype: str | None = None, data: str | None = None
) -> None:
    _check(
        _libc.mount(
            src.encode() if src else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {src or fstype} -> {target}",
    )


def private_namespace() -> None:
    """Move this process into a new mount namespace that shares nothing back."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", MS_REC | MS_PRIVATE)


# The device set a container runtime gives every container: name -> (major, minor).
BASE_DEVICES = {
    "null": (1, 3),
    "zero": (1, 5),
    "full": (1, 7),
    "random": (1, 8),
    "urandom": (1, 9),
    "tty": (5, 0),
}
NVIDIA_MAJOR = 195  # /dev/nvidia<N> and /dev/nvidiactl (minor 255)
NVIDIA_UVM_MAJOR = 510  # dynamic on real hosts; any value the stand-in keeps
LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
    "ptmx": "pts/ptmx",
}


def private_dev(gpus: list[int]) -> None:
    """A /dev of the container's own: the base devices, shm, pts, and its GPUs only.

    Nothing of the host's /dev shows through. `/dev/nvidia<N>` (N the host
    index), `/dev/nvidiactl` and `/dev/nvidia-uvm` are device nodes with the
    driver's numbers, made only for a container that was given GPUs; with no
    driver behind them, opening one fails as on a node without the module.
    """
    _mount("tmpfs", "/dev", MS_NOSUID, "tmpfs", "mode=755,size=65536k")
    nodes = {name: numbers for name, numbers in BASE_DEVICES.items()}
    if gpus:
        nodes |= {f"nvidia{i}": (NVIDIA_MAJOR, i) for i in gpus}
        nodes |= {"nvidiactl": (NVIDIA_MAJOR, 255), "nvidia-uvm": (NVIDIA_UVM_MAJOR, 0)}
    for name, (major, minor) in nodes.items():
        path = f"/dev/{name}"
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(path, 0o666)
    os.mkdir("/dev/shm", 0o1777)
    _mount("shm", "/dev/shm", MS_NOSUID | MS_NODEV, "tmpfs", "mode=1777,size=65536k")
    os.mkdir("/dev/pts", 0o755)
    _mount("devpts", "/dev/pts", MS_NOSUID, "devpts", "newinstance,ptmxmode=0666,mode=0620")
    for name, target in LINKS.items():
        os.symlink(target, f"/dev/{name}")


def private_host(hostname: str) -> None:
    """Own UTS namespace with the pod's hostname."""
    _check(_libc.unshare(CLONE_NEWUTS), "unshare(CLONE_NEWUTS)")
    name = hostname.encode()[:64]
    _check(_libc.sethostname(name, len(name)), "sethostname")


def join_pod_network(path: str, expected: str) -> None:
    """Join the pod sandbox's network namespace at `path`, which must be `expected`.

    The check guards against a reused pid: a container never lands in some
    other process's namespace.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if os.readlink(path) != expected:
            raise OSError(f"pod sandbox network namespace {path} is gone")
        _check(_libc.setns(fd, CLONE_NEWNET), "setns(pod network namespace)")
    finally:
        os.close(fd)


def bind(source: str, target: str, read_only: bool) -> None:
    """Bind-mount `source` at `target`, creating the mount point if needed."""
    t = Path(target)
    if os.path.isdir(source):
        t.mkdir(parents=True, exist_ok=True)
    else:
        t.parent.mkdir(parents=True, exist_ok=True)
        if not t.exists():
            t.touch()
    _mount(source, target, MS_BIND | MS_REC)
    if read_only:
        _mount(None, target, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)


def _within(path: str, top: str) -> bool:
    """True if `path` is `top` or below it."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def layer_anchors(targets: list[str]) -> list[str]:
    """Host folders to cover with a private layer so that every missing target can be made.

    For each target missing on the host: its nearest existing ancestor. Targets
    in the private /dev or below an earlier target (made inside that volume, as
    a kubelet does) need none. Only the outermost folders are returned.
    """
    found: list[str] = []
    earlier: list[str] = []
    for target in targets:
        real = os.path.realpath(target)
        inside = _within(real, "/dev") or any(_within(real, t) for t in earlier)
        earlier.append(real)
        if inside or os.path.exists(real):
            continue
        anchor = os.path.dirname(real)
        while not os.path.exists(anchor):
            anchor = os.path.dirname(anchor)
        found.append(anchor)
    outer: list[str] = []
    for a in sorted(set(found), key=len):
        if not any(_within(a, o) for o in outer):
            outer.append(a)
    return outer


def _mount_points() -> list[str]:
    """Mount points of this namespace, as /proc/self/mountinfo lists them (octal escapes undone)."""
    with open("/proc/self/mountinfo") as f:
        fields = [line.split()[4] for line in f]
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p) for p in fields]


def overlay_of(anchor: str, scratch: str, n: int) -> str:
    """Host folder `anchor` under an overlay whose writes stay in `scratch`; the overlay's path.

    `scratch` is a tmpfs of this mount namespace only, so what is made in the
    overlay exists for this container alone, and the host (and every other
    container or simulated cluster sharing it) never sees it created or removed.
    Mounts below `anchor` are bound back on top.
    """
    if any(c in anchor for c in ",:\\"):
        raise OSError(f"cannot layer {anchor}: its name holds ',', ':' or a backslash")
    layer = f"{scratch}/{n}"
    for part in ("upper", "work", "root"):
        os.makedirs(f"{layer}/{part}")
    root = f"{layer}/root"
    below = sorted(
        {
            p
            for p in _mount_points()
            if p != anchor and _within(p, anchor) and not _within(p, scratch)
        }
    )
    outer = [p for i, p in enumerate(below) if not any(_within(p, q) for q in below[:i])]
    options = f"lowerdir={anchor},upperdir={layer}/upper,workdir={layer}/work"
    _mount("overlay", root, 0, "overlay", options)
    for p in outer:
        _mount(p, root + p[len(anchor.rstrip("/")) :], MS_BIND | MS_REC)
    if scratch != anchor and _within(scratch, anchor):
        # the next layers' upper folders must stay on the tmpfs (an overlay cannot be an
        # upper folder): bound alone, without the overlays mounted inside it
        _mount(scratch, root + scratch[len(anchor.rstrip("/")) :], MS_BIND)
    return root


def private_layer(anchor: str, scratch: str, n: int) -> None:
    """Cover host folder `anchor` with its `overlay_of`; for `/` the overlay becomes the root.

    Mount points made under `anchor` afterwards exist for this container alone.
    """
    root = overlay_of(anchor, scratch, n)
    if anchor == "/":
        os.chdir(root)
        _mount(root, "/", MS_MOVE)
        os.chroot(".")
        os.chdir("/")
    else:
        _mount(root, anchor, MS_MOVE)


def sandbox_root(scratch: str) -> str:
    """The host's `/` under a private overlay, as the root of a gVisor bundle.

    runsc's gofer makes a bind mount's missing destination in the bundle's root;
    over the host's own `/` that would leave empty folders on the host.
    """
    _mount("tmpfs", scratch, MS_NOSUID | MS_NODEV, "tmpfs", "mode=700")
    return overlay_of("/", scratch, 0)


def private_layers(targets: list[str], scratch: str) -> list[str]:
    """Layer every folder a missing target needs (`layer_anchors`); the folders layered."""
    anchors = layer_anchors(targets)
    if anchors:
        _mount("tmpfs", scratch, MS_NOSUID | MS_NODEV, "tmpfs", "mode=700")
    for n, anchor in enumerate(anchors):
        private_layer(anchor, scratch, n)
    return anchors


def restore_hidden(keep: list[tuple[str, int]], targets: list[str]) -> None:
    """Bind back host folders the process needs that a pod volume now hides.

    The simulated "image" is the host: the interpreter, the project and the run
    folder. A pod's emptyDir at /tmp would hide them when the checkout lives
    under /tmp; a real image keeps its own files, so they are mounted back on top.
    Below a private layer they are bound back too, so what the container writes
    there (its termination log, the GPU model's state) still reaches the host.
    """
    for path, fd in keep:
        if any(Path(path).is_relative_to(t) and Path(path) != Path(t) for t in targets):
            bind(f"/proc/self/fd/{fd}", path, read_only=False)


def main(spec_path: str) -> None:
    """Apply the spec and replace this process with the container command."""
    spec = json.loads(Path(spec_path).read_text())
    # Written through a handle: a private layer may cover the container's folder's path.
    start_error = Path(spec["startErrorFile"])
    folder = os.open(start_error.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        private_namespace()
        if spec.get("netns"):
            join_pod_network(spec["netns"], spec["netnsId"])
        private_host(spec.get("hostname") or "localhost")
        if spec.get("sandbox"):  # gVisor makes the container's /dev, mounts and kernel itself
            gvisor.run(spec, sandbox_root(spec["layers"]))
        # Hold every source open first: an earlier mount may hide a later source
        # (a volume mounted at /work hides a run folder under /work/...).
        sources = [os.open(m["source"], os.O_PATH | os.O_CLOEXEC) for m in spec["mounts"]]
        keep = [
            (p, os.open(p, os.O_PATH | os.O_CLOEXEC))
            for p in spec.get("keep", [])
            if os.path.isdir(p)
        ]
        targets = [m["target"] for m in spec["mounts"]]
        layered = private_layers(targets, spec["layers"])
        private_dev(list(spec.get("gpus") or []))
        for m, fd in zip(spec["mounts"], sources, strict=True):
            bind(f"/proc/self/fd/{fd}", m["target"], bool(m.get("readOnly")))
        restore_hidden(keep, targets + layered)
        for fd in [*sources, *(fd for _, fd in keep)]:
            os.close(fd)
        os.chdir(spec.get("cwd") or "/")
        os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
    except OSError as e:
        message = (
            f"failed to create containerd task: failed to create shim task: OCI runtime create "
            f"failed: runc create failed: unable to start container process: {e}"
        )
        fd = os.open(start_error.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=folder)
        with os.fdopen(fd, "w") as out:
            out.write(message)
        sys.exit(128)


if __name__ == "__main__":
    main(sys.argv[1])
