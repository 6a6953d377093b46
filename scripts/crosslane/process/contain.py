"""Containment: every program crosslane starts runs under a keeper (keeper.py), and nothing it starts outlives its
command or its deadline.

`start` runs the keeper in a session of its own with the program's argv; `Contained.stop` tells it to end the tree
(a deadline, a cancelled run) and ends it from here if it has not HARD seconds later; `finish` reaps it with
wait4 (the CPU of the whole tree). crosslane's own process is a subreaper too: the tree of a keeper that was
killed (a program can kill its parent) comes to it instead of to init, and `sweep` ends it: a child of ours in a
session not ours that is no live keeper (keepers are the only sessions crosslane starts) is such a remnant.

Reading a command's output (`pump`) ends when every output is at its end or, once the keeper has ended, DRAIN
seconds later: what still holds an output open then had escaped the keeper, and is swept. `run` is
subprocess.run's contained stand-in for the few commands that are not the runner's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from crosslane.process import keeper
from crosslane.process.keeper import end_tree, mark_subreaper, processes, send

HARD = keeper.GRACE + 3.0  # after a stop: a keeper still there is ended from outside, its tree with it
DRAIN = 1.0  # after the keeper has ended: reading what its tree wrote last
POLL = 0.25  # how often a quiet output's reader looks whether the keeper has ended
CHUNK = 1 << 16


class Keepers:
    """The keepers this process started and has not reaped. One per process, as the kernel's reparenting is: a
    sweep from any thread, whichever Runner it serves, must know every live keeper. A keeper is added as it starts
    and removed as it is reaped, both under the lock, so its pid cannot be another process's meanwhile."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pids: set[int] = set()


KEEPERS = Keepers()


def keeper_argv(argv: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-S", str(Path(keeper.__file__).resolve()), "--", *argv]


@dataclass(frozen=True, kw_only=True)
class Reaped:
    """A contained command's end: its exit status (as Popen's returncode) and the CPU seconds of the whole tree its
    keeper reaped (wait4's rusage)."""

    returncode: int
    cpu: float


class Contained:
    """A program running under its keeper."""

    def __init__(self, popen: subprocess.Popen[bytes], timeout: float | None) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.stopped = threading.Event()
        self.reaped = False
        self._hard: threading.Timer | None = None
        self._deadline = threading.Timer(timeout, self.stop) if timeout is not None else None
        if self._deadline:
            self._deadline.daemon = True
            self._deadline.start()

    def stop(self) -> None:
        """Tell the keeper to end the tree; one that has not ended HARD seconds later is ended from here."""
        self.stopped.set()
        with KEEPERS.lock:
            if self.pid not in KEEPERS.pids or self._hard is not None:
                return
            send([self.pid], signal.SIGTERM)
            self._hard = threading.Timer(HARD, self.force)
            self._hard.daemon = True
            self._hard.start()

    def force(self) -> None:
        with KEEPERS.lock:
            if self.pid in KEEPERS.pids and not self.exited():
                end_tree(self.pid, 0, lambda: None)
                send([self.pid], signal.SIGKILL)

    def exited(self) -> bool:
        """Whether the keeper has ended (it stays unreaped: finish reaps it)."""
        return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def finish(self) -> Reaped:
        """Wait for the keeper, and its end; then sweep what escaped it."""
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        with KEEPERS.lock:
            _, status, usage = os.wait4(self.pid, 0)
            KEEPERS.pids.discard(self.pid)
            self.reaped = True
        for timer in (self._deadline, self._hard):
            if timer:
                timer.cancel()
        self.popen.returncode = os.waitstatus_to_exitcode(status)  # the Popen is told, so it does not wait again
        sweep()
        return Reaped(returncode=self.popen.returncode, cpu=usage.ru_utime + usage.ru_stime)

    def abandon(self) -> None:
        """Interrupted (Ctrl-C, SIGTERM to crosslane): the tree ended now, the keeper reaped, within HARD."""
        if self.reaped:
            return
        self.stop()
        with contextlib.suppress(ChildProcessError):
            end = time.monotonic() + HARD
            while not self.exited() and time.monotonic() < end:
                time.sleep(0.02)
            self.force()
            self.finish()


def start(argv: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
          stdin: int | IO[bytes] | None = subprocess.DEVNULL, stdout: int | None = subprocess.PIPE,
          stderr: int | None = subprocess.PIPE, timeout: float | None = None) -> Contained:
    """*argv* started under a keeper in a session of its own; *timeout*: seconds until it is stopped."""
    mark_subreaper()
    with KEEPERS.lock:
        popen = subprocess.Popen(keeper_argv(argv), cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                                 start_new_session=True)
        KEEPERS.pids.add(popen.pid)
    return Contained(popen, timeout)


def sweep() -> None:
    """End and reap what escaped a keeper: a child of ours in a session not ours that is no live keeper. Its own
    children, ended with it, come to us in turn: the next round reaps them."""
    me, session = os.getpid(), os.getsid(0)
    end = time.monotonic() + keeper.KILL_WITHIN
    while time.monotonic() < end:
        with KEEPERS.lock:
            table = processes()
            strays = [p for p in table if p.ppid == me and p.session != session and p.pid not in KEEPERS.pids]
            if not strays:
                return
            for stray in strays:
                if not stray.zombie:
                    end_tree(stray.pid, 0, lambda: None)
                    send([stray.pid], signal.SIGKILL)
            for stray in strays:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(stray.pid, os.WNOHANG)
        time.sleep(0.005)


def pump(process: Contained, outputs: Mapping[int, Callable[[bytes], object]], feed: bytes = b"",
         into: IO[bytes] | None = None) -> None:
    """*feed* written into *into* (closed once fed) and each output's bytes handed to its callback, until every
    output is at its end, or the keeper has ended and DRAIN seconds have passed: the deadline bounds the reading,
    not only the program."""
    with selectors.DefaultSelector() as selector:
        for fd in outputs:
            selector.register(fd, selectors.EVENT_READ)
        if into is not None and feed:
            os.set_blocking(into.fileno(), False)
            selector.register(into, selectors.EVENT_WRITE)
        elif into is not None:
            into.close()
        ended_at: float | None = None
        while selector.get_map():
            for key, _ in selector.select(POLL):
                if into is not None and key.fileobj is into:
                    feed = write_some(into.fileno(), feed)
                    if not feed:
                        selector.unregister(into)
                        into.close()
                    continue
                chunk = os.read(key.fd, CHUNK)
                if chunk:
                    outputs[key.fd](chunk)
                else:
                    selector.unregister(key.fd)
            if ended_at is None and process.exited():
                ended_at = time.monotonic()
                sweep()
            elif ended_at is not None and time.monotonic() - ended_at > DRAIN:
                return


def write_some(fd: int, feed: bytes) -> bytes:
    """What is left of *feed* after one write (nothing when the program stopped reading)."""
    try:
        return feed[os.write(fd, feed[:CHUNK]):]
    except BlockingIOError:
        return feed
    except BrokenPipeError:
        return b""


def run(argv: Sequence[str], *, env: Mapping[str, str] | None = None, feed: bytes = b"",
        timeout: float) -> subprocess.CompletedProcess[bytes]:
    """subprocess.run(argv, input=feed, capture_output=True, timeout=timeout) for crosslane's few binary or
    unlogged commands (gitexport's cat-file, nox -l), contained like the runner's. A program not on PATH raises
    FileNotFoundError, as there."""
    if shutil.which(argv[0], path=(env if env is not None else os.environ).get("PATH")) is None:
        raise FileNotFoundError(errno.ENOENT, "no such program", argv[0])
    process = start(argv, env=env, stdin=subprocess.PIPE, timeout=timeout)
    out, err = bytearray(), bytearray()
    assert process.popen.stdin and process.popen.stdout and process.popen.stderr
    try:
        pump(process, {process.popen.stdout.fileno(): out.extend, process.popen.stderr.fileno(): err.extend},
             feed, process.popen.stdin)
        returncode = process.finish().returncode
    except BaseException:
        process.abandon()
        raise
    finally:
        for pipe in (process.popen.stdin, process.popen.stdout, process.popen.stderr):
            pipe.close()
    if process.stopped.is_set():
        raise subprocess.TimeoutExpired(list(argv), timeout, bytes(out), bytes(err))
    return subprocess.CompletedProcess(list(argv), returncode, bytes(out), bytes(err))
