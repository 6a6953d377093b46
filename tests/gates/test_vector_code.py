"""gates/vector_code.py on real RISC-V objects (clang-19): a loop built for rv64gcv holds vector instructions,
the same loop built for rv64gc holds none, RVC code is walked correctly, and a smoke row of a vector profile says
which of the two its install folder's code is."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config, Profile
from crosslane.context import Context
from crosslane.gates import vector_code
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.run import pipeline

pytestmark = [pytest.mark.cross]

LOOP = "void add(int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) a[i] += b[i]; }\n"


def compiled(tmp_path: Path, march: str) -> Path:
    clang = shutil.which("clang-19")
    if clang is None:
        pytest.skip("clang-19 is installed by invoke setup")
    source = tmp_path / "loop.c"
    source.write_text(LOOP)
    out = tmp_path / f"loop-{march}.o"
    subprocess.run([clang, "--target=riscv64-linux-gnu", f"-march={march}", "-O3", "-c", str(source), "-o", str(out)],
                   check=True, capture_output=True, timeout=120)
    return out


def test_vector_code_is_counted_and_scalar_code_has_none(tmp_path: Path) -> None:
    vector = vector_code.scan(compiled(tmp_path, "rv64gcv"))
    scalar = vector_code.scan(compiled(tmp_path, "rv64gc"))
    assert vector.scanned and vector.instructions >= 3, vector  # vsetvli, vle32, vadd, vse32 at least
    assert scalar.scanned and scalar.instructions == 0, scalar
    assert "RVV instructions in 1 of 2 ELF files" in vector_code.summary([vector, scalar])
    assert "no RVV instruction in its 1 ELF files" in vector_code.summary([scalar])


def test_what_is_not_riscv_code_is_not_scanned(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file\n")
    assert not vector_code.scan(text).scanned
    assert vector_code.scan(Path(shutil.which("true") or "/bin/true")).why == "not RISC-V"
    assert vector_code.summary([vector_code.scan(text)]).startswith("no RISC-V ELF file")


def test_a_truncated_or_mangled_object_is_not_scanned_and_never_raises(tmp_path: Path) -> None:
    import random
    data = compiled(tmp_path, "rv64gcv").read_bytes()
    rng = random.Random(5)
    broken = tmp_path / "broken.o"
    outcomes = set()
    for _ in range(200):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        broken.write_bytes(bytes(mutated[:rng.randrange(16, len(mutated) + 1)]))
        found = vector_code.scan(broken)
        outcomes.add(found.scanned)
        assert found.scanned or found.why, found
    assert False in outcomes  # some mutations were refused, by name, not by a traceback


def test_a_stream_of_compressed_and_full_instructions() -> None:
    c_nop = (0x0001).to_bytes(2, "little")  # c.nop
    addi = (0x00000013).to_bytes(4, "little")  # addi x0, x0, 0
    vsetvli = (0x0D0572D7).to_bytes(4, "little")  # vsetvli t0, a0, e32, m1, ta, ma
    vle32 = (0x02056087).to_bytes(4, "little")  # vle32.v v1, (a0)
    flw = (0x00052007).to_bytes(4, "little")  # flw f0, 0(a0): LOAD-FP with a scalar width
    assert vector_code.count(c_nop + vsetvli + c_nop + addi + vle32 + flw + c_nop) == 2
    assert vector_code.count(c_nop + vsetvli[:2]) == 0  # a cut instruction at the end is no instruction


def test_vector_profile_rows_carry_the_evidence(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    install = tmp_path / "build" / "riscv64" / "demo" / "install" / "lib"
    install.mkdir(parents=True)
    shutil.copy(compiled(tmp_path, "rv64gc"), install / "libdemo.so")
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profiles = [Profile("novector", "rv64,v=false"), Profile("rvv128", "rv64,v=true,vlen=128")]
    rows = [Row(component="demo", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="OK",
                profile=p.name) for p in profiles]
    done = pipeline.with_vector_evidence(ctx, Arch.RISCV64, "demo", rows, profiles)
    assert done[0].reason == "OK"  # no vector unit: nothing to say
    assert done[1].reason.startswith("OK; no RVV instruction in its 1 ELF files")


def test_a_wheel_components_rows_scan_the_site_its_smoke_unpacked(cfg: Config, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel component's install folder holds the wheel, not ELF files: its smoke loads the unpacked site."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    component = tmp_path / "build" / "riscv64" / "demo"
    (component / "install" / "dist").mkdir(parents=True)
    site = component / "target-site" / "site" / "demo"
    site.mkdir(parents=True)
    for name in ("libone.so", "libtwo.so"):
        shutil.copy(compiled(tmp_path, "rv64gc"), site / name)
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profile = Profile("rvv128", "rv64,v=true,vlen=128")
    [done] = pipeline.with_vector_evidence(ctx, Arch.RISCV64, "demo",
                                           [Row(component="demo", arch=Arch.RISCV64, check=Check.SMOKE,
                                                verdict=Verdict.PASS, reason="OK", profile="rvv128")], [profile])
    assert done.reason.startswith("OK; no RVV instruction in its 2 ELF files"), done.reason
