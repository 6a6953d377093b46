"""Run a program inside a root (a tool root, a board): bind the given folders at their own paths, chroot, drop
the capabilities a program there does not need, exec.

Started by host/toolroot.py (and the install test's board) as `unshare --mount --pid --fork --propagation private
[--map-root-user] [--net] -- python3 enter_root.py ROOT [--bind DIR]... [--bind-ro DIR]... [--read-only-root]
[--bind-cwd] --cwd DIR -- PROGRAM ARGS...`: the mounts live in that private mount namespace and vanish with its last
process.
The root is a boundary, not a convenience:
- with --read-only-root the root itself is mounted read-only (its /tmp a tmpfs of its own): a program run from a
  cached root (the emulator of a bare-metal image) cannot change what later runs use;
- every folder made for a bind is made one component at a time without following a link (a link inside the
  root, say from a tampered cache, would otherwise point the mkdir or the mount at the host), and the mount goes
  onto the folder opened that way;
- /proc is a fresh one of the program's own PID namespace (no /proc/<pid>/root or /proc/<pid>/ns of a process
  outside), /sys read-only, and /dev (as root) only null, zero, full, random, urandom and tty;
- with --bind-cwd (a tool's wrapper: a compiler works in the folder it is run from) the --cwd folder, by its real
  path, is bound writable too when no bind holds it already and it is none of the root's system folders, so a tool
  run from anywhere sees its folder at its own path;
- the program runs with no_new_privs and without the capabilities that would leave the root (chroot, mount,
  ptrace, modules, raw I/O, network administration, device nodes).
stdlib only (the host's python runs it). Exit status: the program's own; 125 when the root cannot be entered
(the reason on stderr).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import subprocess
import sys
from pathlib import Path

CANNOT_ENTER = 125
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# linux/capability.h: what a build tool or a board's program never needs, and what would let it out.
DROPPED = {"CAP_DAC_READ_SEARCH": 2, "CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BROADCAST": 11, "CAP_NET_ADMIN": 12,
           "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18,
           "CAP_SYS_PTRACE": 19, "CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_TIME": 25,
           "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
           "CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
           "CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
           "CAP_CHECKPOINT_RESTORE": 40}
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38


class Refused(Exception):
    pass


def folder_in(root: Path, path: Path, *, file: bool = False) -> int:
    """An O_PATH descriptor of *path* inside *root* (made when missing: folders, or an empty file last when *file*),
    walked one component at a time with O_NOFOLLOW: a link anywhere on the way is refused, never followed."""
    parts = path.relative_to("/").parts
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, name in enumerate(parts):
            last = index == len(parts) - 1
            try:
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                # another entry may make it first (two compilers started from one new folder): that is fine
                with contextlib.suppress(FileExistsError):
                    if last and file:
                        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                         0o644, dir_fd=fd))
                    else:
                        os.mkdir(name, 0o755, dir_fd=fd)
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(found.st_mode):
                raise Refused(f"{root / Path(*parts[:index + 1])} is a link: a bind is never made through one")
            flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC | (0 if last and file else os.O_DIRECTORY)
            following = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = following
        return fd
    except BaseException:
        os.close(fd)
        raise


def mount(*args: str, fd: int) -> None:
    """mount(8) onto the folder *fd* holds (passed to it under the same number: /proc/self/fd/<fd> there)."""
    subprocess.run(["mount", *args, f"/proc/self/fd/{fd}"], check=True, stdin=subprocess.DEVNULL, pass_fds=(fd,))


def bind(source: Path, root: Path, *, read_only: bool = False, recursive: bool = True) -> None:
    fd = folder_in(root, source, file=not source.is_dir())
    try:
        # onto the folder opened above, whatever a link made later would say
        mount("--rbind" if recursive else "--bind", str(source), fd=fd)
        if read_only:
            mount("-o", "remount,bind,ro", fd=fd)
    finally:
        os.close(fd)


def system(root: Path, *, as_root: bool) -> None:
    """/proc, /sys and /dev inside the root, as the module docstring says."""
    fd = folder_in(root, Path("/proc"))
    try:
        mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc", fd=fd)
    finally:
        os.close(fd)
    bind(Path("/sys"), root, read_only=True, recursive=False)
    if not as_root:  # in a user namespace the mounts are the user's own: the host's /dev is bound as it is
        bind(Path("/dev"), root)
        return
    fd = folder_in(root, Path("/dev"))
    try:
        mount("-t", "tmpfs", "-o", "nosuid,noexec,mode=755,size=64k", "crosslane-dev", fd=fd)
    finally:
        os.close(fd)
    for name in DEVICES:
        if Path(f"/dev/{name}").exists():
            bind(Path(f"/dev/{name}"), root, recursive=False)
    shm = folder_in(root, Path("/dev/shm"))  # noqa: S108  (a tmpfs of its own mounted there, not a host path)
    try:
        mount("-t", "tmpfs", "-o", "nosuid,nodev,size=64m", "crosslane-shm", fd=shm)
    finally:
        os.close(shm)


def drop_capabilities() -> None:
    """Out of the bounding set before exec (a root program's permitted set after exec is the bounding set), and no
    new privileges through set-user-ID programs."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    for number in DROPPED.values():
        if libc.prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: not known here
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {number})")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def in_user_namespace() -> bool:
    """Whether this process runs in a user namespace of its own (unshare --map-root-user): its uid map is not the
    initial namespace's identity map of every uid."""
    try:
        return Path("/proc/self/uid_map").read_text().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def seal(root: Path, binds: list[tuple[Path, bool]]) -> None:
    """The root read-only, once every folder a mount goes onto is made (nothing can be made in it after)."""
    scratch = Path("/tmp")  # noqa: S108  (the root's own, a tmpfs below: binds under it are made there)
    for path, file in [(Path("/proc"), False), (Path("/sys"), False), (Path("/dev"), False), (scratch, False),
                       *((source, not source.is_dir()) for source, _ in binds if not source.is_relative_to(scratch))]:
        os.close(folder_in(root, path, file=file))
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        mount("--bind", str(root), fd=fd)
    finally:
        os.close(fd)
    # The bind now covers the folder: opened again, the descriptor holds the new mount, which is made read-only.
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        mount("-o", "remount,bind,ro", fd=fd)
    finally:
        os.close(fd)
    tmp = folder_in(root, Path("/tmp"))  # noqa: S108  (a tmpfs of its own mounted there, not a host path)
    try:
        mount("-t", "tmpfs", "-o", "nosuid,nodev,size=256m", "crosslane-tmp", fd=tmp)
    finally:
        os.close(tmp)


# The root's own system folders: a caller there runs in the root's copy, never with the host's bound over it (the
# host's /dev over the root's few devices, /proc of processes outside, the host's /usr shadowing the root's tools).
SYSTEM = tuple(Path(f"/{name}") for name in ("bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc",
                                              "run", "sbin", "sys", "usr", "var"))


def with_cwd(binds: list[tuple[Path, bool]], cwd: Path) -> tuple[list[tuple[Path, bool]], Path]:
    """*binds* and the folder *cwd* (written), and the folder to change into. The folder is taken by its real path
    (a link to a read-only place is that place, and stays read-only); it is bound unless it is the root's / or one of
    its system folders, or a bind already holds it. Outer folders first, as the caller ordered them, so a read-only
    bind under the folder stays read-only."""
    real = Path(os.path.realpath(cwd))
    if real == Path("/") or any(real.is_relative_to(folder) for folder in SYSTEM) \
            or any(real.is_relative_to(os.path.realpath(source)) for source, _ in binds):
        return binds, real
    return sorted([*binds, (real, False)], key=lambda bound: len(bound[0].parts)), real


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv) < 3:
        print("usage: enter_root.py ROOT [--bind DIR]... [--bind-ro DIR]... [--read-only-root] [--bind-cwd] "
              "[--cwd DIR] -- "
              "PROGRAM [ARGS...]",
              file=sys.stderr)
        return CANNOT_ENTER
    split = argv.index("--")
    options, program = argv[:split], argv[split + 1:]
    root = Path(options[0])
    binds = [(Path(options[i + 1]), word == "--bind-ro") for i, word in enumerate(options)
             if word in ("--bind", "--bind-ro")]
    cwd = next((options[i + 1] for i, word in enumerate(options) if word == "--cwd"), "/")
    if "--bind-cwd" in options:
        binds, real = with_cwd(binds, Path(cwd))
        cwd = str(real)
    try:
        if "--read-only-root" in options:
            seal(root, binds)
        system(root, as_root=not in_user_namespace())
        for source, read_only in binds:
            bind(source, root, read_only=read_only)
        os.chroot(root)
        os.chdir(cwd)
        drop_capabilities()
    except (OSError, subprocess.CalledProcessError, Refused, ValueError) as exc:
        print(f"crosslane: cannot enter the root {root}: {exc}", file=sys.stderr)
        return CANNOT_ENTER
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        print(f"crosslane: {program[0]}: {exc.strerror} inside the root {root}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
