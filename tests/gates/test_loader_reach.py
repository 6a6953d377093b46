"""DT_NEEDED resolves only where the target's loader looks: a program shipped beside its library, without a RUNPATH
that reaches it, is a FAIL naming both (it dies with exit 127 under qemu); $ORIGIN/../lib makes it a PASS.

Real riscv64 ELF files from riscv64-linux-gnu-gcc, resolved against the real riscv64 sysroot.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.gates.verify import verify
from crosslane.guest import qemu
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Row, Verdict

pytestmark = pytest.mark.cross

CC = "riscv64-linux-gnu-gcc"
LIBPROJ_C = "int proj(void) { return 41; }\n"
LIBUSER_C = "int proj(void);\nint user(void) { return proj() + 1; }\n"
PROGRAM_C = "int proj(void);\nint main(void) { return proj() == 41 ? 0 : 1; }\n"
BOTH_C = "int proj(void);\nint user(void);\nint main(void) { return proj() + user() == 83 ? 0 : 1; }\n"


def cc(tmp_path: Path, source: str, out: Path, *flags: str | Path) -> Path:
    src = tmp_path / f"{out.name}.c"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(source)
    out.parent.mkdir(parents=True, exist_ok=True)
    Runner(Log()).run([CC, "-O1", "-o", out, src, *flags], quiet=True)
    return out


def install_tree(tmp_path: Path, *program_flags: str) -> Path:
    """install/lib/libproj.so.1 and install/bin/tool linked against it with *program_flags*."""
    install = tmp_path / "install"
    lib = cc(tmp_path, LIBPROJ_C, install / "lib" / "libproj.so.1", "-shared", "-fPIC", "-Wl,-soname,libproj.so.1")
    cc(tmp_path, PROGRAM_C, install / "bin" / "tool", lib, *program_flags)
    return install


def dt_needed(rows: list[Row]) -> dict[str, Row]:
    return {r.component: r for r in rows if r.subject == "dt-needed"}


def test_program_without_runpath_to_its_library_fails_naming_both(tmp_path: Path,
                                                                  sysroots: dict[Arch, Path]) -> None:
    install = install_tree(tmp_path)
    found = dt_needed(verify(Arch.RISCV64, [install], sysroot_path=sysroots[Arch.RISCV64], python_version=None))
    tool = found["bin/tool"]
    assert tool.verdict is Verdict.FAIL, tool.reason
    assert tool.reason.startswith("bin/tool: unresolved libproj.so.1"), tool.reason
    assert "tool has no RUNPATH" in tool.reason and "$ORIGIN/../lib" in tool.reason
    assert str(install / "lib") in tool.reason  # where the library lies that the loader does not reach
    assert found["lib/libproj.so.1"].verdict is Verdict.PASS  # libc resolves in the sysroot


def test_origin_relative_runpath_passes(tmp_path: Path, sysroots: dict[Arch, Path]) -> None:
    install = install_tree(tmp_path, "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags")
    found = dt_needed(verify(Arch.RISCV64, [install], sysroot_path=sysroots[Arch.RISCV64], python_version=None))
    assert [r.verdict for r in found.values()] == [Verdict.PASS, Verdict.PASS], found


def test_staging_declared_by_the_caller_still_resolves_but_not_for_the_pipeline(tmp_path: Path,
                                                                                sysroots: dict[Arch, Path]) -> None:
    install = install_tree(tmp_path)
    stage = install.parent / "stage"
    (stage / "lib").mkdir(parents=True)
    (stage / "lib" / "libproj.so.1").write_bytes((install / "lib" / "libproj.so.1").read_bytes())
    rows = verify(Arch.RISCV64, [install / "bin"], sysroot_path=sysroots[Arch.RISCV64], python_version=None,
                  staging=[stage])
    assert dt_needed(rows)["tool"].verdict is Verdict.PASS  # invoke verify --staging: the caller's word
    rows = verify(Arch.RISCV64, [install / "bin"], sysroot_path=sysroots[Arch.RISCV64], python_version=None,
                  staging=[stage], staging_for_files=False)
    assert dt_needed(rows)["tool"].verdict is Verdict.FAIL  # the build gate: a dependency's folder is no search path


def test_a_library_the_loader_already_holds_and_an_inherited_rpath_resolve(tmp_path: Path,
                                                                           sysroots: dict[Arch, Path]) -> None:
    """libuser needs libproj and has no RUNPATH: it still loads when the program loaded libproj first (ld.so
    matches the SONAME), or when the program's DT_RPATH (not RUNPATH) reaches it, as glibc searches it."""
    install = tmp_path / "install"
    lib = install / "lib"
    proj = cc(tmp_path, LIBPROJ_C, lib / "libproj.so.1", "-shared", "-fPIC", "-Wl,-soname,libproj.so.1")
    user = cc(tmp_path, LIBUSER_C, lib / "libuser.so.1", "-shared", "-fPIC", "-Wl,-soname,libuser.so.1", proj)
    cc(tmp_path, BOTH_C, install / "bin" / "both", proj, user, "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags",
       "-Wl,--no-as-needed")
    cc(tmp_path, "int user(void);\nint main(void) { return user() == 42 ? 0 : 1; }\n", install / "bin" / "old-rpath",
       user, "-Wl,-rpath-link," + str(lib), "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--disable-new-dtags")
    cc(tmp_path, "int user(void);\nint main(void) { return user() == 42 ? 0 : 1; }\n", install / "bin" / "runpath",
       user, "-Wl,-rpath-link," + str(lib), "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags")
    found = dt_needed(verify(Arch.RISCV64, [install], sysroot_path=sysroots[Arch.RISCV64], python_version=None))
    assert found["bin/both"].verdict is Verdict.PASS, found["bin/both"].reason
    assert found["bin/old-rpath"].verdict is Verdict.PASS, found["bin/old-rpath"].reason
    # RUNPATH is the object's own: libuser's libproj is not found through the program's
    runpath = found["bin/runpath"]
    assert runpath.verdict is Verdict.FAIL and "libproj.so.1 (needed by libuser.so.1)" in runpath.reason


@pytest.mark.qemu
def test_the_verdicts_agree_with_the_loader_under_qemu(tmp_path: Path, cfg: Config,
                                                         sysroots: dict[Arch, Path]) -> None:
    """What the gate says is what ld.so does: the program without RUNPATH dies with exit 127 naming the library."""
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profile = cfg.arches[Arch.RISCV64].profile(cfg.arches[Arch.RISCV64].default_profile)
    line = qemu.command(ctx.qemu(Arch.RISCV64), sysroots[Arch.RISCV64], profile)
    bare = install_tree(tmp_path / "bare")
    reaching = install_tree(tmp_path / "reaching", "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags")
    died = ctx.runner.run([*line, bare / "bin" / "tool"], check=False, quiet=True, timeout=120)
    assert died.returncode == 127 and "libproj.so.1: cannot open shared object file" in died.output, died.output
    assert ctx.runner.run([*line, reaching / "bin" / "tool"], check=False, quiet=True, timeout=120).returncode == 0
