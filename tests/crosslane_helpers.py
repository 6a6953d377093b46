"""The tests' one kit of small builders: versions.toml texts, contexts, fake tools and sysroots, patches made
in Python, fixture tarballs and git repos, tree hashes (no fixtures; spawning only in git())."""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import stat
import subprocess
import tarfile
from pathlib import Path

from crosslane import config as config_mod
from crosslane.archs import Arch, info
from crosslane.context import Context
from crosslane.features.probes import Probes
from crosslane.files import stamps
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import buildtools
from crosslane.log import Log
from crosslane.process.runner import Runner

REPO = Path(__file__).resolve().parent.parent  # the checkout the tests run from
FIXTURES = REPO / "tests" / "fixtures"

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
[arches.amd64.profiles]
max = "max"
[arches.arm64]
toolchain = "gcc"
[arches.arm64.profiles]
max = "max"
[arches.riscv64]
toolchain = "{riscv64_toolchain}"
[arches.riscv64.profiles]
rvv128 = "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0"
"""


def versions_header(*, cmake: str = "3.31.6", riscv64_toolchain: str = "clang") -> str:
    """The top of a test versions.toml: tools, sysroot, toolchains, the three arches (no components)."""
    return BASE.format(cmake=cmake, riscv64_toolchain=riscv64_toolchain)

COMPONENT = """
[components.{name}]
source = {{ kind = "tree", path = "components/{name}" }}
arches = ["amd64", "arm64", "riscv64"]
{extra}
"""


def write_config(root: Path, components: dict[str, str], *, lanes: str = "", riscv64_toolchain: str = "clang",
                 cmake: str = "3.31.6") -> config_mod.Config:
    """A versions.toml under *root* with the given components ({name: extra TOML lines}) and lane tables."""
    text = BASE.format(riscv64_toolchain=riscv64_toolchain, cmake=cmake)
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
    """Environment for a run with its own cache and build folder that shares only the (read-only) sysroots,
    tool roots and build tools of the real cache: whatever the run stages or probes lands under *tmp_path*."""
    from crosslane.files.paths import cache_dir

    real, fresh = cache_dir(), tmp_path / "cache"
    fresh.mkdir()
    for shared in ("sysroots", "toolroots", "buildtools"):
        (real / shared).mkdir(parents=True, exist_ok=True)  # a link to a folder, not to nothing
        (fresh / shared).symlink_to(real / shared)
    return {"CROSSLANE_CACHE": str(fresh), "CROSSLANE_BUILD_DIR": str(tmp_path / "build")}


SOURCES_BASE = versions_header(riscv64_toolchain="gcc")


def write_config_text(root: Path, components: str) -> config_mod.Config:
    """A versions.toml (gcc on riscv64) under *root* with *components* as TOML text, parsed with root as its root."""
    path = root / "versions.toml"
    text = SOURCES_BASE + components
    path.write_text(text)
    return config_mod.parse(text, path, root)


def quiet_context(cfg: config_mod.Config) -> Context:
    """A Context logging to stderr (the source and patch tests read rows, not the log)."""
    return Context(cfg, Runner(Log()))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_hash(root: Path) -> str:
    return stamps.tree_digest(root, ignore=())


def diff(name: str, before: bytes, after: bytes, context_lines: int = 3) -> bytes:
    """A -p1 unified diff of one file, byte-exact (CRLF lines keep their CR)."""
    old = before.decode().splitlines(keepends=True)
    new = after.decode().splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=context_lines)
    return "".join(lines).encode()


def write_patch(root: Path, rel: str, data: bytes) -> str:
    """Write patches/<rel>; return its sha256."""
    path = root / "patches" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return sha256(data)


def patch_entry(rel: str, digest: str, arches: list[str] | None = None) -> str:
    when = f", when = {{ arch = {arches!r} }}".replace("'", '"') if arches else ""
    return f'{{ path = "{rel}", sha256 = "{digest}"{when} }}'


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", "-C", str(repo),
                           *args], capture_output=True, text=True, env=env, check=True, timeout=60)
    return done.stdout.strip()


def edit(text: bytes, number: int, new: str) -> bytes:
    """*text* with line *number* (1-based) replaced by *new*, keeping that line's ending."""
    lines = text.splitlines(keepends=True)
    ending = b"\r\n" if lines[number - 1].endswith(b"\r\n") else b"\n"
    lines[number - 1] = new.encode() + ending
    return b"".join(lines)


def probes(ctx: Context) -> Probes:
    """What a run probes with, from a test's context."""
    return Probes(ctx.runner, ctx.config, ctx.compiler)


def cmake_binary(cfg: config_mod.Config) -> str:
    """The pinned cmake (else the host's); the test is skipped, saying how to get one, without either."""
    import shutil

    import pytest

    tools = buildtools.locate(cfg.tools)
    found = str(tools.cmake) if tools else shutil.which("cmake")
    if found is None:
        pytest.skip("no cmake: run invoke setup (pinned build tools) or install cmake")
    return found


def pinned_source(component: config_mod.Component) -> config_mod.PinnedSource:
    """A component's own source, which the test knows is pinned (git, archive or debian)."""
    source = component.sources[0]
    assert isinstance(source, config_mod.PinnedSource), source
    return source
