"""Rust cross wiring and the host-link-leak guard, down to the environment each build step receives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from crosslane.archs import ARCHS, Arch, host_arch, info
from crosslane.host.toolchains import Compiler
from crosslane.recipes import cmake, crosswire
from crosslane_helpers import context, fake_buildtools, fake_sysroot, probes, write_config

TARGET_PATHS = {name: f"/target/{name.lower()}" for name in crosswire.HOST_LEAK_VARS}


@pytest.mark.parametrize(("machine", "arch"), [(r.cmake_processor, a) for a, r in ARCHS.items()] + [("sparc", None)],
                         ids=[*(a.value for a in ARCHS), "unknown"])
def test_host_arch_from_the_arch_table(machine: str, arch: Arch | None) -> None:
    assert host_arch(machine) is arch


def test_cross_means_every_arch_but_the_host() -> None:
    assert [a for a in Arch if crosswire.is_cross(a, "aarch64")] == [Arch.AMD64, Arch.RISCV64]


def test_cargo_env_name() -> None:
    name = crosswire.cargo_env_name(info(Arch.RISCV64).rust_target, "LINKER")
    assert name == "CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER"


def compiler(arch: Arch, family: str = "clang") -> Compiler:
    if family == "clang":
        return Compiler("clang", "clang", arch, ("/usr/bin/clang-19",), ("/usr/bin/clang++-19",), "19.1.7",
                        (f"--target={info(arch).triplet}",), ("-fuse-ld=/usr/bin/ld.lld-19",))
    triplet = info(arch).triplet
    return Compiler("gcc", "gcc", arch, (f"/usr/bin/{triplet}-gcc",), (f"/usr/bin/{triplet}-g++",), "12.2.0", (), ())


@pytest.mark.parametrize(("arch", "family"), [(Arch.RISCV64, "clang"), (Arch.ARM64, "gcc")], ids=["riscv64-clang",
                                                                                                 "arm64-gcc"])
def test_rust_component_on_a_cross_arch(tmp_path: Path, arch: Arch, family: str) -> None:
    cfg = write_config(tmp_path, {"rusty": "rust = true"})
    ctx, _ = context(cfg)
    cc = compiler(arch, family)
    wiring = crosswire.wire(probes(ctx), cfg.components["rusty"], arch, cc, Path("/sr"), machine="x86_64")
    triple = info(arch).rust_target
    assert wiring.cmake_args == (f"-DRust_CARGO_TARGET={triple}",)
    assert wiring.env[crosswire.cargo_env_name(triple, "LINKER")] == cc.cc[0]
    flags = wiring.env[crosswire.cargo_env_name(triple, "RUSTFLAGS")].split()
    assert "-Clink-arg=--sysroot=/sr" in flags
    assert ("-Clink-arg=--target=" + info(arch).triplet in flags) is (family == "clang")
    assert wiring.unset == crosswire.HOST_LEAK_VARS


def test_rust_component_on_the_host_arch(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"rusty": "rust = true"})
    ctx, _ = context(cfg)
    wiring = crosswire.wire(probes(ctx), cfg.components["rusty"], Arch.AMD64, compiler(Arch.AMD64, "gcc"),
                            Path("/sr"), machine="x86_64")
    assert (wiring.cmake_args, dict(wiring.env)) == ((), {})
    assert wiring.unset == crosswire.HOST_LEAK_VARS  # build scripts still must not see target paths


@pytest.mark.parametrize(("extra", "guarded"), [('host_tools = ["flatc", "protoc"]', True), ("", False)],
                         ids=["host-tools", "plain"])
def test_guard_follows_the_data(tmp_path: Path, extra: str, guarded: bool) -> None:
    cfg = write_config(tmp_path, {"app": extra})
    ctx, _ = context(cfg)
    wiring = crosswire.wire(probes(ctx), cfg.components["app"], Arch.RISCV64, compiler(Arch.RISCV64), Path("/sr"))
    assert (wiring.unset == crosswire.HOST_LEAK_VARS) is guarded
    assert wiring.cmake_args == () and dict(wiring.env) == {}


DUMPER = """#!{python}
import json, os, pathlib, sys
argv = sys.argv[1:]
step = {{"-S": "configure", "--build": "build", "--install": "install"}}[argv[0]]
folder = argv[argv.index("-B") + 1] if step == "configure" else argv[1]
component = pathlib.Path(folder).parent.name
out = pathlib.Path({dump!r}) / f"{{component}}-{{step}}.json"
out.write_text(json.dumps({{"argv": argv, "env": dict(os.environ)}}))
"""


@pytest.mark.spawns
@pytest.mark.parametrize("arch", [Arch.RISCV64, Arch.AMD64], ids=["riscv64-cross", "amd64-host"])
def test_environment_each_step_receives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arch: Arch) -> None:
    """A fake cmake records argv and environment of configure, build and install for each component."""
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CROSSLANE_BUILD_DIR", raising=False)
    for name, value in TARGET_PATHS.items():
        monkeypatch.setenv(name, value)
    dump = tmp_path / "dump"
    dump.mkdir()
    cfg = write_config(tmp_path, {"rusty": "rust = true", "tools": 'host_tools = ["flatc"]', "plain": ""})
    fake_buildtools(cfg, DUMPER.format(python=sys.executable, dump=str(dump)), "#!/bin/sh\n")
    fake_sysroot(cfg, arch)
    ctx, _ = context(cfg)
    cc = ctx.compiler("rusty", arch)
    triple = info(arch).rust_target
    cross = crosswire.is_cross(arch)
    for name in ("rusty", "tools", "plain"):
        component = cfg.components[name]
        row = cmake.execute(ctx, cmake.plan(ctx, component, arch, cmake.prepare(ctx, component, arch)))
        assert row.verdict.value == "PASS", row
    for step in ("configure", "build", "install"):
        for name in ("rusty", "tools"):
            seen = json.loads((dump / f"{name}-{step}.json").read_text())
            assert not set(crosswire.HOST_LEAK_VARS) & set(seen["env"]), (name, step)
        rusty = json.loads((dump / f"rusty-{step}.json").read_text())
        linker = rusty["env"].get(crosswire.cargo_env_name(triple, "LINKER"))
        assert linker == (cc.cc[0] if cross else None)
        plain = json.loads((dump / f"plain-{step}.json").read_text())
        assert {k: plain["env"].get(k) for k in TARGET_PATHS} == TARGET_PATHS  # the dumper sees what is there
        assert crosswire.cargo_env_name(triple, "LINKER") not in plain["env"]
    configure = json.loads((dump / "rusty-configure.json").read_text())["argv"]
    assert (f"-DRust_CARGO_TARGET={triple}" in configure) is cross
