"""The one subprocess runner: argv only, logged, timed out, contained, failures that carry their evidence.

Why plumbum, and for what: it is the design card's process library and does two things well here — finding
programs on PATH (`local.which`, with a clean CommandNotFound) and building a command from argv without a
shell. What a cross build needs beyond that stays ours: every command runs under contain.py's keeper (nothing
it starts outlives it or its deadline, not even what left its session or its parent), its output is read line
by line for progress and the failure tail, for no longer than the command lives, and a timer stops it. The keeper
is reaped with os.wait4, whose rusage is the CPU its whole process tree used: what a row's time is made of
(costs.py).
"""

from __future__ import annotations

import codecs
import io
import locale
import os
import shlex
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crosslane.errors import MissingPrerequisite, StepFailed, Terminated
from crosslane.log import INTERESTING_ENV, Log
from crosslane.process import contain, costs

if TYPE_CHECKING:  # plumbum is imported where a program is run: `invoke verify` runs none
    from plumbum.commands.base import BaseCommand

LONGEST_TIMEOUT = 7 * 86400.0

TAIL_LINES = 40
OUTPUT_LINES = 2000  # a command's output kept: its last lines (a build log's tail, a smoke's output)


@dataclass(frozen=True, kw_only=True)
class Result:
    """A finished command: its argv, exit status, output, seconds and whether it timed out."""

    argv: tuple[str, ...]
    returncode: int
    output: str
    seconds: float
    timed_out: bool = False
    cpu: float = 0.0  # user + system seconds of the command and every descendant it waited for
    dropped: int = 0  # lines of output before the kept tail (OUTPUT_LINES): output is then not all there is

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, lines: int = TAIL_LINES) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


@dataclass
class Runner:
    """The one way crosslane runs a program: argv only, logged, timed out, optionally dry."""

    log: Log
    dry_run: bool = False
    commands: list[tuple[str, ...]] = field(default_factory=list)
    _live: dict[int, Callable[[], None]] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _cancelled: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def cancel(self) -> None:
        """Stop every running command (its keeper ends its whole tree) and refuse new ones (Terminated): an
        interrupted run stops the work its other threads do (a smoke beside the builds, parallel profiles) now, not
        when it ends."""
        self._cancelled.set()
        with self._lock:
            kills = list(self._live.values())
        for kill in kills:
            kill()

    def which(self, name: str, fix: str) -> str:
        found = self.find(name)
        if found is None:
            raise MissingPrerequisite(f"{name} not found", fix=fix)
        return found

    def find(self, name: str) -> str | None:
        """The path of *name* on PATH, or None: for optional tools such as ccache. (shutil's search, as plumbum's
        local.which: a lookup need not import plumbum, which a no-op never runs a command with.)"""
        return shutil.which(name)

    def run(
        self,
        argv: Sequence[str | Path],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        unset: Sequence[str] = (),
        timeout: float | None = None,
        check: bool = True,
        probe: bool = False,
        on_line: Callable[[str], None] | None = None,
        quiet: bool = False,
    ) -> Result:
        """Run *argv*. ``probe`` commands only read, so they run even in dry-run mode."""
        args = tuple(str(a) for a in argv)
        env = dict(env or {})
        diff: dict[str, str | None] = {k: v for k, v in env.items()
                                       if os.environ.get(k) != v and (k in INTERESTING_ENV or not quiet)}
        removed = tuple(k for k in unset if k in os.environ)
        diff.update(dict.fromkeys(removed))
        quoted = shlex.join(args)
        self.commands.append(args)
        if not quiet:
            self.log.command(quoted + (f"  (in {cwd})" if cwd else ""), diff)
        if self.dry_run and not probe:
            return Result(argv=args, returncode=0, output="", seconds=0.0)
        full_env = {k: v for k, v in os.environ.items() if k not in removed}
        full_env.update(env)
        return self._execute(args, cwd, full_env, timeout, check, on_line, quoted)

    def _execute(self, args: tuple[str, ...], cwd: Path | None, env: dict[str, str], timeout: float | None,
                 check: bool, on_line: Callable[[str], None] | None, quoted: str) -> Result:
        from plumbum import local
        from plumbum.commands.processes import CommandNotFound

        try:
            command: BaseCommand = local[args[0]]
        except CommandNotFound:
            raise MissingPrerequisite(f"{args[0]} not found", fix="invoke setup installs the host tools") from None
        if self._cancelled.is_set():
            raise Terminated
        start = time.monotonic()
        tail: deque[str] = deque(maxlen=OUTPUT_LINES)
        read = 0

        def each(line: str) -> None:
            nonlocal read
            read += 1
            tail.append(line)
            if on_line:
                on_line(line)

        # threading.Timer's thread dies of OverflowError past ~1e9 s, and the command would then run unbounded.
        process = contain.start(command[list(args[1:])].formulate(), cwd=cwd, env=env, stderr=subprocess.STDOUT,
                                timeout=min(timeout, LONGEST_TIMEOUT) if timeout else None)
        with self._lock:
            self._live[id(process)] = process.stop
        if self._cancelled.is_set():  # cancelled between the check above and the start: this one goes too
            process.stop()
        try:
            assert process.popen.stdout is not None
            lines = Lines(each)
            contain.pump(process, {process.popen.stdout.fileno(): lines.feed})
            lines.end()
            reaped = process.finish()
        except BaseException:
            process.abandon()  # interrupted (SIGTERM, Ctrl-C): its tree goes too, not on in the background
            raise
        finally:
            if process.popen.stdout:
                process.popen.stdout.close()
            with self._lock:
                self._live.pop(id(process), None)
        if self._cancelled.is_set():
            raise Terminated
        costs.charge(reaped.cpu)
        result = Result(argv=args, returncode=reaped.returncode, output="\n".join(tail),
                        seconds=time.monotonic() - start, timed_out=process.stopped.is_set(),
                        cpu=reaped.cpu, dropped=read - len(tail))
        if check and not result.ok:
            raise StepFailed(failure_message(quoted, result), detail=result.tail(15).strip() or None)
        return result


class Lines:
    """A command's output bytes as lines, decoded as text-mode Popen does (the locale's encoding, bad bytes
    replaced, \\r\\n and \\r ending a line too)."""

    def __init__(self, each: Callable[[str], None]) -> None:
        self.each = each
        decoder = codecs.getincrementaldecoder(locale.getpreferredencoding(False))(errors="replace")
        self.decoder = io.IncrementalNewlineDecoder(decoder, translate=True)
        self.partial = ""

    def feed(self, chunk: bytes, final: bool = False) -> None:
        *lines, self.partial = (self.partial + self.decoder.decode(chunk, final)).split("\n")
        for line in lines:
            self.each(line)

    def end(self) -> None:
        self.feed(b"", final=True)
        if self.partial:
            self.each(self.partial)
            self.partial = ""


def failure_message(quoted: str, result: Result) -> str:
    what = f"timed out after {result.seconds:.0f}s" if result.timed_out else f"exited {result.returncode}"
    return f"command {what}: {quoted}"
