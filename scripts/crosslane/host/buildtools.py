"""cmake and ninja from PyPI at the versions versions.toml pins, in a cache folder of their own."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from crosslane.config import Tools
from crosslane.errors import MissingPrerequisite
from crosslane.files import atomic
from crosslane.files.paths import cache_dir
from crosslane.process.runner import Runner


@dataclass(frozen=True, kw_only=True)
class BuildTools:
    """The pinned cmake and ninja binaries and the folder they were installed into."""

    cmake: Path
    ninja: Path
    root: Path


def tools_dir(tools: Tools) -> Path:
    return cache_dir() / "buildtools" / f"cmake-{tools.cmake}-ninja-{tools.ninja}"


def _installed_at(root: Path) -> BuildTools:
    # The wheels carry the real executables; calling them directly skips a Python wrapper per call.
    return BuildTools(cmake=root / "cmake" / "data" / "bin" / "cmake", ninja=root / "bin" / "ninja", root=root)


def planned(tools: Tools) -> BuildTools:
    """Where ensure() puts the pinned tools, whether or not they are there yet (a plan names them, never installs)."""
    return _installed_at(tools_dir(tools))


def locate(tools: Tools) -> BuildTools | None:
    found = _installed_at(tools_dir(tools))
    return found if found.cmake.is_file() and found.ninja.is_file() and (found.root / ".complete").is_file() else None


def ensure(runner: Runner, tools: Tools) -> BuildTools:
    found = locate(tools)
    if found:
        return found
    root = tools_dir(tools)

    def install(target: Path) -> None:
        runner.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--target", str(target), "--no-warn-script-location",
                    f"cmake=={tools.cmake}", f"ninja=={tools.ninja}"], timeout=900)

    if runner.dry_run:
        install(root)
        return _installed_at(root)
    with atomic.publish_dir(root, lambda _: locate(tools) is not None) as staging:
        install(staging)
        (staging / ".complete").write_text(f"cmake=={tools.cmake}\nninja=={tools.ninja}\n")
    found = locate(tools)
    if found is None:
        raise MissingPrerequisite(f"cmake/ninja install in {root} is incomplete", fix=f"delete {root} and retry")
    return found

