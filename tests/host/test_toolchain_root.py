"""A toolchain's compilers from a tool root: the wrappers' identity follows what the root holds."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from crosslane.config import ToolRootSpec
from crosslane.host import toolchains, toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner

pytestmark = pytest.mark.spawns  # the entry probe runs unshare

SPEC = ToolRootSpec(name="cc", suite="forky", mirror="http://deb.debian.org/debian", packages=("gcc-x",),
                    architectures=("amd64",))


def test_a_root_made_again_with_another_compiler_gets_other_wrappers(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    runner = Runner(Log(io.StringIO()))
    if toolroot.entry_mode(runner) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    root = toolroot.root_path(SPEC)
    root.mkdir(parents=True)
    places = toolchains.RootPlaces(binds=(tmp_path / "build",), read_only=(tmp_path / "cache",))
    found = []
    for version in ("16.1.0-1", "16.2.0-1"):  # the same spec, a rolling suite: another compiler inside
        (root / toolroot.MANIFEST).write_text(json.dumps({"inputs": {}, "packages": {"gcc-x:amd64": version}}))
        wrappers = toolchains.root_wrappers(runner, SPEC, ("x-gcc",), places)
        found.append(Path(wrappers["x-gcc"]))
        assert found[-1].is_file() and "enter_root.py" in found[-1].read_text()
    assert found[0] != found[1] and found[0].parent.parent == found[1].parent.parent == tmp_path / "cache/toolchains"


@pytest.fixture
def static_root(tmp_path: Path) -> toolroot.ToolRoot:
    """A root holding one static program (qemu-user's): enough to show what the root sees of the caller's folder."""
    runner = Runner(Log(io.StringIO()))
    if toolroot.entry_mode(runner) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    found = shutil.which("qemu-riscv64-static")
    if found is None:
        pytest.skip("qemu-riscv64-static is not installed (invoke setup installs it)")
    program = Path(found)
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    shutil.copy2(program, root / "usr/bin/qemu-riscv64-static")
    return toolroot.ToolRoot(SPEC, root, "key")


def run_wrapper(root: toolroot.ToolRoot, tmp_path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    runner = Runner(Log(io.StringIO()))
    mode = toolroot.entry_mode(runner)
    assert mode is not None
    script = toolroot.wrapper_script(root, "/usr/bin/qemu-riscv64-static", binds=(tmp_path / "build",), mode=mode,
                                     read_only=(tmp_path / "cache",))
    wrapper = tmp_path / "qemu-wrapper"
    wrapper.write_text(script)
    wrapper.chmod(0o755)
    for place in (tmp_path / "build", tmp_path / "cache"):
        place.mkdir(exist_ok=True)
    return subprocess.run([str(wrapper), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_a_wrapper_run_from_a_folder_no_bind_holds_works_there(tmp_path: Path,
                                                               static_root: toolroot.ToolRoot) -> None:
    """CI ran the compiler's version probe from a checkout at a path the root had never seen: the entry could not
    change into it (exit 125) and the preflight said the compiler did not run."""
    elsewhere = tmp_path / "elsewhere" / "checkout"
    elsewhere.mkdir(parents=True)
    assert not (static_root.path / elsewhere.relative_to("/")).exists()
    done = run_wrapper(static_root, tmp_path, elsewhere, "--version")
    assert done.returncode == 0 and "qemu-riscv64 version" in done.stdout, done.stderr
    # the folder is the caller's own, written through: qemu's log lands beside the caller (relative path)
    run_wrapper(static_root, tmp_path, elsewhere, "-cpu", "rv64", "-d", "in_asm", "-D", "out.log", "/nothing")
    assert (elsewhere / "out.log").is_file()


def test_a_wrapper_run_under_a_read_only_place_stays_read_only(tmp_path: Path,
                                                              static_root: toolroot.ToolRoot) -> None:
    inside = tmp_path / "cache" / "sources"
    inside.mkdir(parents=True)
    done = run_wrapper(static_root, tmp_path, inside, "-cpu", "rv64", "-d", "in_asm", "-D", "out.log", "/nothing")
    assert done.returncode not in (0, 125, 127), done.stderr  # entered, ran, and could not write there
    assert not (inside / "out.log").exists()
    link = tmp_path / "link-to-sources"  # the same place through a link is the same place: still read-only
    link.symlink_to(inside)
    done = run_wrapper(static_root, tmp_path, link, "-cpu", "rv64", "-d", "in_asm", "-D", "out.log", "/nothing")
    assert done.returncode not in (0, 125, 127) and not (inside / "out.log").exists(), done.stderr


def test_a_folder_bound_for_the_caller_does_not_open_a_read_only_place_under_it(tmp_path: Path,
                                                                              static_root: toolroot.ToolRoot) -> None:
    """Run from a folder that holds the read-only cache: the folder is bound first, the cache read-only over it."""
    (tmp_path / "cache").mkdir()
    done = run_wrapper(static_root, tmp_path, tmp_path, "-cpu", "rv64", "-d", "in_asm", "-D", "cache/out.log",
                       "/nothing")
    assert done.returncode not in (0, 125, 127) and not (tmp_path / "cache" / "out.log").exists(), done.stderr
    run_wrapper(static_root, tmp_path, tmp_path, "-cpu", "rv64", "-d", "in_asm", "-D", "here.log", "/nothing")
    assert (tmp_path / "here.log").is_file()


def test_a_wrapper_run_from_a_system_folder_runs_in_the_roots_own(tmp_path: Path,
                                                                  static_root: toolroot.ToolRoot) -> None:
    """The host's /usr (or /dev, /proc) is never bound over the root's: the caller there is in the root's copy."""
    (static_root.path / "usr/share").mkdir(parents=True)
    name = f"crosslane-test-{os.getpid()}.log"
    try:
        run_wrapper(static_root, tmp_path, Path("/usr/share"), "-cpu", "rv64", "-d", "in_asm", "-D", name, "/nothing")
        assert not (Path("/usr/share") / name).exists() and (static_root.path / "usr/share" / name).is_file()
    finally:
        (Path("/usr/share") / name).unlink(missing_ok=True)
