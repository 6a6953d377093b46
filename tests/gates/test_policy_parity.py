"""gates/policy.py against auditwheel's own analysis (the pinned version, in-process) on real shared objects: the
same most compatible policy for each rule it applies (symbol versions, libraries outside the whitelist, a
blacklisted zlib symbol, an x86-64 ISA level, PyFPE_jbuf, a grafted library) and for the lane's real wheels
where they are built."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.files.paths import build_root
from crosslane.gates import manylinux, policy
from crosslane.report import Verdict
from gatekit import PLAIN_C, THREADS_C, USES_DEP_C, compiled, make_wheel

pytestmark = pytest.mark.spawns

PYFPE_C = ("extern int PyFPE_jbuf;\nint *PyInit_demo(void) { return &PyFPE_jbuf; }\n")
ZLIB_INTERNAL_C = "void _tr_init(void *s);\nvoid start(void *s) { _tr_init(s); }\n"


def auditwheel_overall(wheel: Path, search: str = "") -> str:
    from auditwheel.wheel_abi import analyze_wheel_abi
    from auditwheel.wheeltools import get_wheel_architecture, get_wheel_libc

    found = analyze_wheel_abi(get_wheel_libc(wheel.name), get_wheel_architecture(wheel.name), wheel, frozenset(),
                              disable_isa_ext_check=False, allow_graft=False, args_ldpaths=search or None)
    return str(found.overall_policy.name)


def ours(wheel: Path, arch: Arch) -> str:
    analysis = manylinux.analyze_wheel(wheel, arch)
    assert isinstance(analysis, policy.Analysis), analysis
    return analysis.overall.name


def library_dep(tmp_path: Path, soname: str, source: str) -> Path:
    dep = tmp_path / "deps" / "lib"
    dep.mkdir(parents=True, exist_ok=True)
    (dep / soname).write_bytes(compiled(tmp_path, "dep", source, f"-Wl,-soname,{soname}"))
    return dep


def case_wheel(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return make_wheel(folder, "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", files)


@pytest.mark.parametrize("case", ["threads", "plain", "external", "grafted", "zlib-internal", "isa-v3", "pyfpe"])
def test_the_same_policy_as_auditwheel(tmp_path: Path, case: str) -> None:
    search = ""
    if case == "threads":
        files = {"demo/libdemo.so": compiled(tmp_path, "t", THREADS_C)}
    elif case == "plain":
        files = {"demo/libdemo.so": compiled(tmp_path, "p", PLAIN_C)}
    elif case in ("external", "grafted"):
        dep = library_dep(tmp_path, "libcrosslanedep.so", "int dep(void) { return 2; }\n")
        rpath = ["-Wl,-rpath,$ORIGIN/../demo.libs"] if case == "grafted" else []
        files = {"demo/libdemo.so": compiled(tmp_path, "u", USES_DEP_C, "-L", str(dep), "-lcrosslanedep", *rpath)}
        if case == "grafted":
            files["demo.libs/libcrosslanedep.so"] = (dep / "libcrosslanedep.so").read_bytes()
        search = str(dep)
    elif case == "zlib-internal":
        dep = library_dep(tmp_path, "libz.so.1", "void _tr_init(void *s) { (void)s; }\n")
        (dep / "libz.so").symlink_to("libz.so.1")
        files = {"demo/libdemo.so": compiled(tmp_path, "z", ZLIB_INTERNAL_C, "-L", str(dep), "-lz")}
        search = str(dep)
    elif case == "isa-v3":
        files = {"demo/libdemo.so": compiled(tmp_path, "v3", PLAIN_C, "-march=x86-64-v3", "-Wl,-z,x86-64-v3")}
    else:
        files = {"demo.cpython-311-x86_64-linux-gnu.so": compiled(tmp_path, "f", PYFPE_C)}
    wheel = case_wheel(tmp_path, case, files)
    expected = auditwheel_overall(wheel, search)
    assert ours(wheel, Arch.AMD64) == expected
    # Each case exercises the rule it names: not every one lands on the same policy.
    assert {"threads": "manylinux_2_34_x86_64", "plain": "manylinux_2_5_x86_64", "external": "linux_x86_64",
            "grafted": "manylinux_2_5_x86_64", "zlib-internal": "linux_x86_64", "isa-v3": "linux_x86_64",
            "pyfpe": "linux_x86_64"}[case] == expected
    # The name claims manylinux_2_17: the gate names the rule that breaks the claim, or passes it.
    found = manylinux.tag_row(wheel, Arch.AMD64)
    assert found is not None
    reason = {"threads": "needs GLIBC_2.34 of libc.so.6 (newer than the policy allows)",
              "external": "needs libcrosslanedep.so (outside the policy's libraries",
              "zlib-internal": "uses symbols the policy forbids: _tr_init of libz.so.1",
              "isa-v3": "needs an x86-64 ISA level above the baseline: demo/libdemo.so",
              "pyfpe": "takes PyFPE_jbuf: demo.cpython-311-x86_64-linux-gnu.so"}.get(case)
    if reason is None:
        assert found.verdict is Verdict.PASS, found.reason
    else:
        assert found.verdict is Verdict.FAIL and reason in found.reason, found.reason
        assert manylinux.blockers(wheel).startswith("manylinux_2_41_x86_64: ")


def test_aliases_and_names_without_an_arch(tmp_path: Path) -> None:
    plain = {"demo/libdemo.so": compiled(tmp_path, "p", PLAIN_C)}
    legacy = make_wheel(tmp_path, "demo-1.0-cp311-cp311-manylinux2014_x86_64.whl", plain)
    found = manylinux.tag_row(legacy, Arch.AMD64)
    assert found is not None and found.verdict is Verdict.PASS and "manylinux_2_5_x86_64" in found.reason
    assert policy.by_name("x86_64", "manylinux2014_x86_64") == policy.by_name("x86_64", "manylinux_2_17_x86_64")
    odd = make_wheel(tmp_path, "demo-1.0-cp311-cp311-manylinux_2_17_sparc.whl", plain)
    assert "no arch of crosslane's" in manylinux.blockers(odd)


def lane_wheels() -> list[tuple[Arch, Path]]:
    root = build_root(Path(__file__).resolve().parents[2])
    found = []
    for arch in (Arch.AMD64, Arch.ARM64, Arch.RISCV64):
        found += [(arch, w) for w in sorted((root / arch.value / "onnxruntime-genai" / "install").rglob("*.whl"))]
    bench = sorted((root / "bench").glob("onnxruntime_genai-0.18.0-*aarch64.whl"))
    return found + [(Arch.ARM64, w) for w in bench]


def test_the_lane_wheels_get_auditwheels_policy() -> None:
    wheels = lane_wheels()
    if not wheels:
        pytest.skip("no genai wheel is built here (nox -s build-riscv64 builds them)")
    for arch, wheel in wheels:
        assert ours(wheel, arch) == auditwheel_overall(wheel), wheel.name
