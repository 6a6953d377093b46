"""A gcc that compiles with the sysroot's glibc headers but links its own older glibc cannot link C++: Debian 12's
native g++ 12 against forky's glibc 2.43 (undefined __isoc23_sscanf). Preflight refuses that pair by name before
anything is built, with the fix; the amd64 control's default toolchain links C++ against the sysroot it is given.
Real compilers, the real forky sysroots, a real C++ build."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane.archs import Arch
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.log import Log
from crosslane.preflight import doctor
from crosslane.preflight.checks import REGISTRY
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane_helpers import probes

pytestmark = [pytest.mark.cross, pytest.mark.network]

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(app CXX)
add_executable(app app.cpp)
install(TARGETS app)
"""
# std::stoi is where glibc >= 2.38's headers redirect strtol to __isoc23_strtol in C++ (it defines _GNU_SOURCE)
APP = """#include <string>
int main(int argc, char **argv) { return std::stoi(argc > 1 ? argv[1] : "0"); }
"""


def with_app(cfg: Config, tmp_path: Path, toolchain: dict[Arch, str]) -> Config:
    """The repository's configuration (forky sysroots, its toolchains) with one small C++ component."""
    source = tmp_path / "app"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(PROJECT)
    (source / "app.cpp").write_text(APP)
    app = dataclasses.replace(cfg.components["canary"], name="app", sources=(TreeSource(path=source),),
                              cmake_args=(), smoke=None, tests=None, arches=(Arch.AMD64, Arch.RISCV64),
                              toolchain=MappingProxyType(toolchain))
    return dataclasses.replace(cfg, components=MappingProxyType({"app": app}))


MakeContext = Callable[..., Context]


@pytest.fixture
def ctx_for(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeContext:
    """A context for the app with its toolchain per arch, the sysroots of *arches* made."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))

    def make(toolchain: dict[Arch, str], *arches: Arch) -> Context:
        ctx = Context(with_app(cfg, tmp_path, toolchain), Runner(Log(io.StringIO())))
        for arch in arches:
            ctx.ensure_sysroot(arch)
        return ctx
    return make


def sysroot_link(ctx: Context, arch: Arch) -> doctor.Finding:
    (finding,) = doctor.run(probes(ctx), arch, ["app"], registry=[c for c in REGISTRY if c.name == "sysroot-link"])
    return finding


def test_the_host_gcc_with_the_forky_sysroot_is_refused_before_the_build(ctx_for: MakeContext) -> None:
    ctx = ctx_for({Arch.AMD64: "gcc"}, Arch.AMD64)
    rows = pipeline.build_components(ctx, Arch.AMD64, ["app"])
    assert [(r.label, r.verdict) for r in rows] == [("preflight:sysroot-link", Verdict.FAIL)], rows
    reason = rows[0].reason
    assert "x86_64-linux-gnu-g++ (gcc 12." in reason
    assert "cannot link C++ against the amd64 sysroot (glibc 2.4" in reason
    assert "links its own glibc 2.36" in reason and "undefined reference to `__isoc23_" in reason
    assert 'use clang: toolchain = { amd64 = "clang" } in [components.app]' in reason
    assert not (ctx.component_dir(Arch.AMD64, "app") / "build").exists()  # nothing was built


def test_the_control_default_toolchain_links_cxx_against_its_sysroot(ctx_for: MakeContext) -> None:
    ctx = ctx_for({}, Arch.AMD64)  # the arch's own toolchain, as a component that names none gets
    rows = pipeline.build_components(ctx, Arch.AMD64, ["app"])
    assert [r.verdict for r in rows if r.label == "build"] == [Verdict.PASS], rows
    assert (ctx.component_dir(Arch.AMD64, "app") / "install/bin/app").is_file()
    assert sysroot_link(ctx, Arch.AMD64).status is Verdict.SKIP  # clang links the sysroot's own glibc


def test_a_cross_gcc_that_links_its_own_glibc_passes_and_says_so(ctx_for: MakeContext) -> None:
    """Debian 12's riscv64 cross g++ 12 reads its own glibc 2.36 headers before the sysroot's: C++ links."""
    ctx = ctx_for({Arch.RISCV64: "gcc"}, Arch.RISCV64)
    finding = sysroot_link(ctx, Arch.RISCV64)
    assert finding.status is Verdict.PASS, finding
    assert "riscv64-linux-gnu-g++ (gcc 12." in finding.message and "with its own glibc 2.36" in finding.message
