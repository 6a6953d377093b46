"""[toolroots.*] and [baremetal.*]: read into the model, every mistake one line naming the key; the toolchain file a
build gets names the tool root's wrappers and its own -march."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.baremetal.toolchain import TOOLS, render_toolchain
from crosslane.config import Config
from crosslane.errors import ConfigError
from crosslane_helpers import REPO, versions_header

TARGET = """
[toolroots.tools]
packages = ["gcc-riscv64-unknown-elf"]
[components.et]
source = { kind = "git", url = "https://example.org/et", commit = "0123456789abcdef0123456789abcdef01234567" }
arches = ["riscv64"]
[cases.m]
models = ["add"]
[baremetal.rv32-elf]
toolroot = "tools"
qemu = "qemu-system-riscv32"
abi = "ilp32d"
source = "et"
cases = "m"
[baremetal.rv32-elf.profiles]
novector = "rv32,v=false"
[baremetal.rv32-elf.builds]
scalar = { march = "rv32imafdc", profiles = ["novector"] }
"""


def parse(text: str) -> Config:
    return config_mod.parse(versions_header() + text, Path("/x/versions.toml"))


def test_the_repository_declares_both_targets_on_the_forky_tool_root(cfg: Config) -> None:
    assert set(cfg.baremetal) == {"rv64-elf", "rv32-elf"}
    rv64 = cfg.baremetal["rv64-elf"]
    assert [(b.name, b.march) for b in rv64.builds] == [("scalar", "rv64imafdc"), ("rvv", "rv64imafdcv")]
    assert "novector" in rv64.builds[0].profiles and "novector" not in rv64.builds[1].profiles
    assert cfg.toolroots[rv64.toolroot].suite == "forky"
    assert any(arg.endswith("esp_baremetal.cmake") for arg in rv64.cmake_args)  # "@executorch-baremetal" expanded


@pytest.mark.parametrize(("edit", "message"), [
    pytest.param(('toolroot = "tools"', 'toolroot = "tool"'), r"baremetal\.rv32-elf\.toolroot: unknown tool root "
                 r"'tool'; did you mean 'tools'\?", id="toolroot"),
    pytest.param(('abi = "ilp32d"', 'abi = "lp64d"'), r"'lp64d' is not an rv32 ABI", id="abi"),
    pytest.param(('march = "rv32imafdc"', 'march = "rv64imafdc"'), r"'rv64imafdc' is not an rv32 -march", id="march"),
    pytest.param(('profiles = ["novector"] }', 'profiles = ["rvv"] }'), r"unknown profile 'rvv'", id="profile"),
    pytest.param(('novector = "rv32,v=false"', 'novector = "rv64,v=false"'), r"is not an rv32 CPU", id="cpu"),
    pytest.param(('source = "et"', 'source = "nope"'), r"baremetal\.rv32-elf\.source: 'nope' is not a component",
                 id="source"),
    pytest.param(('cases = "m"', 'cases = "n"'), r"unknown case matrix 'n'", id="cases"),
    pytest.param(('profiles = ["novector"] }', 'profiles = ["novector"], exempt = { mv3 = "x" } }'),
                 r"builds\.scalar\.exempt\.mv3: 'mv3' is no model of \[cases\.m\]", id="exempt-model"),
    pytest.param(('packages = ["gcc-riscv64-unknown-elf"]', 'packages = ["--upload-pack=x"]'),
                 r"toolroots\.tools\.packages\[0\]: '--upload-pack=x' is not a Debian package name", id="package"),
    pytest.param(('packages = ["gcc-riscv64-unknown-elf"]', 'mirror = "-x"'), r"toolroots\.tools\.mirror: '-x' is "
                 r"not an http", id="mirror"),
])
def test_mistakes_are_one_line_naming_the_key(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        parse(TARGET.replace(*edit))
    assert "\n" not in str(raised.value)


def test_the_toolchain_file_names_the_wrappers_and_the_builds_isa() -> None:
    target = parse(TARGET).baremetal["rv32-elf"]
    tools = {name: Path(f"/b/bin/riscv64-unknown-elf-{name}") for name in TOOLS}
    text = render_toolchain(target, target.builds[0], tools)
    assert 'set(CMAKE_C_COMPILER "/b/bin/riscv64-unknown-elf-gcc")' in text
    assert 'set(CMAKE_CXX_COMPILER "/b/bin/riscv64-unknown-elf-g++")' in text
    assert "-march=rv32imafdc -mabi=ilp32d -mcmodel=medany" in text and "CMAKE_SYSTEM_PROCESSOR riscv32" in text
    assert "--specs=picolibcpp.specs" in text and "CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY" in text
    assert (REPO / "components" / "baremetal" / "crosslane_start.c").is_file()


def test_a_case_that_cannot_run_on_bare_metal_is_a_usage_error(cfg: Config) -> None:
    import io

    from crosslane.baremetal.lane import cases_for
    from crosslane.context import Context
    from crosslane.errors import UsageError
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    ctx = Context(cfg, Runner(Log(io.StringIO())))
    target = cfg.baremetal["rv64-elf"]
    assert [c.name for c in cases_for(ctx, target)] == ["add-portable", "mv2-portable"]
    assert [c.name for c in cases_for(ctx, target, ["add"])] == ["add-portable"]
    assert "yolo26-portable" not in [c.name for c in cases_for(ctx, target, ["all"])]  # exempt upstream case
    for wrong in ("ad", "yolo26"):
        with pytest.raises(UsageError, match=f"--case {wrong}: no portable case"):
            cases_for(ctx, target, [wrong])
