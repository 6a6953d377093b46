"""The arch table's facts (archs.py) and which CPU profiles have a vector unit on which arch."""

from __future__ import annotations

import pytest

from crosslane.archs import ARCHS, Arch, by_elf_machine, ext_suffix, info
from crosslane.config import Profile


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
