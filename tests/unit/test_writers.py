"""Writing outputs never destroys what is there: devices, FIFOs and symlinks survive."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from aicr.cli.main import run
from aicr.errors import FileFormatError
from aicr.writers import check_writable, check_writable_dir, write_file

DATA = Path(__file__).parents[1] / "data"
RECIPE = str(DATA / "recipes/small.yaml")
SNAPSHOT = str(DATA / "snapshots/ok.yaml")


def _no_cluster_report(capsys: pytest.CaptureFixture[str], *outputs: str) -> int:
    code = run(["validate", "-r", RECIPE, "-s", SNAPSHOT, "--no-cluster", "--phase", "deployment",
                *outputs])
    capsys.readouterr()
    return code


def test_a_regular_file_is_replaced_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old and longer than the new text")
    write_file(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_symlink_stays_a_symlink_and_its_target_gets_the_text(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_file(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_a_dangling_symlink_creates_what_it_points_at(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "later.json")
    write_file(link, "new")
    assert link.is_symlink() and (tmp_path / "later.json").read_text() == "new"


def test_a_fifo_is_written_through(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert _no_cluster_report(capsys, "-o", str(fifo)) == 0
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert b'"reportFormat": "CTRF"' in received[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_character_device_survives_as_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the numbers of /dev/null
    junit = tmp_path / "junit-null"
    os.mknod(junit, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    try:
        code = _no_cluster_report(capsys, "-o", str(null), "--junit", str(junit))
    except PermissionError:  # pragma: no cover - a nodev mount refuses opening the node
        pytest.skip("the temporary folder is mounted nodev")
    assert code == 0
    assert stat.S_ISCHR(null.lstat().st_mode) and stat.S_ISCHR(junit.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit-null", "null"]


def test_dev_stdout_is_written_through(capfd: pytest.CaptureFixture[str]) -> None:
    write_file(Path("/dev/stdout"), "through stdout\n")
    assert capfd.readouterr().out == "through stdout\n"


def test_an_unwritable_target_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError) as exc:
        write_file(tmp_path / "missing" / "r.json", "x", what="report")
    assert str(exc.value).startswith(f"{tmp_path}/missing/r.json: cannot write report: ")


@pytest.mark.parametrize(
    ("target", "problem"),
    [("-", None), ("cm://ns/name", None), ("{tmp}/r.json", None), ("{tmp}", "is a folder"),
     ("{tmp}/no/r.json", "folder {tmp}/no does not exist")],
    ids=["stdout", "configmap", "new-file", "folder", "missing-folder"],
)
def test_check_writable(tmp_path: Path, target: str, problem: str | None) -> None:
    found = check_writable(target.format(tmp=tmp_path), "--output")
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem.format(tmp=tmp_path) in found.problem


def test_check_writable_dir_walks_up_to_an_existing_folder(tmp_path: Path) -> None:
    assert check_writable_dir(str(tmp_path / "v1.35" / "x"), "--evidence-dir") is None
    (tmp_path / "file").write_text("")
    found = check_writable_dir(str(tmp_path / "file" / "x"), "--evidence-dir")
    assert found is not None and found.problem.endswith(f"{tmp_path}/file is not a folder")
