"""The canary smoke's judgement of its program's JSON line (smokes/canary.py): vector detected exactly when the
profile enables it, the kernel and VLEN it reports, the checksum against the amd64 control."""

from __future__ import annotations

import pytest

from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.smokes import canary

RV = "rv64,zba=true,zbb=true,zbs=true"


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
