"""Paths are data: a cache and a build folder whose names hold spaces build the canary with clang for real (the
sysroot's `--gcc-install-dir=…` flag used to split there, and every clang build failed with exit 5)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from crosslane.files.paths import cache_dir
from hostilekit import BIN, REPO

pytestmark = [pytest.mark.cross, pytest.mark.hostile("paths with spaces and signals")]


@pytest.mark.parametrize("arch", ["riscv64", "arm64"])
def test_a_cache_and_build_folder_with_spaces(tmp_path: Path, sysroots: object, arch: str) -> None:
    real = cache_dir()
    cache = tmp_path / "my cache (user's)"
    cache.mkdir()
    # What a build reads, reached through the spaced path.
    for shared in ("sysroots", "toolroots", "buildtools", "probes"):
        (cache / shared).symlink_to(real / shared)
    build = tmp_path / "build folder"
    env = {**os.environ, "CROSSLANE_CACHE": str(cache), "CROSSLANE_BUILD_DIR": str(build)}
    done = subprocess.run([str(BIN / "invoke"), "--search-root", str(REPO), "build", "--arch", arch, "--component",
                           "canary"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    cache_text = (build / arch / "canary" / "build" / "CMakeCache.txt").read_text()
    flags = next(line.partition("=")[2] for line in cache_text.splitlines() if line.startswith("CMAKE_C_FLAGS:"))
    named = [word for word in shlex.split(flags) if "gcc-install-dir" in word]
    assert all(word.startswith(f"--gcc-install-dir={cache}/") for word in named), flags  # one word each
    assert named or arch != "riscv64", flags  # riscv64 builds with clang, which names the sysroot's GCC folder
    assert (build / arch / "canary" / "install" / "bin" / "canary-cli").is_file()
