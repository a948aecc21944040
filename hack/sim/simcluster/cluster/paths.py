"""Where the simulator keeps its pins, binaries and run state.

Every location can be overridden by environment so CI, developers and tests
agree without assuming a particular checkout or virtual environment.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

SIM_ROOT = Path(__file__).resolve().parents[2]  # hack/sim
PROJECT_ROOT = SIM_ROOT.parent.parent
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


def read_pins() -> dict[str, str]:
    """Return the KEY=VALUE pins of hack/sim/pins.env."""
    pins: dict[str, str] = {}
    for line in (SIM_ROOT / "pins.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            pins[key.strip()] = value.strip()
    return pins


def cache_root() -> Path:
    """Root of the binary cache (outside git), as hack/sim/cache.sh computes it."""
    if os.environ.get("AICR_SIM_CACHE"):
        return Path(os.environ["AICR_SIM_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "aicr-sim"


def bin_dir() -> Path:
    """Folder of the binaries for the current pins (it may not exist yet)."""
    p = read_pins()
    key = f"k8s-{p['KUBERNETES_VERSION']}_etcd-{p['ETCD_VERSION']}_kwok-{p['KWOK_VERSION']}"
    return cache_root() / key / "bin"


def runsc_bin() -> Path:
    """gVisor's runsc as runsc.sh unpacks it for the current pins (it may not exist yet)."""
    version = read_pins()["RUNSC_DEB_VERSION"].replace("~", "_").replace("+", "_")
    return cache_root() / f"runsc-{version}" / "bin" / "runsc"


def uname_shim() -> Path:
    """The uname(2) shim as uname-shim.sh compiles it from its source (it may not exist yet)."""
    source = Path(__file__).resolve().parents[1] / "runtime" / "uname_shim.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    return cache_root() / f"uname-shim-{digest}" / "libuname.so"


def missing_binaries() -> list[str]:
    """Names of the binaries not yet built for the current pins."""
    d = bin_dir()
    return [b for b in BINARIES if not os.access(d / b, os.X_OK)]


def sim_dir() -> Path:
    """Run folder: `$AICR_SIM_DIR`, else `.sim/` under the project root."""
    return Path(os.environ.get("AICR_SIM_DIR") or PROJECT_ROOT / ".sim")
