"""Where crosslane keeps things: the XDG cache (sysroots, sources, tools) and the build tree."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from crosslane.errors import MissingPrerequisite


def cache_dir() -> Path:
    """CROSSLANE_CACHE, else $XDG_CACHE_HOME/crosslane, else ~/.cache/crosslane."""
    return _resolved(os.environ.get("CROSSLANE_CACHE") or None, os.environ.get("XDG_CACHE_HOME") or None,
                     os.environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _resolved(override: str | None, xdg: str | None, home: str | None) -> Path:
    # Asked for on every cache lookup; resolved once per value of the variables it reads.
    if override:
        return Path(override).resolve()
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return (base / "crosslane").resolve()


def build_root(repo: Path) -> Path:
    override = os.environ.get("CROSSLANE_BUILD_DIR")
    return Path(override).resolve() if override else repo / "build"


def check_places() -> None:
    """CROSSLANE_CACHE and CROSSLANE_BUILD_DIR, when set, name folders (or nothing yet): a file there would
    otherwise surface later as a missing sysroot or a failed mkdir deep inside a step."""
    for variable in ("CROSSLANE_CACHE", "CROSSLANE_BUILD_DIR"):
        value = os.environ.get(variable)
        if value and Path(value).exists() and not Path(value).is_dir():
            raise MissingPrerequisite(f"{variable}={value}: not a folder",
                                      fix=f"point {variable} at a folder crosslane may write, or unset it")
