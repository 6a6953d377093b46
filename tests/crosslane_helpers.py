"""Small builders shared by the preflight, lane and cross-wiring tests (no fixtures, no spawning)."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

from crosslane import config as config_mod
from crosslane.archs import Arch, info
from crosslane.context import Context
from crosslane.host import buildtools
from crosslane.log import Log
from crosslane.runner import Runner
from crosslane.target import sysroot as sysroot_mod

BASE = """\
schema = 1
[tools]
cmake = "{cmake}"
ninja = "1.13.0"
[sysroot]
suite = "trixie"
packages = ["libc6-dev"]
[toolchains.gcc]
family = "gcc"
[toolchains.clang]
family = "clang"
version = 19
[arches.amd64]
toolchain = "gcc"
components = {components}
[arches.amd64.profiles]
max = "max"
[arches.arm64]
toolchain = "gcc"
components = {components}
[arches.arm64.profiles]
max = "max"
[arches.riscv64]
toolchain = "{riscv64_toolchain}"
components = {components}
[arches.riscv64.profiles]
rvv128 = "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0"
"""


def versions_header(*, cmake: str = "3.31.6", components: str = "[]", riscv64_toolchain: str = "clang") -> str:
    """The top of a test versions.toml: tools, sysroot, toolchains, the three arches (no components)."""
    return BASE.format(cmake=cmake, components=components, riscv64_toolchain=riscv64_toolchain)

COMPONENT = """
[components.{name}]
source = {{ kind = "tree", path = "components/{name}" }}
arches = ["amd64", "arm64", "riscv64"]
{extra}
"""


def write_config(root: Path, components: dict[str, str], *, lanes: str = "", riscv64_toolchain: str = "clang",
                 default: tuple[str, ...] | None = None, cmake: str = "3.31.6") -> config_mod.Config:
    """A versions.toml under *root* with the given components ({name: extra TOML lines}) and lane tables."""
    names = list(default if default is not None else components)
    text = BASE.format(components=json.dumps(names), riscv64_toolchain=riscv64_toolchain, cmake=cmake)
    for name, extra in components.items():
        (root / "components" / name).mkdir(parents=True, exist_ok=True)
        text += COMPONENT.format(name=name, extra=extra)
    text += "\n" + lanes
    path = root / "versions.toml"
    path.write_text(text)
    return config_mod.load(path)


def context(cfg: config_mod.Config) -> tuple[Context, io.StringIO]:
    stream = io.StringIO()
    return Context(cfg, Runner(Log(stream))), stream


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_sysroot(cfg: config_mod.Config, arch: Arch, python: str = "3.13") -> Path:
    """A sysroot as sysroot.find() and target_python.locate() see it (under the current CROSSLANE_CACHE)."""
    root = sysroot_mod.sysroot_path(cfg.sysroot, arch)
    multiarch = info(arch).multiarch
    (root / f"usr/include/python{python}").mkdir(parents=True, exist_ok=True)
    (root / f"usr/include/python{python}/Python.h").write_text("")
    (root / f"usr/include/{multiarch}/python{python}").mkdir(parents=True, exist_ok=True)
    (root / f"usr/include/{multiarch}/python{python}/pyconfig.h").write_text("")
    (root / f"usr/lib/{multiarch}").mkdir(parents=True, exist_ok=True)
    (root / f"usr/lib/{multiarch}/libpython{python}.so.1.0").write_text("")
    (root / sysroot_mod.MANIFEST).write_text(json.dumps({"inputs": {}, "packages": []}))
    return root


def fake_buildtools(cfg: config_mod.Config, cmake_text: str, ninja_text: str) -> Path:
    """cmake and ninja where buildtools.locate() looks (under the current CROSSLANE_CACHE)."""
    root = buildtools.tools_dir(cfg.tools)
    executable(root / "cmake/data/bin/cmake", cmake_text)
    executable(root / "bin/ninja", ninja_text)
    (root / ".complete").write_text("")
    return root


def fresh_cache(tmp_path: Path) -> dict[str, str]:
    """Environment for a run with its own cache and build folder that shares only the (read-only) sysroots
    and build tools of the real cache: whatever the run stages or probes lands under *tmp_path*."""
    from crosslane.paths import cache_dir

    real, fresh = cache_dir(), tmp_path / "cache"
    fresh.mkdir()
    for shared in ("sysroots", "buildtools"):
        (fresh / shared).symlink_to(real / shared)
    return {"CROSSLANE_CACHE": str(fresh), "CROSSLANE_BUILD_DIR": str(tmp_path / "build")}
