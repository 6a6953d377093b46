"""A failed build's row names the step that failed: a link that fails is "link failed", not "compile failed" (the
first failed ninja edge is one of CMake's links), a compile that fails is "compile failed". Real cmake, ninja and
clang against the real riscv64 sysroot."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane.archs import Arch
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake
from crosslane.report import Verdict
from crosslane.run import pipeline

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(steps C)
add_library(part STATIC part.c)
add_executable(app main.c)
target_link_libraries(app part)
install(TARGETS app)
"""
SOURCES = {
    "link": ("int part(void) { return 1; }\n", "int missing(void);\nint main(void) { return missing(); }\n"),
    "compile": ("int part(void) { return 1; }\n", "int main(void) { return undeclared_name; }\n"),
}


@pytest.mark.cross
@pytest.mark.network
@pytest.mark.parametrize("broken", ["link", "compile"])
def test_the_failed_step_is_named(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    source = tmp_path / "steps"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(PROJECT)
    part, main = SOURCES[broken]
    (source / "part.c").write_text(part)
    (source / "main.c").write_text(main)
    steps = dataclasses.replace(cfg.components["canary"], name="steps", sources=(TreeSource(path=source),),
                                cmake_args=(), smoke=None, tests=None, arches=(Arch.RISCV64,))
    ctx = Context(dataclasses.replace(cfg, components=MappingProxyType({"steps": steps})), Runner(Log(io.StringIO())))
    ctx.ensure_sysroot(Arch.RISCV64)
    rows = [r for r in pipeline.build_components(ctx, Arch.RISCV64, ["steps"]) if r.label == "build"]
    assert [(r.verdict, r.reason) for r in rows] == [(Verdict.FAIL, f"{broken} failed; see the output tail above")]


# ninja's piped output with two edges at once: the status line before "FAILED: " is the failed edge's own
PARALLEL = ["[1/4] Building C object CMakeFiles/part.dir/part.c.o", "[2/4] Linking C static library libpart.a",
            "[3/4] Building C object CMakeFiles/app.dir/main.c.o", "FAILED: [code=1] CMakeFiles/app.dir/main.c.o",
            "main.c:1:30: error: 'undeclared_name' undeclared", "[4/4] Linking C executable other",
            "FAILED: [code=1] other", "ninja: build stopped: subcommand failed."]


@pytest.mark.parametrize(("lines", "step"), [
    (PARALLEL, "compile"),
    ([*PARALLEL[:2], "FAILED: [code=1] libpart.a"], "link"),
    (["ninja: error: loading 'build.ninja': No such file or directory"], "compile"),
], ids=["first-failure-counts", "archive", "no-edge"])
def test_the_first_failed_edge_decides(lines: list[str], step: str) -> None:
    edges = cmake.NinjaEdges()
    for line in lines:
        edges.see(line)
    assert edges.failed_step() == step
