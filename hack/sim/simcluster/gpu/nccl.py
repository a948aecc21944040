"""Plays nccl-tests over MPI on simulated GPU nodes: `sshd`, `mpirun` and `all_reduce_perf`.

`python -m simcluster.gpu.nccl STATE PROFILE.json TOOL [ARGS...]`, through the shims
the runtime puts first on the PATH of containers of the nccl-tests image
(`model.write_tools`). It is a fake of the hardware and the fabric, which cannot
run here, so the ranks coordinate through the GPU model's own state (STATE, a
folder per namespace) instead of SSH and NCCL's sockets:

- `sshd` (a worker) registers its host: hostname, node, the GPUs the pod was
  given, the node's bus bandwidth and faults, then waits to be stopped;
- `mpirun` (the launcher) resolves `--host h:slots,...` (or the operator's
  hostfile, `OMPI_MCA_orte_default_hostfile`) against the registered hosts as
  SSH would (a host that never registers fails as an unreachable daemon does),
  lays the ranks out by slot and runs the program with the world it found;
- `all_reduce_perf` prints what rank 0 of nccl-tests prints (`src/common.cu`,
  `src/util.cu`) in the format of the release the image's tag names (`testsvX.Y.Z`):
  the version line (2.17.4+), the header (`unalign` from 2.18.2), every rank's line
  with its own host, device and PCI bus (`Group` from 2.13.4, the PCI domain from 2.14.1),
  the memory cap against the smallest GPU's memory from the node profile (from 2.10.0:
  `(memory - 1 GiB) / 3`, `/ 2` with `-c 0`, less a reserve from 2.16.6; before 2.10.0 a
  run too big for the GPU fails allocating its buffers, `Test CUDA failure`, exit 2),
  the table (`N/A` without data checking), the summary (padded from 2.17.7) and the
  `concluded` line (2.16.7+); before 2.13 the older layout of a real DGX-2 capture
  (rank lines without `Group`, no `root` column, `error` deltas for `#wrong`). The bus
  bandwidth is the slowest host's (`sim.aicr.dev/nccl-busbw`, from the node profile),
  approached as the message grows. Node faults: `nccl-degraded` cuts it to 40%,
  `nccl-wrong` reports wrong elements at the larger sizes and exits as that release
  does (1 before 2.17.3, then its `testNumResults`: 6, 7 from 2.17.7).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from simcluster.gpu.smi import BUS, visible

VERSION = "2.16.9"  # when the image's tag names none (the pinned tag says testsv2.16.9)
VERSION_ENV = "SIM_NCCL_TESTS_VERSION"  # the shim's: the release the image's tag names
NCCL_CODE = 22707  # NCCL 2.27.7, as the pinned image's nccl-tests reports it
GIB = 1 << 30
HALF_BYTES = 64 << 20  # the message size at which half the peak bus bandwidth is reached
DEGRADED = 0.4
WRONG_FROM = 1 << 30  # nccl-wrong corrupts messages from this size up
SSH_SECONDS = 15.0  # how long mpirun's ssh retries (ConnectionAttempts) keep trying a host
WORLD_ENV = "SIM_NCCL_WORLD"
# The pinned image's layout and environment (aws-samples/awsome-distributed-training,
# micro-benchmarks/nccl-tests/nccl-tests.Dockerfile): Open MPI under /opt/amazon/openmpi,
# nccl-tests under /opt/nccl-tests/build, NCCL and the EFA plugin found through its ENV
# LD_LIBRARY_PATH, which a rank that ssh starts on a worker has only when mpirun forwards it.
IMAGE_DIRS = ("/opt/amazon/openmpi/bin", "/opt/nccl-tests/build")
IMAGE_LD_LIBRARY_PATH = (
    "/usr/local/cuda/extras/CUPTI/lib64:/opt/amazon/openmpi/lib:/opt/nccl/build/lib:"
    "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/lib"
)
NO_LIBRARY = 127  # the loader's exit when a shared library is missing
_SIZE = re.compile(r"^(\d+)([KMG]?)$")


def size(text: str) -> int:
    """nccl-tests' size argument: `8`, `1M`, `16G` (powers of 1024)."""
    m = _SIZE.match(text.strip().upper())
    if not m:
        raise ValueError(f"invalid size {text!r}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def host_record(profile: dict[str, Any], hostname: str) -> dict[str, Any]:
    """What a worker registers: where it runs and what its ranks see."""
    return {
        "hostname": hostname,
        "node": profile.get("node", ""),
        "pid": os.getpid(),
        "gpus": visible(profile),
        "product": profile.get("product", "NVIDIA GPU"),
        "busbw": float(profile.get("ncclBusBw") or 0.0),
        "memoryMiB": int(profile.get("memoryMiB") or 0),
        "faults": list(profile.get("faults") or []),
    }


# ---- sshd ------------------------------------------------------------------------------
def sshd(state: Path, profile: dict[str, Any] | None) -> int:
    """Register this worker and wait, as `sshd -De` serves until it is stopped."""
    if not profile or not visible(profile):
        sys.stderr.write("sshd: this worker sees no GPU; nothing to register\n")
    hosts = state / "hosts"
    hosts.mkdir(parents=True, exist_ok=True)
    name = socket.gethostname().split(".")[0]
    path = hosts / f"{name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(host_record(profile or {}, name)))
    tmp.replace(path)
    sys.stderr.write("Server listening on 0.0.0.0 port 22.\n")

    def stop(signum: int, frame: object) -> None:
        path.unlink(missing_ok=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        time.sleep(3600)


# ---- mpirun ----------------------------------------------------------------------------
_WITH_VALUE = {
    "--mca",
    "-mca",
    "--bind-to",
    "-bind-to",
    "--map-by",
    "-map-by",
    "-N",
    "--npernode",
    "-npernode",
    "--rank-by",
}


def forwarded(argv: list[str]) -> set[str]:
    """The environment variables an Open MPI command line forwards (`-x NAME`)."""
    return {argv[i + 1].partition("=")[0] for i, a in enumerate(argv[:-1]) if a == "-x"}


def parse_mpirun(argv: list[str]) -> tuple[int | None, list[tuple[str, int]] | None, list[str]]:
    """`(np, [(host, slots)] or None, program argv)` from an Open MPI command line."""
    np_, hosts, i = None, None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-np", "-n", "--np"):
            np_, i = int(argv[i + 1]), i + 2
        elif a in ("--host", "-H", "-host"):
            hosts = []
            for part in argv[i + 1].split(","):
                name, _, slots = part.partition(":")
                hosts.append((name, int(slots or 1)))
            i += 2
        elif a in ("--hostfile", "-hostfile", "--machinefile"):
            hosts, i = read_hostfile(Path(argv[i + 1])), i + 2
        elif a in ("-x",):
            i += 2
        elif a == "--mca" or a in _WITH_VALUE:
            i += 3 if a in ("--mca", "-mca") else 2
        elif a.startswith("-"):
            i += 1
        else:
            return np_, hosts, argv[i:]
    return np_, hosts, []


def read_hostfile(path: Path) -> list[tuple[str, int]]:
    """An Open MPI hostfile: `host slots=N` per line."""
    hosts = []
    for line in path.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            slots = next((int(w[6:]) for w in words[1:] if w.startswith("slots=")), 1)
            hosts.append((words[0], slots))
    return hosts


def _daemon_failed(host: str) -> int:
    sys.stderr.write(
        f"ssh: connect to host {host} port 22: Connection refused\n"
        "--------------------------------------------------------------------------\n"
        "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:\n\n"
        "* not finding the required libraries and/or binaries on\n"
        "  one or more nodes.\n"
        "--------------------------------------------------------------------------\n"
    )
    return 1


def _no_library(program: str, rank: int) -> int:
    """A rank ssh started without the image's LD_LIBRARY_PATH: the loader's error, mpirun's."""
    name = Path(program).name
    sys.stderr.write(
        f"{name}: error while loading shared libraries: libnccl.so.2: cannot open shared "
        "object file: No such file or directory\n"
        "--------------------------------------------------------------------------\n"
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "--------------------------------------------------------------------------\n"
        "--------------------------------------------------------------------------\n"
        f"mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        f"the job to be terminated. The first process to do so was:\n\n"
        f"  Process name: [[1,1],{rank}]\n  Exit code:    {NO_LIBRARY}\n"
        "--------------------------------------------------------------------------\n"
    )
    return NO_LIBRARY


def mpirun(state: Path, argv: list[str], env: dict[str, str]) -> int:
    """Find every host's daemon, lay out the ranks by slot, run the program with them."""
    np_, hosts, program = parse_mpirun(argv)
    if hosts is None and env.get("OMPI_MCA_orte_default_hostfile"):
        hosts = read_hostfile(Path(env["OMPI_MCA_orte_default_hostfile"]))
    if not program:
        sys.stderr.write("mpirun: no executable was given\n")
        return 1
    local = socket.gethostname().split(".")[0]
    hosts = hosts or [(local, 1)]
    slots = sum(s for _, s in hosts)
    np_ = np_ or slots
    if np_ > slots:
        sys.stderr.write(
            f"There are not enough slots available in the system to satisfy the "
            f"{np_} slots that were requested by the application\n"
        )
        return 1
    world = []
    for host, count in hosts:
        short = host.split(".")[0]
        record, end = None, time.monotonic() + SSH_SECONDS
        while record is None:
            try:
                record = json.loads((state / "hosts" / f"{short}.json").read_text())
            except (OSError, ValueError):
                if time.monotonic() >= end:
                    return _daemon_failed(host)
                time.sleep(0.5)
        world.append({**record, "slots": count})
    binary = shutil.which(program[0], path=env.get("PATH"))
    if binary is None:
        sys.stderr.write(f"mpirun was unable to find the specified executable file: {program[0]}\n")
        return 1
    if "LD_LIBRARY_PATH" not in forwarded(argv):
        starts = [sum(h["slots"] for h in world[:i]) for i in range(len(world))]
        remote = [r for r, h in zip(starts, world, strict=True) if h["hostname"] != local]
        if remote:
            return _no_library(program[0], remote[0])
    world_file = state / f"world-{os.getpid()}.json"
    world_file.write_text(json.dumps({"np": np_, "hosts": world}))
    return subprocess.call([binary, *program[1:]], env={**env, WORLD_ENV: str(world_file)})


# ---- all_reduce_perf -------------------------------------------------------------------
def _float(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: the most decimals (2, 1, 0) that fit the width."""
    for decimals in (2, 1, 0):
        text = f"{value:{width}.{decimals}f}"
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}"


def _columns(*cells: str) -> str:
    """A table header line's cells, at the widths nccl-tests prints them."""
    widths = (10, 12, 8, 6, 6, *((7, 6, 6, 6) * 2))
    return "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=False))


def ranks(world: dict[str, Any], profile: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per rank, by slot, each on its own host's device."""
    if not world:
        record = host_record(profile or {}, socket.gethostname().split(".")[0])
        world = {"np": len(record["gpus"]), "hosts": [{**record, "slots": len(record["gpus"])}]}
    out: list[dict[str, Any]] = []
    for h in world["hosts"]:
        for device in range(h["slots"]):
            if len(out) < world["np"]:
                out.append({**h, "device": device})
    return out


def release(version: str) -> tuple[int, ...]:
    """`2.16.9` -> `(2, 16, 9)`."""
    return tuple(int(p) for p in version.split("."))


def image_version(image: str) -> str:
    """The nccl-tests release an image's tag names (`...-testsv2.16.9`), else VERSION."""
    m = re.search(r"tests-?v?(\d+\.\d+\.\d+)", image.rpartition(":")[2])
    return m.group(1) if m else VERSION


def reduced_max(max_bytes: int, memory_mib: int, version: tuple[int, ...], check: bool) -> int:
    """nccl-tests' cap on maxBytes for the smallest GPU (src/common.cu, run())."""
    if memory_mib <= 0 or version < (2, 10):  # 1ae8cdc (v2.10.0) added the cap
        return max_bytes
    memory = memory_mib << 20
    reserve = min(-(-memory // (16 * GIB)) * GIB, 4 * GIB) if version >= (2, 16, 6) else 0
    return min(max_bytes, (memory - reserve - GIB) // (3 if check else 2))


def data_error_exit(version: tuple[int, ...]) -> int:
    """What a run with wrong data returns: EXIT_FAILURE, then testNumResults (6, then 7)."""
    if version < (2, 17, 3):
        return 1
    return 6 if version < (2, 17, 7) else 7


def report(
    args: dict[str, int], layout: list[dict[str, Any]], program: str, version: str = VERSION
) -> tuple[str, int]:
    """Rank 0's output and the exit code, in the format of nccl-tests `version`."""
    v = release(version)
    lo, hi, factor = args["b"], args["e"], max(2, args["f"])
    faults = {f for r in layout for f in r["faults"]}
    peak = min((r["busbw"] for r in layout), default=0.0)
    if "nccl-degraded" in faults:
        peak *= DEGRADED
    lines = []
    if v >= (2, 17, 4):
        lines.append(
            f"# nccl-tests version {version} nccl-headers={NCCL_CODE} nccl-library={NCCL_CODE}"
        )
    if v >= (2, 16, 7):
        lines.append(f"# Collective test starting: {program}")
    # Before 2.13 (as the DGX-2 capture of tests/data/real/nccl-tests prints it): no
    # `agg iters`/`graph` in the header, no `root` column, and an `error` column (the
    # largest delta, %5.0le) where later releases count `#wrong` (51af557, v2.13.0).
    old = v < (2, 13)
    lines += [
        f"# nThread 1 nGpus {args['g']} minBytes {lo} maxBytes {hi} step: {factor}(factor) "
        f"warmup iters: {args['w']} iters: {args['n']} "
        + (
            f"validation: {args['c']}"
            if old
            else f"agg iters: 1 validation: {args['c']} graph: 0"
            + (" unalign: 0" if v >= (2, 18, 2) else "")
        ),
        "#",
        "# Using devices",
    ]
    for n, r in enumerate(layout):
        bus = BUS[r["gpus"][r["device"]] % len(BUS)] if r["device"] < len(r["gpus"]) else 0
        pid, host, device = r["pid"] + r["device"], r["hostname"], r["device"]
        # `Group` from v2.13.4 (d313d20), the PCI domain and device from v2.14.1 (b4300cc)
        where = f"[0x{bus:02x}]" if v < (2, 14, 1) else f"[{0:04x}:{bus:02x}:{0:02x}]"
        if v < (2, 13, 4):
            lines.append(
                f"#   Rank {n:2d} Pid {pid:6d} on {host:>10} device {device:2d} "
                f"{where} {r['product']}"
            )
            continue
        lines.append(
            f"#  Rank {n:2d} Group {0:2d} Pid {pid:6d} on {host:>10} device "
            f"{device:2d} {where} {r['product']}"
        )
    memory = min((int(r.get("memoryMiB") or 0) for r in layout), default=0)
    top = reduced_max(hi, memory, v, bool(args["c"]))
    if v < (2, 10) and memory and (3 if args["c"] else 2) * hi > memory << 20:
        # v2.9.0 AllocateBuffs: cudaMalloc of send, recv (and expected) at maxBytes, each
        # through CUDACHECK, which prints and returns testCudaError (2) up to main
        host = layout[0]["hostname"] if layout else "localhost"
        lines += [
            f"{host}: Test CUDA failure common.cu:{561 if 2 * hi > memory << 20 else 562} "
            "'out of memory'",
            f" .. {host}: Test failure common.cu:767",
            "",
        ]
        return "\n".join(lines) + "\n", 2
    if top < hi:
        lines += ["#", f"# Reducing maxBytes to {top} due to memory limitation"]
        lo = min(lo, top) if v >= (2, 16, 6) else lo
    if old:
        lines += [
            "#",
            "#" + " " * 53 + "out-of-place                       in-place",
            "#       size         count    type   redop     time   algbw   busbw  error"
            "     time   algbw   busbw  error",
            "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)"
            "            (us)  (GB/s)  (GB/s)",
        ]
    else:
        lines += [
            "#",
            "# "
            + _columns("", "", "", "", "")
            + "           out-of-place                       in-place",
            "# "
            + _columns(
                "size",
                "count",
                "type",
                "redop",
                "root",
                *(["time", "algbw", "busbw", "#wrong"] * 2),
            ),
            "# "
            + _columns("(B)", "(elements)", "", "", "", *(["(us)", "(GB/s)", "(GB/s)", ""] * 2)),
        ]
    nranks, total, rows, errors = len(layout), 0.0, 0, 0
    step = lo
    while step <= top:
        busbw = peak * step / (step + HALF_BYTES)
        algbw = busbw * nranks / (2 * (nranks - 1)) if nranks > 1 else busbw
        usec = step / (algbw * 1e3) if algbw else 0.0
        wrong = step // 4 // 1024 if "nccl-wrong" in faults and step >= WRONG_FROM else 0
        errors += 1 if wrong else 0
        if old:  # the largest delta: float sums of this size are exact, a wrong one is off by 1
            checked = f"{1.0 if wrong else 0.0:5.0e}" if args["c"] else "  N/A"
            half = f"  {_float(usec, 7)}  {_float(algbw, 6)}  {_float(busbw, 6)}  {checked}"
            lines.append(f"{step:12d}  {step // 4:12d}  {'float':>6}  {'sum':>6}" + half * 2)
        else:
            checked = f"{wrong:6g}" if args["c"] else "   N/A"
            half = f"  {_float(usec, 7)}  {_float(algbw, 6)}  {_float(busbw, 6)}  {checked}"
            lines.append(
                f"{step:12d}  {step // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}" + half * 2
            )
        total, rows = total + busbw, rows + 1
        step *= factor
    average = f"{round(total / rows, 4) if rows else 0:g}"
    if v >= (2, 17, 7):
        lines += [
            f"# {'Out of bounds values':<20} : {errors} {'FAILED' if errors else 'OK'}",
            f"# {'Avg bus bandwidth':<20} : {average} ",
        ]
    else:
        lines += [
            f"# Out of bounds values : {errors} {'FAILED' if errors else 'OK'}",
            f"# Avg bus bandwidth    : {average} ",
        ]
    lines.append("#")
    if v >= (2, 16, 7):
        lines.append(f"# Collective test concluded: {program}")
    lines.append("")
    return "\n".join(lines) + "\n", data_error_exit(v) if errors else 0


def parse_test_args(argv: list[str]) -> dict[str, int]:
    """The options all_reduce_perf reads (defaults as nccl-tests has them)."""
    args = {"b": 32 << 20, "e": 32 << 20, "f": 1, "g": 1, "c": 1, "n": 20, "w": 1}
    sized = {"b", "e"}
    for i in range(0, len(argv) - 1, 2):
        key = argv[i].lstrip("-")[:1]
        if key in args:
            args[key] = size(argv[i + 1]) if key in sized else int(argv[i + 1])
    return args


def all_reduce_perf(profile: dict[str, Any] | None, argv: list[str], env: dict[str, str]) -> int:
    """Print the run as rank 0 does; the exit code nccl-tests would return."""
    world = json.loads(Path(env[WORLD_ENV]).read_text()) if env.get(WORLD_ENV) else {}
    if not world and not (profile and visible(profile)):  # alone, it runs on its own GPUs
        sys.stderr.write("Invalid number of GPUs: 1 requested but only 0 were found.\n")
        return 2
    version = env.get(VERSION_ENV) or VERSION
    text, code = report(parse_test_args(argv), ranks(world, profile), "all_reduce_perf", version)
    sys.stdout.write(text)
    return code


def main(argv: list[str]) -> int:
    """`STATE PROFILE.json TOOL ARGS...`."""
    state, profile_path, tool, args = Path(argv[0]), argv[1], argv[2], argv[3:]
    with open(profile_path, encoding="utf-8") as f:
        profile = json.load(f)
    env = dict(os.environ)
    if tool == "sshd":
        return sshd(state, profile)
    if tool == "mpirun":
        return mpirun(state, args, env)
    return all_reduce_perf(profile, args, env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
