"""cmake and ninja from PyPI at the versions versions.toml pins, in a cache folder of their own."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from crosslane.config import Tools
from crosslane.errors import MissingPrerequisite
from crosslane.paths import cache_dir
from crosslane.runner import Runner


@dataclass(frozen=True)
class BuildTools:
    cmake: Path
    ninja: Path
    root: Path


def tools_dir(tools: Tools) -> Path:
    return cache_dir() / "buildtools" / f"cmake-{tools.cmake}-ninja-{tools.ninja}"


def _binaries(root: Path) -> tuple[Path, Path]:
    # The wheels carry the real executables; calling them directly skips a Python wrapper per call.
    return root / "cmake" / "data" / "bin" / "cmake", root / "bin" / "ninja"


def locate(tools: Tools) -> BuildTools | None:
    root = tools_dir(tools)
    cmake, ninja = _binaries(root)
    if cmake.is_file() and ninja.is_file() and (root / ".complete").is_file():
        return BuildTools(cmake, ninja, root)
    return None


def ensure(runner: Runner, tools: Tools) -> BuildTools:
    found = locate(tools)
    if found:
        return found
    root = tools_dir(tools)
    staging = root.with_name(root.name + f".tmp{os.getpid()}")
    try:
        runner.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--target", str(staging), "--no-warn-script-location",
                    f"cmake=={tools.cmake}", f"ninja=={tools.ninja}"], timeout=900)
        if runner.dry_run:
            return BuildTools(*_binaries(root), root)
        (staging / ".complete").write_text(f"cmake=={tools.cmake}\nninja=={tools.ninja}\n")
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(root)
        except OSError:
            if locate(tools) is None:  # another process won the race only if its copy is whole
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found = locate(tools)
    if found is None:
        raise MissingPrerequisite(f"cmake/ninja install in {root} is incomplete", fix=f"delete {root} and retry")
    return found

