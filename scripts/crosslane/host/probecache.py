"""Probe results cached on disk under the crosslane cache, keyed on the identity of every binary involved
(path, mtime, size) plus the probe's inputs: replacing qemu or a compiler invalidates its entries by itself.

A no-op build asks the same questions every time (which version is this clang, this qemu, this cmake?);
answering them from here instead of starting the program is most of what keeps it fast.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.files import atomic
from crosslane.files.paths import cache_dir
from crosslane.process.runner import Runner


def identity(path: str | Path) -> list[object]:
    try:
        st = Path(path).stat()
    except OSError:
        return [str(path), None, None]
    return [str(path), st.st_mtime_ns, st.st_size]


def cache_file(kind: str, key: dict[str, object]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]
    return cache_dir() / "probes" / f"{kind}-{digest}.json"


def read_cached(kind: str, key: dict[str, object]) -> object | None:
    try:
        data = json.loads(cache_file(kind, key).read_text())
    except (OSError, ValueError, RecursionError):  # damaged: a cache miss, probed again
        return None
    return data.get("value") if isinstance(data, dict) else None


def write_cached(kind: str, key: dict[str, object], value: object) -> None:
    path = cache_file(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, json.dumps({"key": key, "value": value}, sort_keys=True, default=str))
    except OSError:
        pass  # a read-only cache only costs the next run a re-probe


@dataclass(frozen=True)
class Failed:
    """A version command that failed, and the line it said why (a wrapper's "cannot enter the root: ...")."""

    reason: str


def version_output(runner: Runner, argv: Sequence[str]) -> str | Failed:
    """The output of a version command (`clang -dumpversion`, `qemu --version`), run once per binary; Failed when
    it fails (failures are not cached: the next run asks again)."""
    key: dict[str, object] = {"binary": identity(argv[0]), "argv": list(argv)}
    cached = read_cached("version", key)
    if isinstance(cached, str):
        return cached
    result = runner.run(list(argv), probe=True, quiet=True, check=False, timeout=30.0)
    if not result.ok:
        said = [line.strip() for line in result.output.splitlines() if line.strip()]
        ended = "timed out" if result.timed_out else f"exit status {result.returncode}"
        return Failed(f"{ended}: {said[-1][:300]}" if said else ended)
    if not runner.dry_run:  # a dry run writes nothing, the probe cache included
        write_cached("version", key, result.output)
    return result.output
