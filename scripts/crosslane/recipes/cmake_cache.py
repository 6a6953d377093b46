"""What a configured CMake build tree records about itself (CMakeCache.txt)."""

from __future__ import annotations

from pathlib import Path


def configured_source(build_dir: Path) -> Path | None:
    """The folder the tree was configured from (CMAKE_HOME_DIRECTORY); None for a tree never configured."""
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
            return Path(line.partition("=")[2])
    return None


def source_tree(build_dir: Path, subdir: str) -> Path | None:
    """The source tree whose *subdir* (versions.toml `source_subdir`) the build tree was configured from."""
    home = configured_source(build_dir)
    if home is None or not subdir:
        return home
    return home.parents[len(Path(subdir).parts) - 1]
