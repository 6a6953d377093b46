"""The keeper: the process every program crosslane starts runs under (contain.py starts it), and what ends a tree.

A program's descendants can leave its process group (setsid) and its parent (a double fork), and under qemu-user
a guest's fork is a host fork: neither killing a process group nor waiting for the program bounds what a command
leaves running, or holding its output open. The keeper marks itself a child subreaper, so every orphan of the
program's tree becomes its child; it forks and execs the program and waits for it; then it ends what is left of
the tree (SIGTERM, GRACE seconds, SIGKILL), reaps it, and exits as the program did (its code, or dying of its
signal). Told to stop (SIGTERM: a deadline, a cancelled run) it ends the whole tree the same way. A tree is read
from /proc (PPid chains), which shows a PID namespace's processes too, and qemu-user's: one host process per guest
process.

It runs as a script, `python -I -S keeper.py -- PROGRAM [ARG...]`, once per command: stdlib only, and only the
modules it needs (typing is not imported: each import is paid on every command's start).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import resource
import signal
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the guard all the same)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import NoReturn

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
GRACE = 2.0  # seconds between SIGTERM and SIGKILL for what a command leaves or a stop ends
KILL_WITHIN = 2.0  # seconds of SIGKILL rounds (each catches what a tree still forking made since the last)
STOPS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


class Proc:
    """A process as /proc/<pid>/stat shows it."""

    __slots__ = ("pid", "ppid", "session", "zombie")

    def __init__(self, pid: int, ppid: int, session: int, zombie: bool) -> None:
        self.pid, self.ppid, self.session, self.zombie = pid, ppid, session, zombie


def processes() -> list[Proc]:
    """Every process /proc shows now (one that ends while it is read is left out)."""
    found = []
    for name in os.listdir("/proc"):  # noqa: PTH208 -- pathlib is an import this script does without
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                text = stat.read().decode("ascii", "replace")
        except OSError:
            continue
        # "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses, so from its last ')'.
        fields = text.rpartition(")")[2].split()
        if len(fields) > 3:
            found.append(Proc(int(name), int(fields[1]), int(fields[3]), fields[0] in ("Z", "X")))
    return found


def descendants(root: int) -> list[Proc]:
    children: dict[int, list[Proc]] = {}
    for proc in processes():
        children.setdefault(proc.ppid, []).append(proc)
    found: list[Proc] = []
    todo = [root]
    while todo:
        for proc in children.get(todo.pop(), ()):
            found.append(proc)
            todo.append(proc.pid)
    return found


def living(root: int) -> list[int]:
    return [proc.pid for proc in descendants(root) if not proc.zombie]


def send(pids: Sequence[int], signum: int) -> None:
    for pid in pids:
        # gone meanwhile, or it changed its user (sudo): nothing this process can end
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def end_tree(root: int, grace: float, reap: Callable[[], object]) -> None:
    """Every living descendant of *root* ended: SIGTERM and up to *grace* seconds to go, then SIGKILL until none
    is left. *reap* reaps what is the caller's to reap (the keeper: its children; crosslane: none, see
    contain.sweep)."""
    left = living(root)
    if left and grace > 0:
        send(left, signal.SIGTERM)
        end = time.monotonic() + grace
        while left and time.monotonic() < end:
            reap()
            time.sleep(0.02)
            left = living(root)
    end = time.monotonic() + KILL_WITHIN
    while left and time.monotonic() < end:  # what is left then is in an uninterruptible wait: nothing ends it
        send(left, signal.SIGKILL)
        reap()
        time.sleep(0.005)
        left = living(root)


def mark_subreaper() -> None:
    """Orphans of this process's descendants become its children, not init's (prctl, Linux 3.4)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(code)}")


def keep(argv: Sequence[str]) -> NoReturn:
    try:
        mark_subreaper()
    except (OSError, AttributeError) as exc:
        os.write(2, f"crosslane: cannot contain {argv[0]}: {exc}\n".encode(errors="replace"))
        os._exit(126)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD, *STOPS})
    program = os.fork()
    if program == 0:
        execute(argv)
    status, stop = watch(program)
    end_tree(os.getpid(), GRACE, reap_children)
    end = time.monotonic() + GRACE
    while reap_children() is not None and time.monotonic() < end:  # a child in an uninterruptible wait
        time.sleep(0.01)
    if stop:
        die_of(stop)
    if status is not None and os.WIFSIGNALED(status):
        die_of(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if status is not None else 1)


def execute(argv: Sequence[str]) -> NoReturn:
    """The forked child: the program, with the signal state a program expects (Popen's restore_signals)."""
    try:
        for signum in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execvp(argv[0], list(argv))  # noqa: S606 -- argv, as the runner was given it
    except OSError as exc:
        os.write(2, f"crosslane: cannot run {argv[0]}: {exc.strerror}\n".encode(errors="replace"))
        os._exit(127 if exc.errno == errno.ENOENT else 126)
    finally:
        os._exit(127)  # never back into the keeper's code


def watch(program: int) -> tuple[int | None, int]:
    """(the program's wait status, 0) when it has ended, or (None, the signal) when the keeper is told to stop."""
    waited = {signal.SIGCHLD, *STOPS}
    while True:
        told = signal.sigwaitinfo(waited)
        if told.si_signo in STOPS:
            return None, told.si_signo
        statuses = reap_children()
        if statuses and program in statuses:
            return statuses[program], 0


def reap_children() -> dict[int, int] | None:
    """The wait statuses of the children that had ended (reaped), or None once there is no child left."""
    reaped: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped or None
        if pid == 0:
            return reaped
        reaped[pid] = status


def die_of(signum: int) -> NoReturn:
    """End this process by *signum*, as the program ended (its parent sees the signal, not an exit code)."""
    with contextlib.suppress(ValueError, OSError):  # the program's core, if any, is its own: the keeper leaves none
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    if signum != signal.SIGKILL:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


if __name__ == "__main__":
    if sys.argv[1:2] != ["--"] or len(sys.argv) < 3:
        sys.exit("usage: keeper.py -- PROGRAM [ARG...]")
    keep(sys.argv[2:])
