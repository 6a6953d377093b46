"""Console output: steps, commands, warnings; GitHub Actions folds when running there."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

# Variables whose change is worth showing for cross steps.
INTERESTING_ENV = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "SYSROOT", "QEMU_LD_PREFIX", "LIBRARY_PATH",
                   "LD_LIBRARY_PATH", "CPATH", "PKG_CONFIG_PATH", "PKG_CONFIG_SYSROOT_DIR", "PKG_CONFIG_LIBDIR",
                   "PYTHONPATH", "RUSTFLAGS")


# A URL's user information (a password, a token: redis://:s3cr3t@host, https://user:token@host) is never printed.
# Everything up to the last @ of the URL's word goes: a password with an unencoded / or @ in it is still whole
# (a path with an @ in it loses its start too, which is the safe side).
URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s\"'<>]*@")


def redact(text: str) -> str:
    """*text* with the user information of every URL in it replaced by ***."""
    return URL_CREDENTIALS.sub(r"\1***@", text)


class Log:
    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.verbose = verbose
        self.github = os.environ.get("GITHUB_ACTIONS") == "true"
        self._lock = threading.Lock()

    @property
    def interactive(self) -> bool:
        return self.stream.isatty() and os.environ.get("CI") != "true"

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(redact(text) + "\n")
            self.stream.flush()

    def info(self, text: str) -> None:
        self._write(text)

    def step(self, text: str) -> None:
        self._write(f"==> {text}")

    def warn(self, text: str) -> None:
        self._write(f"::warning::{text}" if self.github else f"warning: {text}")

    def notice(self, text: str) -> None:
        self._write(f"::notice::{text}" if self.github else f"notice: {text}")

    def error(self, text: str) -> None:
        self._write(f"::error::{text}" if self.github else f"crosslane: error: {text}")

    def command(self, quoted: str, env_diff: Mapping[str, str | None]) -> None:
        for key, value in env_diff.items():
            self._write(f"    env {key}={value}" if value is not None else f"    env -u {key}")
        self._write(f"    $ {quoted}")

    def debug(self, text: str) -> None:
        if self.verbose:
            self._write(f"    {text}")

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        # Actions folds cannot nest or interleave: work beside the main thread (a smoke beside builds) gets a step.
        fold = self.github and threading.current_thread() is threading.main_thread()
        if fold:
            self._write(f"::group::{title}")
        else:
            self.step(title)
        try:
            yield
        finally:
            if fold:
                self._write("::endgroup::")


class Progress:
    """A live counter on a terminal, plain periodic lines otherwise."""

    def __init__(self, log: Log, label: str, total: int | None = None, *, every: float = 10.0) -> None:
        self.log = log
        self.label = label
        self.total = total
        self.done = 0
        self.every = every
        self._last = time.monotonic()
        self._start = self._last

    def advance(self, amount: int = 1, detail: str = "") -> None:
        self.done += amount
        now = time.monotonic()
        # A counter of its own, unless the detail carries the work's own (ninja's [n/N]): never a stray "0".
        counter = f"{self.done}/{self.total}" if self.total else str(self.done) if self.done else ""
        if self.log.interactive:
            with self.log._lock:
                shown = redact(detail)[:60]
                self.log.stream.write(f"\r    {self.label}: {counter + ' ' if counter else ''}{shown:<60}")
                self.log.stream.flush()
        elif now - self._last >= self.every or (self.total and self.done == self.total):
            self._last = now
            shown = f"{counter} " if counter else ""
            self.log.info(f"    {self.label}: {shown}({now - self._start:.0f}s) {detail}".rstrip())

    def close(self) -> None:
        if self.log.interactive:
            with self.log._lock:
                self.log.stream.write("\n")
                self.log.stream.flush()
