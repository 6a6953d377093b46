"""A component states the ISA extensions its code needs (`cpu_extensions = { riscv64 = ["zfh"] }`) instead of new
profiles for the whole arch: each is added to every profile it runs on, spelled for the qemu that runs it (7.2:
Zfh=true; 8.2 and later: zfh=true), and preflight runs every such -cpu string, and every profile's own, under that
qemu: a property it does not have is a FAIL naming the profile, the property and the emulator.

Real: a program whose default build uses Zfh, built with clang against the riscv64 sysroot and run under the host's
qemu-user 7.2, which dies of SIGILL on the stock profiles; qemu 11 comes from a tool root (`[toolroots.qemu-user]`,
made for arm64's emulator), run when it is made."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.errors import ConfigError
from crosslane.guest import qemu
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.preflight import doctor
from crosslane.preflight.checks import REGISTRY
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane_helpers import REPO, probes

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(half C)
add_executable(half half.c)
install(TARGETS half)
"""
# _Float16 arithmetic compiled for Zfh is fmul.h/fadd.h: an illegal instruction on a CPU without Zfh
HALF = """#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    volatile _Float16 a = (_Float16)atof(argc > 1 ? argv[1] : "1.5"), b = (_Float16)0.25;
    _Float16 c = a * b + a;
    printf("half: %.4f\\n", (double)c);
    return 0;
}
"""
COMPONENT = """
[components.half]
source = {{ kind = "tree", path = "components/half" }}
arches = ["riscv64"]
cmake_args = ["-DCMAKE_C_FLAGS=-march=rv64gc_zfh"]
{extensions}
[components.half.smoke]
kind = "command"
argv = ["{{install}}/bin/half"]
sentinel = "half: 1.8750"
timeout = 60
profiles = {profiles}
"""


# The repository's versions.toml up to its components: tools, the forky sysroot, toolchains, tool roots, arches
HEAD = (REPO / "versions.toml").read_text().split("\n[components.")[0]


def project(root: Path, extensions: str = 'cpu_extensions = { riscv64 = ["zfh"] }',
            profiles: str = '["novector", "rvv128"]', *, head: str = HEAD) -> config_mod.Config:
    """The repository's arches and profiles with the `half` component."""
    (root / "components/half").mkdir(parents=True, exist_ok=True)
    (root / "components/half/CMakeLists.txt").write_text(PROJECT)
    (root / "components/half/half.c").write_text(HALF)
    path = root / "versions.toml"
    path.write_text(head + COMPONENT.format(profiles=profiles, extensions=extensions))
    return config_mod.load(path)


def context(cfg: config_mod.Config) -> Context:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    ctx.ensure_sysroot(Arch.RISCV64)
    return ctx


def finding(ctx: Context, check: str, component: str | None = "half") -> doctor.Finding:
    found = doctor.run(probes(ctx), Arch.RISCV64, [component] if component else [],
                       registry=[c for c in REGISTRY if c.name == check])
    return next(f for f in found if f.component == (component or "-"))


# -- the defect: a component whose code uses Zfh, on the stock profiles ----------------------------------------

@pytest.mark.cross
@pytest.mark.qemu
@pytest.mark.network
def test_a_component_runs_its_zfh_code_on_every_profile_it_names(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = context(project(tmp_path))
    built = [r for r in pipeline.build_components(ctx, Arch.RISCV64, ["half"]) if r.label == "build"]
    assert [r.verdict for r in built] == [Verdict.PASS], built
    rows = {r.profile: r for r in pipeline.smoke_components(ctx, Arch.RISCV64, ["half"])}
    assert sorted(rows) == ["novector", "rvv128"]
    assert all(r.verdict is Verdict.PASS for r in rows.values()), rows
    # Without the extension the stock profiles kill it: what the key is for
    bare = Context(project(tmp_path, extensions=""), ctx.runner)
    died = {r.profile: r for r in pipeline.smoke_components(bare, Arch.RISCV64, ["half"])}
    assert all(r.verdict is Verdict.FAIL and "SIGILL" in r.reason for r in died.values()), died


# -- spelled for the emulator, checked by it ---------------------------------------------------------------

@pytest.mark.parametrize(("extension", "version", "spelled"), [
    ("zfh", "7.2.22", "Zfh"), ("zve64f", "8.1.5", "Zve64f"), ("zfh", "8.2.0", "zfh"), ("zfh", "11.1.0", "zfh"),
    ("zba", "7.2.22", "zba"), ("zvfh", "7.2.22", "zvfh"), ("zfh", None, "zfh"),
], ids=["7.2-capital", "8.1-capital", "8.2-lower", "11-lower", "always-lower", "unknown-to-7.2", "no-version"])
def test_the_property_is_spelled_for_the_qemu_version(extension: str, version: str | None, spelled: str) -> None:
    assert qemu.property_name(extension, version) == spelled
    profile = qemu.with_extensions(Profile("rvv128", "rv64,v=true,vlen=128"), (extension,), version)
    assert profile == Profile("rvv128", f"rv64,v=true,vlen=128,{spelled}=true")


@pytest.mark.cross
@pytest.mark.qemu
@pytest.mark.network
def test_preflight_runs_the_spelled_extensions_under_the_hosts_qemu_7_2(tmp_path: Path) -> None:
    ctx = context(project(tmp_path, profiles="[]"))
    passed = finding(ctx, "cpu-extensions")
    assert passed.status is Verdict.PASS, passed
    assert passed.message.startswith("qemu 7.2")
    assert "qemu-riscv64-static) runs novector, rvv128, rvv256, rvv512 with Zfh=true" in passed.message


@pytest.mark.cross
@pytest.mark.qemu
@pytest.mark.network
def test_an_extension_the_emulator_lacks_is_named_with_its_profile_and_emulator(tmp_path: Path) -> None:
    ctx = context(project(tmp_path, 'cpu_extensions = { riscv64 = ["zfh", "zvfh"] }', '["rvv128"]'))
    failed = finding(ctx, "cpu-extensions")
    assert failed.status is Verdict.FAIL, failed
    named = ("has no CPU property for zvfh (components.half.cpu_extensions.riscv64): profile rvv128: "
             "no CPU property 'zvfh'")
    assert failed.message.startswith("qemu 7.2.") and named in failed.message
    assert f"({qemu.qemu_binary(ctx.runner, Arch.RISCV64)})" in failed.message  # the emulator that runs riscv64
    assert failed.fix.startswith("drop zvfh from components.half.cpu_extensions.riscv64")
    assert ("preflight:cpu-extensions", Verdict.FAIL) in [
        (r.label, r.verdict) for r in pipeline.build_components(ctx, Arch.RISCV64, ["half"])]  # the build stops


@pytest.mark.cross
@pytest.mark.qemu
@pytest.mark.network
def test_a_profile_spelled_for_another_qemu_is_named(tmp_path: Path) -> None:
    """qemu 11's spelling in a profile (zfh=true) under the host's 7.2: the profile, the property, the emulator."""
    head = HEAD.replace('novector = "rv64,zba=true,zbb=true,zbs=true,v=false"',
                        'novector = "rv64,zba=true,zbb=true,zbs=true,v=false,zfh=true"')
    ctx = context(project(tmp_path, extensions="", head=head))
    failed = finding(ctx, "qemu-cpu-profiles", None)
    assert failed.status is Verdict.FAIL, failed
    named = "qemu-riscv64-static) rejects profile novector: no CPU property 'zfh' (rv64,zba=true,zbb=true,zbs=true,"
    assert failed.message.startswith("qemu 7.2.") and named in failed.message and "rvv128" not in failed.message


@pytest.mark.cross
@pytest.mark.qemu
def test_qemu_11_from_the_tool_root_takes_the_lower_case_names(tmp_path: Path) -> None:
    cfg = project(tmp_path, 'cpu_extensions = { riscv64 = ["zfh", "zvfh"] }', '["rvv128"]')
    if toolroot.find(cfg.toolroots["qemu-user"]) is None:
        pytest.skip("the qemu-user tool root is not made (invoke sysroot --arch arm64 makes it)")
    head = HEAD.replace('toolchain = "clang"   # GCC 12', 'emulator = "qemu-user"\ntoolchain = "clang"   # GCC 12')
    ctx = context(project(tmp_path, 'cpu_extensions = { riscv64 = ["zfh", "zvfh"] }', '["rvv128"]', head=head))
    passed = finding(ctx, "cpu-extensions")
    assert passed.status is Verdict.PASS and "with zfh=true, zvfh=true" in passed.message, passed


# -- bad input, named on load --------------------------------------------------------------------------------

@pytest.mark.parametrize(("extensions", "message"), [
    ('{ amd64 = ["avx2"] }', "components.half.cpu_extensions.amd64: qemu's amd64 CPUs take no ISA extensions"),
    ('{ riscv64 = ["Zfh"] }', "components.half.cpu_extensions.riscv64[0]: 'Zfh' is not an ISA extension as the ISA "
                              "string writes it"),
    ('{ riscv64 = ["v"] }', "components.half.cpu_extensions.riscv64[0]: 'v' is what the profiles vary"),
    ('{ riscv64 = ["zfh", "zfh"] }', "components.half.cpu_extensions.riscv64[1]: 'zfh' is named twice"),
    ('{ riscv64 = ["zfh=true,v=true"] }', "is not an ISA extension"),
    ('["zfh"]', "components.half.cpu_extensions: expected a table"),
], ids=["no-properties-on-amd64", "qemu-spelling", "the-vector-unit", "twice", "a-property-list", "not-per-arch"])
def test_a_wrong_extension_is_refused_on_load(tmp_path: Path, extensions: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"versions\.toml: ") as raised:
        project(tmp_path, f"cpu_extensions = {extensions}")
    assert message in str(raised.value)
