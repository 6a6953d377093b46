"""Tool roots for real: a forky root made by mmdebstrap, entered with chroot in a private mount namespace, the
build folders bound at their own paths; nothing stays mounted after the program ends, even when it is killed."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from crosslane.config import ToolRootSpec
from crosslane.errors import StepFailed
from crosslane.host import hostsetup, toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner

SPEC = ToolRootSpec(name="probe", suite="forky", mirror="http://deb.debian.org/debian", packages=(),
                    architectures=("amd64",))


def mounts_under(root: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
            if line.split()[1].startswith(str(root))]


@pytest.fixture(scope="module")
def forky() -> toolroot.ToolRoot:
    runner = Runner(Log(io.StringIO()))
    if toolroot.entry_mode(runner) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    hostsetup.install(runner, ("mmdebstrap",))  # what `invoke baremetal` installs first; the tests need it too
    return toolroot.ensure(runner, SPEC)


@pytest.mark.network
@pytest.mark.spawns
def test_the_root_is_cached_by_its_inputs_with_a_manifest(forky: toolroot.ToolRoot) -> None:
    assert forky.path == toolroot.root_path(SPEC) and forky.path.name.startswith("probe-forky-")
    packages = forky.packages()
    assert "apt:amd64" in packages and "libc6:amd64" in packages
    assert toolroot.find(SPEC) == forky
    other = ToolRootSpec(**{**SPEC.__dict__, "packages": ("hello",)})
    assert toolroot.root_key(other) != forky.key


@pytest.mark.network
@pytest.mark.spawns
def test_a_program_runs_inside_with_the_build_folders_bound(forky: toolroot.ToolRoot, tmp_path: Path) -> None:
    runner = Runner(Log(io.StringIO()))
    mode = toolroot.require_mode(runner)
    work = tmp_path / "build"
    work.mkdir()
    argv = ["sh", "-c", 'cat /etc/debian_version > out.txt; ls /usr/bin/apt-get >> out.txt; echo "$PWD" >> out.txt']
    result = runner.run(toolroot.command(forky, argv, binds=[work], cwd=work, mode=mode), timeout=60)
    assert result.ok
    version, apt, cwd = (work / "out.txt").read_text().splitlines()
    host_version = Path("/etc/debian_version").read_text().strip()
    assert version != host_version and ("forky" in version or version.startswith("14"))  # the root's, not the host's
    assert apt == "/usr/bin/apt-get" and cwd == str(work)
    assert mounts_under(forky.path) == []  # the namespace's mounts went with it


@pytest.mark.network
@pytest.mark.spawns
def test_a_killed_program_leaves_nothing_mounted(forky: toolroot.ToolRoot, tmp_path: Path) -> None:
    argv = toolroot.command(forky, ["sleep", "30"], binds=[tmp_path], cwd=tmp_path,
                            mode=toolroot.require_mode(Runner(Log(io.StringIO()))))
    with subprocess.Popen(argv, start_new_session=True) as process:
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGKILL)
    assert mounts_under(forky.path) == []


@pytest.mark.network
@pytest.mark.spawns
def test_a_missing_program_is_named(forky: toolroot.ToolRoot, tmp_path: Path) -> None:
    argv = toolroot.command(forky, ["no-such-tool"], binds=[tmp_path], cwd=tmp_path,
                            mode=toolroot.require_mode(Runner(Log(io.StringIO()))))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 127 and "no-such-tool" in done.stderr and "inside the root" in done.stderr


def test_the_command_is_argv_only_and_binds_each_folder_once(tmp_path: Path) -> None:
    root = toolroot.ToolRoot(SPEC, tmp_path / "root", "k")
    argv = toolroot.command(root, ["cc", "a b.c"], binds=[tmp_path / "x", tmp_path / "x", tmp_path / "y"],
                            cwd=tmp_path, mode="userns")
    assert argv[:8] == ["unshare", "--map-root-user", "--mount", "--pid", "--fork", "--propagation", "private", "--"]
    assert argv.count("--bind") == 2 and argv[-3:] == ["--", "cc", "a b.c"]


@pytest.mark.network
@pytest.mark.spawns
def test_the_qemu_user_root_runs_a_target_program_outside_it(cfg: object, tmp_path: Path) -> None:
    """versions.toml's [toolroots.qemu-user]: forky's static qemu-user, run from the root's path on the host (as
    arches.arm64.emulator does) on a real aarch64 program: the newer qemu arm64's programs need."""
    from crosslane.archs import Arch
    from crosslane.config import Config
    from crosslane.guest import qemu

    assert isinstance(cfg, Config)
    runner = Runner(Log(io.StringIO()))
    hostsetup.install(runner, ("mmdebstrap",))
    root = toolroot.ensure(runner, cfg.toolroots["qemu-user"])
    binary = qemu.from_toolroot(root.path, "qemu-user", Arch.ARM64)
    assert int(qemu.version(runner, binary).split(".")[0]) >= 10  # Debian 12's own is 7.2
    source = tmp_path / "hello.c"
    source.write_text('#include <stdio.h>\nint main(void) { puts("hello from aarch64"); return 0; }\n')
    program = tmp_path / "hello"
    runner.run(["aarch64-linux-gnu-gcc", "-static", "-O1", "-o", program, source], quiet=True)
    assert runner.run([binary, "-cpu", "max", program], quiet=True).output.strip() == "hello from aarch64"


@pytest.mark.spawns
def test_the_entry_mode_that_worked_is_kept_and_none_is_probed_again(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A no-op build need not run unshare: the mode found is read back under the same unshare binary, user and
    namespace settings; a host where no mode worked is asked again each time (fail closed)."""
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "unshare"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n[ "$1" = --mount ] && exit "${{REFUSE:-0}}"\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    runner = Runner(Log(io.StringIO()))
    assert toolroot.entry_mode(runner) == "root" and toolroot.entry_mode(runner) == "root"
    assert calls.read_text().splitlines() == [" ".join([*toolroot.PROBE_NAMESPACES, "--", "mount", "-t", "proc", "-o",
                                                        "nosuid,nodev,noexec", "proc", "/proc"])]
    fake.write_text(fake.read_text() + "\n")  # another unshare binary: probed again, and it refuses this time
    monkeypatch.setenv("REFUSE", "1")
    assert toolroot.entry_mode(runner) is None and toolroot.entry_mode(runner) is None
    assert len(calls.read_text().splitlines()) == 1 + 2 * 2


def test_the_entry_probe_asks_for_every_namespace_entering_uses(tmp_path: Path) -> None:
    root = toolroot.ToolRoot(SPEC, tmp_path / "root", "k")
    argv = toolroot.command(root, ["true"], binds=[], cwd=tmp_path, mode="root", network=False)
    used = argv[1:argv.index("--")]
    assert set(used) <= set(toolroot.PROBE_NAMESPACES), used


@pytest.mark.spawns
def test_the_entry_probe_passes_here_as_root(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("entering as root is probed as root")
    runner = Runner(Log(io.StringIO()))
    unshare = runner.find("unshare")
    assert unshare is not None
    assert toolroot._probe_mode(runner, unshare) == "root"


@pytest.mark.spawns
@pytest.mark.skipif(os.geteuid() != 0, reason="mmdebstrap mounts in the host's namespace only as root")
def test_mmdebstrap_killed_while_it_has_mounts_leaves_none_and_no_staging(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in mmdebstrap that mounts what the real one mounts in the root it makes (a proc), then is killed."""
    tools = tmp_path / "bin"
    tools.mkdir()
    # its arguments end SUITE TARGET MIRROR
    (tools / "mmdebstrap").write_text('#!/bin/sh\ntarget=$(eval echo "\\${$(($# - 1))}")\n'
                                      'mkdir -p "$target/proc" && mount -t proc proc "$target/proc" && sleep 60\n')
    (tools / "mmdebstrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolroot, "find", lambda spec: None)
    runner = Runner(Log(io.StringIO()))
    original = runner.run

    def soon(argv: object, **options: object) -> object:
        return original(argv, **{**options, "timeout": 3.0})  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "run", soon)
    with pytest.raises(StepFailed, match="timed out"):
        toolroot.ensure(runner, SPEC)
    assert mounts_under(tmp_path) == []
    assert not list((tmp_path / "cache").rglob("*.partial"))


@pytest.mark.network
@pytest.mark.spawns
def test_a_folder_bound_inside_a_read_only_one_stays_writable(forky: toolroot.ToolRoot, tmp_path: Path) -> None:
    """ccache's folder under a read-only cache: the outer bind goes first, the inner one over it (the other way round
    the read-only cache hid the writable folder)."""
    outer = tmp_path / "cache"
    inner = outer / "ccache"
    inner.mkdir(parents=True)
    (outer / "source.c").write_text("int x;\n")
    argv = toolroot.command(forky, ["sh", "-c", "echo made > ccache/f && ! touch source.c 2>/dev/null"],
                            binds=[inner], read_only=[outer], cwd=outer)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (inner / "f").read_text() == "made\n"
    assert mounts_under(tmp_path) == []
