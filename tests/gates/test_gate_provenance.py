"""ORT provenance: genai built on the chain's ONNX Runtime; each way it can go wrong is its own FAIL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.gates import provenance
from crosslane.report import Verdict

ORT_BYTES = b"\x7fELF chain's libonnxruntime"


def build_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(genai build folder, chain root, chain ORT install), all consistent."""
    chain = tmp_path / "chain"
    ort = chain / "onnxruntime" / "install"
    (ort / "lib").mkdir(parents=True)
    (ort / "lib" / "libonnxruntime.so.1.21.0").write_bytes(ORT_BYTES)
    (ort / "lib" / "libonnxruntime_providers_shared.so").write_bytes(b"shared")
    build = chain / "onnxruntime-genai" / "build"
    (build / "wheel" / "onnxruntime_genai").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(f"# cache\nCMAKE_BUILD_TYPE:STRING=Release\nORT_HOME:PATH={ort}\n")
    (build / "wheel" / "onnxruntime_genai" / "libonnxruntime.so.1.21.0").write_bytes(ORT_BYTES)
    (build / "wheel" / "onnxruntime_genai" / "libonnxruntime-genai.so").write_bytes(b"genai's own")
    return build, chain, ort


def verdicts(build: Path, chain: Path, ort: Path) -> dict[str, tuple[Verdict, str]]:
    return {r.subject: (r.verdict, r.reason) for r in provenance.check(build, chain, ort, Arch.RISCV64)}


def test_consistent_chain_passes(tmp_path: Path) -> None:
    result = verdicts(*build_tree(tmp_path))
    assert {step: v for step, (v, _) in result.items()} == {
        "ort-home": Verdict.PASS, "ort-download": Verdict.PASS, "ort-bytes": Verdict.PASS}
    assert "libonnxruntime.so.1.21.0" in result["ort-bytes"][1]
    assert "genai" not in result["ort-bytes"][1]


def _no_cache(build: Path, tmp: Path) -> None:
    (build / "CMakeCache.txt").unlink()


def _no_ort_home(build: Path, tmp: Path) -> None:
    (build / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=Release\n")


def _ort_home_outside(build: Path, tmp: Path) -> None:
    (build / "CMakeCache.txt").write_text(f"ORT_HOME:PATH={tmp / 'elsewhere' / 'ort'}\n")


def _ortlib_deps(build: Path, tmp: Path) -> None:
    (build / "_deps" / "ortlib-src").mkdir(parents=True)


def _ort_archive(build: Path, tmp: Path) -> None:
    (build / "downloads").mkdir()
    (build / "downloads" / "onnxruntime-linux-x64-1.21.0.tgz").write_bytes(b"")


def _different_bytes(build: Path, tmp: Path) -> None:
    (build / "wheel" / "onnxruntime_genai" / "libonnxruntime.so.1.21.0").write_bytes(b"a downloaded ORT")


def _name_not_in_chain(build: Path, tmp: Path) -> None:
    (build / "wheel" / "onnxruntime_genai" / "libonnxruntime_providers_cuda.so").write_bytes(b"cuda")


def _nothing_shipped(build: Path, tmp: Path) -> None:
    (build / "wheel" / "onnxruntime_genai" / "libonnxruntime.so.1.21.0").unlink()


BREAKS: dict[str, tuple[Callable[[Path, Path], None], str, str]] = {
    "no-cmakecache": (_no_cache, "ort-home", "cannot read"),
    "no-ort-home": (_no_ort_home, "ort-home", "no ORT_HOME entry"),
    "ort-home-outside-chain": (_ort_home_outside, "ort-home", "is outside the chain root"),
    "deps-ortlib": (_ortlib_deps, "ort-download", "_deps/ortlib-src"),
    "ort-archive": (_ort_archive, "ort-download", "downloads/onnxruntime-linux-x64-1.21.0.tgz"),
    "bytes-differ": (_different_bytes, "ort-bytes", "bytes and code differ from the chain's libonnxruntime.so.1.21.0"),
    "name-not-in-chain": (_name_not_in_chain, "ort-bytes", "libonnxruntime_providers_cuda.so: not in the chain"),
    "nothing-shipped": (_nothing_shipped, "ort-bytes", "no ONNX Runtime library shipped"),
}


@pytest.mark.parametrize("case", list(BREAKS), ids=list(BREAKS))
def test_each_break_is_its_own_fail(tmp_path: Path, case: str) -> None:
    build, chain, ort = build_tree(tmp_path)
    breaker, step, reason = BREAKS[case]
    breaker(build, tmp_path)
    result = verdicts(build, chain, ort)
    failed = {s: r for s, (v, r) in result.items() if v is Verdict.FAIL}
    assert list(failed) == [step]
    assert reason in failed[step]


def test_missing_folders_fail(tmp_path: Path) -> None:
    build, chain, ort = build_tree(tmp_path)
    assert provenance.check(tmp_path / "nope", chain, ort, Arch.RISCV64)[0].verdict is Verdict.FAIL
    rows = provenance.check(build, chain, tmp_path / "no-ort", Arch.RISCV64)
    assert [r.verdict for r in rows] == [Verdict.FAIL] and "build onnxruntime first" in rows[0].reason


def test_loaded_library_must_be_the_chains(tmp_path: Path) -> None:
    _, _, ort = build_tree(tmp_path)
    sysroot = tmp_path / "sysroot"
    guest = "/usr/lib/riscv64-linux-gnu/libonnxruntime.so.1.21.0"
    (sysroot / guest.lstrip("/")).parent.mkdir(parents=True)
    (sysroot / guest.lstrip("/")).write_bytes(ORT_BYTES)
    assert provenance.check_loaded(guest, sysroot, ort, Arch.RISCV64).verdict is Verdict.PASS
    (sysroot / guest.lstrip("/")).write_bytes(b"another build of ORT")
    other = provenance.check_loaded(guest, sysroot, ort, Arch.RISCV64)
    assert other.verdict is Verdict.FAIL and "not the chain's libonnxruntime.so.1.21.0" in other.reason
    nothing = provenance.check_loaded("", sysroot, ort, Arch.RISCV64)
    assert nothing.verdict is Verdict.FAIL and "mapped no libonnxruntime" in nothing.reason
    gone = provenance.check_loaded("/nowhere/libonnxruntime.so.1", sysroot, ort, Arch.RISCV64)
    assert gone.verdict is Verdict.FAIL and "not found on the host" in gone.reason


def test_any_cache_variable_can_be_held_to_its_dependency(tmp_path: Path) -> None:
    build, chain, ort = build_tree(tmp_path)
    passed = provenance.check_cache_var(build, "ORT_HOME", ort, Arch.RISCV64, "genai")
    assert (passed.verdict, passed.subject, passed.component) == (Verdict.PASS, "ort-home", "genai")
    elsewhere = provenance.check_cache_var(build, "ORT_HOME", chain / "cpuinfo", Arch.RISCV64)
    assert elsewhere.verdict is Verdict.FAIL and "outside the chain root" in elsewhere.reason
    missing = provenance.check_cache_var(build, "OTHER_HOME", ort, Arch.RISCV64)
    assert missing.verdict is Verdict.FAIL and "no OTHER_HOME entry" in missing.reason
