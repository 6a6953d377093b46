"""A build whose toolchain file names another compiler at the same path is configured afresh: CMake keeps the
compiler it detected first (CMakeFiles/<version>/CMake*Compiler.cmake) and would go on compiling with it while the
stamp names the new one (measured: a tool root's new wrapper in the toolchain file, the old one in rules.ninja)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane_helpers import REPO, fresh_cache

pytestmark = [pytest.mark.cross, pytest.mark.spawns]

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(which C)
add_executable(which which.c)
install(TARGETS which DESTINATION bin)
"""


def comment(binary: Path) -> str:
    """The ELF's .comment: the compilers that made it."""
    from elftools.elf.elffile import ELFFile

    with binary.open("rb") as handle:
        section = ELFFile(handle).get_section_by_name(".comment")
        assert section is not None
        return section.data().decode(errors="replace")


def test_a_toolchain_that_names_another_compiler_is_configured_afresh(tmp_path: Path, sysroots: object) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/CMakeLists.txt").write_text(PROJECT)
    (tmp_path / "src/which.c").write_text("int main(void) { return 0; }\n")
    # The repository's whole versions.toml plus one component: the components' wheel.pythons are sysroot packages,
    # so only the whole file names the sysroot the session made (a header alone would need another).
    ours = (REPO / "versions.toml").read_text(encoding="utf-8")
    for folder in ("components", "patches"):  # the paths it names, relative to its own folder
        shutil.copytree(REPO / folder, tmp_path / folder)
    component = ('[components.which]\nsource = { kind = "tree", path = "src" }\narches = ["riscv64"]\n'
                 'toolchain = { riscv64 = "mine" }\n')
    env = {**os.environ, **fresh_cache(tmp_path)}
    # clang-19, then forky's GCC from the tool root (both can compile RVV, as the riscv64 preflight asks)
    chains = (('family = "clang"\nversion = 19', "clang version 19"),
              ('family = "gcc"\ntoolroot = "gcc-cross"', "GCC: ("))
    for family, made_by in chains:
        (tmp_path / "versions.toml").write_text(f"{ours}\n[toolchains.mine]\n{family}\n\n{component}")
        done = subprocess.run([str(Path(sys.executable).parent / "invoke"), "--search-root", str(REPO), "build",
                               "--arch", "riscv64", "--component", "which", "--config",
                               str(tmp_path / "versions.toml"), "--json", str(tmp_path / "rows.json")],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        rows = json.loads((tmp_path / "rows.json").read_text())
        assert any(r["check"] == "build" and r["reason"] == "built" for r in rows), rows
        made = comment(tmp_path / "build/riscv64/which/install/bin/which")
        assert made_by in made and not (made_by == "GCC: (" and "clang" in made), made
