"""The install test's board: a clean riscv64 root of the target suite (python, its venv module, numpy from the
distribution), entered with chroot under real qemu-user, no network; venv + pip install --no-index of a wheel, as
a user on a board does it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.smokes import wheel_install

pytestmark = [pytest.mark.qemu, pytest.mark.network]


def pure_wheel(tmp_path: Path, requires: str = "") -> Path:
    tree = tmp_path / "tree" / "boardcheck-1.0"
    (tree / "boardcheck").mkdir(parents=True)
    (tree / "boardcheck" / "__init__.py").write_text("import numpy\nANSWER = int(numpy.int64(6) * 7)\n")
    info = tree / "boardcheck-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: boardcheck\nVersion: 1.0\nRequires-Dist: numpy\n"
                                   f"{requires}")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    subprocess.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", str(tmp_path), str(tree)], check=True,
                   capture_output=True)
    return tmp_path / "boardcheck-1.0-py3-none-any.whl"


@pytest.fixture
def board(tmp_path: Path) -> wheel_install.Board:
    cfg = config_mod.load()
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    spec = wheel_install.root_spec(ctx, "onnxruntime-genai", "3.14")
    profile = cfg.arches[Arch.RISCV64].profile("rvv128")
    return wheel_install.board(ctx, Arch.RISCV64, spec, tmp_path / "board", profile)


def test_a_wheel_installs_from_a_local_folder_and_imports_in_the_venv(board: wheel_install.Board, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wheel_install, "cache_dir", lambda: tmp_path / "cache")  # pip unpacked afresh: no bytecode
    wheel = tmp_path / "cp314" / "boardcheck-1.0-cp314-none-any.whl"
    wheel.parent.mkdir()
    pure_wheel(tmp_path).rename(wheel)  # the install test reads the CPython from the tag
    assert wheel_install.pip_install(board, wheel, 900) is None
    ran = board.run([str(wheel_install.VENV / "bin/python"), "-c",
                     "import boardcheck, sys; print(boardcheck.ANSWER, boardcheck.__file__, sys.prefix)"], 300)
    assert ran.ok, ran.output
    answer, where, prefix = ran.output.split()[-3:]
    assert answer == "42" and where.startswith(f"{wheel_install.VENV}/lib/python3.14/site-packages/")
    assert prefix == str(wheel_install.VENV)
    assert not (tmp_path / "board" / "crosslane" / "venv" / "bin" / "pip").exists()  # nothing but the one wheel
    found = wheel_install.pip_wheel(board.root)
    assert found is not None  # the pip step left pip's bytecode for the next board's pip (the root's own code)
    tree = wheel_install.pip_tree(found)
    assert tree.is_relative_to(tmp_path / "cache")
    assert list((tree / "pip/_internal").glob("__pycache__/*.cpython-314.pyc"))


def test_a_requirement_no_folder_has_fails_naming_it(board: wheel_install.Board, tmp_path: Path) -> None:
    wheel = tmp_path / "cp314" / "boardcheck-1.0-cp314-none-any.whl"
    wheel.parent.mkdir()
    pure_wheel(tmp_path, "Requires-Dist: onnxruntime>=1.20.1\n").rename(wheel)
    failed = wheel_install.pip_install(board, wheel, 900)
    assert failed is not None and "pip install from the index did not install it" in failed
    assert "onnxruntime" in failed


def test_the_board_has_no_network(board: wheel_install.Board) -> None:
    ran = board.run(["/usr/bin/python3.14", "-c", "import socket\ntry:\n socket.create_connection(('151.101.2.132', "
                     "80), 5)\nexcept OSError as e:\n print('unreachable', e.errno)\nelse:\n print('reached')"], 300)
    assert "unreachable" in ran.output and "reached\n" not in ran.output


def test_a_wheel_that_installs_but_does_not_work_fails_on_the_payloads_sentinel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An onnxruntime_genai without its native module: pip installs it, the genai payload in the venv fails, and the
    row says so (pip's success is not evidence)."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    tree = tmp_path / "tree" / "onnxruntime_genai-0.15.2"
    (tree / "onnxruntime_genai").mkdir(parents=True)
    (tree / "onnxruntime_genai" / "__init__.py").write_text('__version__ = "0.15.2"\n')
    info = tree / "onnxruntime_genai-0.15.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: onnxruntime-genai\nVersion: 0.15.2\n"
                                   "Requires-Dist: numpy>=1.21.6\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                                "Tag: cp314-cp314-linux_riscv64\n")
    subprocess.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", str(tmp_path), str(tree)], check=True,
                   capture_output=True)
    wheel = tmp_path / "onnxruntime_genai-0.15.2-cp314-cp314-linux_riscv64.whl"
    ctx = Context(config_mod.load(), Runner(Log(io.StringIO())))
    [row] = wheel_install.run(ctx, Arch.RISCV64, "onnxruntime-genai", [wheel], {}, 120)
    assert row.verdict.value == "FAIL", row
    assert row.subject == "wheel-install:cp314-linux_riscv64" and row.profile == "rvv128"
    assert "installed with pip; the payload in the venv: GENAI-BIND" in row.reason
