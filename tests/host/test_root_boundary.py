"""A root crosslane enters (a tool root, a board) is a boundary, for real (chroot and namespaces, as root here): a
program inside reaches no host file outside its binds, not through /proc of a process outside either, writes no
read-only bind, has no host network, cannot chroot or mount its way out, and sees no host device; a link inside the
root never points a bind at the host. The root is an empty folder with the host's /usr bound read-only."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading
from pathlib import Path

import pytest

from crosslane.config import ToolRootSpec
from crosslane.host import toolroot
from crosslane.host.enter_root import CANNOT_ENTER
from crosslane.log import Log
from crosslane.process.runner import Result, Runner

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("6 roots and boards as boundaries")]

if os.geteuid() != 0:  # pragma: no cover - CI and this machine run as root
    pytest.skip("entering a root with chroot needs root here", allow_module_level=True)

HOST = ("/usr", "/bin", "/lib", "/lib64")


def enter(root: Path, script: str, *, binds: tuple[Path, ...] = (), read_only: tuple[Path, ...] = (),
          network: bool = False) -> Result:
    spec = ToolRootSpec(name="test", suite="forky", mirror="http://x", packages=(), architectures=("amd64",))
    where = toolroot.ToolRoot(spec, root, "k")
    argv = toolroot.command(where, ["/bin/sh", "-c", script], binds=binds, cwd=Path("/"),
                            read_only=(*(Path(h) for h in HOST if Path(h).exists()), *read_only), network=network)
    return Runner(Log(io.StringIO())).run(argv, check=False, quiet=True, timeout=60)


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("root", "outside", "shared")}
    for folder in found.values():
        folder.mkdir()
    (found["outside"] / "secret.txt").write_text("the host's\n")
    (found["shared"] / "given.txt").write_text("read me\n")
    return found


def test_no_host_file_through_proc_and_no_host_device(places: dict[str, Path]) -> None:
    secret = places["outside"] / "secret.txt"
    done = enter(places["root"], f'echo "pid=$$ ppid=$PPID"; cat /proc/$PPID/root{secret} /proc/1/root{secret} '
                                 f'{secret} 2>&1; ls /dev; ls /proc | grep -c "^[0-9]"')
    assert done.returncode == 0, done.output
    assert "the host's" not in done.output
    assert "pid=1 ppid=0" in done.output  # its own PID namespace: no process outside to reach through
    assert "vda" not in done.output and "sda" not in done.output and "null" in done.output


def test_read_only_binds_and_no_way_out(places: dict[str, Path]) -> None:
    given = places["shared"] / "given.txt"
    done = enter(places["root"], f'cat {given}; echo x > {given} 2>&1 || echo write-refused; '
                                 'chroot / true 2>&1 || echo chroot-refused; '
                                 'mount -t tmpfs x /usr 2>&1 || echo mount-refused; '
                                 'grep CapBnd /proc/self/status', read_only=(places["shared"],))
    assert "read me" in done.output and "write-refused" in done.output, done.output
    assert "chroot-refused" in done.output and "mount-refused" in done.output, done.output
    assert given.read_text() == "read me\n"
    bounding = int(next(line for line in done.output.splitlines() if line.startswith("CapBnd:")).split()[1], 16)
    assert not bounding & (1 << 21) and not bounding & (1 << 18) and not bounding & (1 << 19)  # ADMIN, CHROOT, PTRACE


def test_no_host_network(places: dict[str, Path]) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(10)

    def accept() -> None:
        with contextlib.suppress(OSError):  # the timeout, or the socket closed by the test
            accepted.append(server.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        done = enter(places["root"], f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 3)'"
                                     " 2>&1 | tail -1; echo end")
        assert "end" in done.output and ("refused" in done.output.lower() or "unreachable" in done.output.lower()), \
            done.output
        assert not accepted
    finally:
        server.close()
        thread.join(timeout=15)


def test_a_link_in_the_root_never_points_a_bind_at_the_host(places: dict[str, Path]) -> None:
    root, outside, shared = places["root"], places["outside"], places["shared"]
    # A tampered root: the first folder of the bind's path is a link to a folder of the host.
    first = shared.parts[1]
    (root / first).symlink_to(outside)
    before = sorted(p.name for p in outside.iterdir())
    done = enter(root, "true", binds=(shared,))
    assert done.returncode == CANNOT_ENTER, done.output
    assert "is a link" in done.output
    assert sorted(p.name for p in outside.iterdir()) == before  # nothing made on the host


def test_a_sealed_root_cannot_be_changed_from_inside(places: dict[str, Path]) -> None:
    """The root an image's emulator runs from (bare metal, semihosting) is read-only: a program in it writes only
    its binds and a /tmp of its own, and the cached root is as it was."""
    root = places["root"]
    (root / "etc").mkdir()
    (root / "etc" / "kept").write_text("as cached\n")
    spec = ToolRootSpec(name="test", suite="forky", mirror="http://x", packages=(), architectures=("amd64",))
    argv = toolroot.command(toolroot.ToolRoot(spec, root, "k"), [
        "/bin/sh", "-c", "echo changed > /etc/kept; touch /new 2>&1; echo scratch > /tmp/x && cat /tmp/x; "
                         f"echo out > {places['shared']}/written; cat /etc/kept"],
        binds=[places["shared"]], cwd=Path("/"), read_only=[Path(h) for h in HOST if Path(h).exists()], network=False,
        sealed=True)
    done = Runner(Log(io.StringIO())).run(argv, check=False, quiet=True, timeout=60)
    assert "Read-only file system" in done.output and "scratch" in done.output, done.output
    assert (root / "etc" / "kept").read_text() == "as cached\n" and not (root / "new").exists()
    assert not (root / "tmp" / "x").exists()  # the root's /tmp was a tmpfs of the run's own
    assert (places["shared"] / "written").read_text() == "out\n"  # the bind stays writable
