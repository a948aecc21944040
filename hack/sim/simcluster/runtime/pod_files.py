"""On-disk layout of one pod the runtime plays, under `<sim dir>/pods/`.

<ns>_<pod>_<uid>/
  volumes/<volume>/...          materialised ConfigMap/Secret/token/... files
  <container>/<restart>.log     CRI-format output of each run
  <container>/termination-log   bind-mounted at terminationMessagePath
  <container>/exited            written when the current run has ended
  <container>.proc.json         pid record, so sim-down can stop strays
  _sandbox.proc.json            the same for the pod's network namespace holder
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PodFiles:
    """Paths of one pod's folder."""

    root: Path

    @classmethod
    def for_pod(cls, pods_dir: Path, ns: str, name: str, uid: str) -> PodFiles:
        """Folder of the pod with this uid."""
        return cls(pods_dir / f"{ns}_{name}_{uid}")

    @classmethod
    def find(cls, pods_dir: Path, ns: str, name: str) -> PodFiles | None:
        """Newest folder of a pod by namespace and name (uid unknown to the caller)."""
        found = sorted(pods_dir.glob(f"{ns}_{name}_*"), key=lambda p: p.stat().st_mtime)
        return cls(found[-1]) if found else None

    def volume(self, name: str) -> Path:
        """Folder holding the files of volume `name`."""
        return self.root / "volumes" / name

    def container(self, name: str) -> Path:
        """Folder of container `name`."""
        d = self.root / name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def restarts(self, container: str) -> list[int]:
        """Run numbers that have a log, oldest first."""
        d = self.root / container
        return sorted(int(p.stem) for p in d.glob("*.log") if p.stem.isdigit())

    def log_path(self, container: str, previous: bool = False, run: int | None = None) -> Path:
        """Log of a given run, or of the current (or previous) one."""
        if run is None:
            runs = self.restarts(container) or [0]
            run = runs[-2] if previous and len(runs) > 1 else runs[-1]
        return self.root / container / f"{run}.log"

    def termination_log(self, container: str) -> Path:
        """File the container writes its termination message to."""
        return self.container(container) / "termination-log"

    def exited(self, container: str) -> bool:
        """True once the container's current run has ended."""
        return (self.root / container / "exited").exists()

    def proc_record(self, container: str) -> Path:
        """Where the pid record of the container's process lives."""
        return self.root / f"{container}.proc.json"

    def sandbox_record(self) -> Path:
        """Pid record of the pod sandbox's holder (`_` is never in a container name)."""
        return self.root / "_sandbox.proc.json"
