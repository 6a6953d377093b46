"""Small pure pieces: the arch table, the sentinel protocol, stamps, toolchain files, canary checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crosslane import report, stamps
from crosslane.archs import ARCHS, Arch, by_elf_machine, ext_suffix, info
from crosslane.config import Profile
from crosslane.host.toolchains import Compiler
from crosslane.recipes import cmake_toolchain
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import canary, sentinel


def test_arch_table_facts() -> None:
    assert [info(a).elf_machine for a in Arch] == [62, 183, 243]
    assert ext_suffix(Arch.RISCV64, "3.13") == ".cpython-313-riscv64-linux-gnu.so"
    assert ext_suffix("arm64", "3.13") == ".cpython-313-aarch64-linux-gnu.so"
    assert info(Arch.RISCV64).rust_target == "riscv64gc-unknown-linux-gnu"
    assert info(Arch.RISCV64).wheel_platform == "linux_riscv64"
    assert by_elf_machine(243) is ARCHS[Arch.RISCV64]
    assert by_elf_machine(3) is None
    assert len({a.qemu_binary for a in ARCHS.values()}) == 3


RV = "rv64,zba=true,zbb=true,zbs=true"


@pytest.mark.parametrize("cpu,vector,vlen", [
    (f"{RV},v=false", False, None),
    (f"{RV},v=true,vlen=256,elen=64,vext_spec=v1.0", True, 256),
    ("rv64", False, None),
], ids=["novector", "rvv256", "bare"])
def test_profile_vector(cpu: str, vector: bool, vlen: int | None) -> None:
    profile = Profile("p", cpu)
    assert profile.vector_enabled(Arch.RISCV64) is vector
    assert profile.vlen(Arch.RISCV64) == vlen
    assert Profile("max", "max").vector_enabled(Arch.ARM64) is False


OK = "PROVEN something\nCANARY-BIND OK: fine"


@pytest.mark.parametrize("output,rc,verdict,reason", [
    (OK, 0, Verdict.PASS, "fine"),
    ("", 0, Verdict.FAIL, "no CANARY-BIND sentinel: the program did not run (exit 0)"),
    ("CANARY-BIND FAIL: broken", 0, Verdict.FAIL, "CANARY-BIND FAIL: broken (exit 0, expected 1)"),
    ("CANARY-BIND FAIL: broken", 1, Verdict.FAIL, "CANARY-BIND FAIL: broken"),
    ("CANARY-BIND ABSENT: empty payload", 4, Verdict.FAIL, "CANARY-BIND ABSENT: empty payload"),
    ("CANARY-BIND SKIP: not installed", 3, Verdict.SKIP, "not installed"),
    (OK, 1, Verdict.FAIL, "CANARY-BIND OK but exit 1"),
    (OK, -11, Verdict.FAIL, "crashed with SIGSEGV"),
    (OK, -4, Verdict.FAIL, "crashed with SIGILL"),
    (OK + "\nCANARY-BIND OK: twice", 0, Verdict.FAIL, "2 CANARY-BIND sentinels; exactly one is allowed"),
    (OK + "\ntrailing", 0, Verdict.FAIL, "CANARY-BIND sentinel is not the last line"),
    ("OTHER-BIND OK: x", 0, Verdict.FAIL, "no CANARY-BIND sentinel: the program did not run (exit 0)"),
], ids=["ok", "silent", "fail-rc0", "fail", "absent", "skip", "ok-rc1", "segv", "sigill", "two", "not-last",
        "other-name"])
def test_sentinel_decides_not_rc(output: str, rc: int, verdict: Verdict, reason: str) -> None:
    outcome = sentinel.decide("CANARY", output, rc)
    assert (outcome.verdict, outcome.reason) == (verdict, reason)


def test_sentinel_timeout() -> None:
    assert sentinel.decide("X", OK, 0, timed_out=True).reason == "timed out"


def test_crash_reason_from_shell_code() -> None:
    assert sentinel.crash_reason(139) == "SIGSEGV"
    assert sentinel.crash_reason(1) is None


def result(**over: object) -> dict[str, object]:
    base: dict[str, object] = {"arch": "riscv64", "vector": True, "kernel": "rvv", "vlenb": 32,
                               "checksum_bits": "0x42b40000"}
    base.update(over)
    return base


RVV256 = Profile("rvv256", f"{RV},v=true,vlen=256,elen=64,vext_spec=v1.0")
NOVEC = Profile("novector", f"{RV},v=false")


@pytest.mark.parametrize("data,profile,problem", [
    (result(), RVV256, None),
    (result(vector=False, kernel="scalar", vlenb=-1), NOVEC, None),
    (result(vector=False, kernel="scalar", vlenb=-1), RVV256, "vector detected=False, profile enables it=True"),
    (result(kernel="scalar"), RVV256, "kernel 'scalar' although the CPU has V (silent scalar fallback)"),
    (result(vlenb=16), RVV256, "vlenb 16 x 8 != profile vlen 256"),
    (result(checksum_bits="0x0"), RVV256, "checksum 0x0 != amd64 control 0x42b40000"),
    (result(arch="arm64"), RVV256, "arch 'arm64', expected 'riscv64'"),
    (result(vector=False), NOVEC, "kernel 'rvv' without a vector unit"),
], ids=["rvv-ok", "scalar-ok", "missed-vector", "scalar-fallback", "wrong-vlen", "checksum", "arch", "rvv-no-v"])
def test_canary_expectations(data: dict[str, object], profile: Profile, problem: str | None) -> None:
    problems = canary.check(data, Arch.RISCV64, profile, "0x42b40000")
    if problem is None:
        assert problems == []
    else:
        assert problems[0] == problem


def test_canary_without_control_fails() -> None:
    assert canary.check(result(), Arch.RISCV64, RVV256, None) == ["no amd64 control checksum to compare with"]


def test_parse_json_line() -> None:
    assert canary.parse_json_line('noise\n{"a": 1}\n') == {"a": 1}
    assert canary.parse_json_line("{not json") is None
    assert canary.parse_json_line("nothing") is None


def test_stamps_roundtrip(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.c").write_text("int a;")
    (tree / "sub" / "b.c").write_text("int b;")
    (tree / "link").symlink_to("a.c")
    first = stamps.tree_digest(tree)
    (tree / "sub" / "b.c").write_text("int b2;")
    assert stamps.tree_digest(tree) != first
    key = stamps.key({"x": 1})
    assert not stamps.is_current(tmp_path, key)
    stamps.write(tmp_path, key, {"x": 1})
    assert stamps.is_current(tmp_path, key)
    assert not stamps.is_current(tmp_path, stamps.key({"x": 2}))
    stamps.clear(tmp_path)
    assert stamps.read(tmp_path) is None


def test_toolchain_file_clang_and_gcc(tmp_path: Path) -> None:
    clang = Compiler("clang", "clang", Arch.RISCV64, ("/usr/bin/clang-19",), ("/usr/bin/clang++-19",), "19.1.7",
                     ("--target=riscv64-linux-gnu",), ("-fuse-ld=/usr/bin/ld.lld-19",))
    text = cmake_toolchain.render(clang, Path("/sr"), ["/usr/bin/qemu-riscv64-static", "-L", "/sr", "-cpu", "rv64"])
    assert "set(CMAKE_SYSTEM_PROCESSOR riscv64)" in text
    assert 'set(CMAKE_SYSROOT "/sr")' in text
    assert "set(CMAKE_C_COMPILER_TARGET riscv64-linux-gnu)" in text
    assert 'set(CMAKE_CROSSCOMPILING_EMULATOR "/usr/bin/qemu-riscv64-static;-L;/sr;-cpu;rv64")' in text
    assert "CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER" in text
    gcc = Compiler("gcc", "gcc", Arch.ARM64, ("/usr/bin/aarch64-linux-gnu-gcc",),
                   ("/usr/bin/aarch64-linux-gnu-g++",), "12.2.0", (), ())
    text = cmake_toolchain.render(gcc, Path("/sr"), ["q"], "/usr/bin/ccache")
    assert "COMPILER_TARGET" not in text and "aarch64-linux-gnu-gcc" in text
    assert 'set(CMAKE_C_COMPILER_LAUNCHER "/usr/bin/ccache")' in text
    path = tmp_path / "t.cmake"
    cmake_toolchain.write(path, text)
    mtime = path.stat().st_mtime_ns
    cmake_toolchain.write(path, text)
    assert path.stat().st_mtime_ns == mtime


def test_report_table_and_json(tmp_path: Path) -> None:
    rows = [Row("canary", "riscv64", Check.SMOKE, Verdict.PASS, "ok", subject="cli", profile="rvv128"),
            Row("c", "a", Check.GATE, Verdict.FAIL, "x|y", subject="s")]
    text = report.table(rows)
    assert text.splitlines()[0].split() == ["component", "arch", "step", "verdict", "wall/cpu", "reason"]
    assert "cli@rvv128" in text
    assert "x\\|y" in report.markdown(rows)  # a cell's | escaped, as GitHub's tables read it
    report.write_json(rows, tmp_path / "r.json")
    written = json.loads((tmp_path / "r.json").read_text())
    assert written[1]["verdict"] == "FAIL"
    assert (written[0]["check"], written[0]["subject"], written[0]["profile"]) == ("smoke", "cli", "rvv128")
    assert [Row.from_dict(d) for d in written] == rows
    assert report.failed(rows) == rows[1:]


def test_ci_matrix_is_derived_from_versions_toml(cfg: object, repo: Path) -> None:
    from crosslane.cli import matrix
    from crosslane.config import Config

    assert isinstance(cfg, Config)
    nightly = matrix.plan(cfg, event="schedule")
    assert sorted({row["arch"] for row in nightly.build}) == sorted(a.value for a in cfg.arches)
    riscv = [row["profile"] for row in nightly.smoke if row["arch"] == "riscv64"]
    assert riscv == ["novector", "rvv128", "rvv256", "rvv512"]
    workflow = (repo / ".github/workflows/ci.yml").read_text()
    assert 'invoke matrix --event "$EVENT"' in workflow and '>> "$GITHUB_OUTPUT"' in workflow
    assert "fromJSON(needs.plan.outputs.build)" in workflow and "fromJSON(needs.plan.outputs.smoke)" in workflow
    assert "riscv64" not in workflow, "the workflow must not list arches by hand"
