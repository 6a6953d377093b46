"""Where crosslane keeps things: the XDG cache (sysroots, sources, tools) and the build tree."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """CROSSLANE_CACHE, else $XDG_CACHE_HOME/crosslane, else ~/.cache/crosslane."""
    override = os.environ.get("CROSSLANE_CACHE")
    if override:
        return Path(override).resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return (base / "crosslane").resolve()


def build_root(repo: Path) -> Path:
    override = os.environ.get("CROSSLANE_BUILD_DIR")
    return Path(override).resolve() if override else repo / "build"
