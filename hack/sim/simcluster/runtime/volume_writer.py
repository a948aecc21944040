"""A volume folder's files replaced all at once, as the kubelet's atomic writer does.

<folder>/
  ..2026_12_01_15_40_19.<random>/<files>   the current set, written before it is shown
  ..data -> ..2026_12_01_15_40_19.<random>   swapped by one rename
  <name> -> ..data/<name>                    each top-level name the pod sees

A process reading the folder (through its bind mount) sees the old set or the
new one, never a file being written or a mix of both.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

DATA = "..data"


def current(folder: Path) -> dict[str, bytes] | None:
    """The files now shown (relative path -> content); None if the folder was never written."""
    data = folder / DATA
    if not data.is_symlink():
        return None
    shown = data.resolve()
    return {str(p.relative_to(shown)): p.read_bytes() for p in shown.rglob("*") if p.is_file()}


def write(folder: Path, files: dict[str, bytes], mode: int) -> None:
    """Show exactly `files` in `folder` (created if missing), replacing the previous set."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime())
    new = Path(tempfile.mkdtemp(prefix=stamp, dir=folder))
    new.chmod(0o755)
    for rel, content in files.items():
        p = new / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        p.chmod(mode)
    old = os.readlink(folder / DATA) if (folder / DATA).is_symlink() else None
    swap = folder / f"{DATA}_tmp"
    swap.unlink(missing_ok=True)
    swap.symlink_to(new.name)
    os.replace(swap, folder / DATA)
    names = {Path(rel).parts[0] for rel in files}
    for name in names:
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(f"{DATA}/{name}")
    for entry in folder.iterdir():
        if entry.is_symlink() and not entry.name.startswith("..") and entry.name not in names:
            entry.unlink()  # a key the source no longer has
    if old:
        shutil.rmtree(folder / old, ignore_errors=True)
