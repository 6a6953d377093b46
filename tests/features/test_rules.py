"""The XNNPACK compiler rule and the rustup positive-evidence rule, branch by branch (pure, no processes)."""

from __future__ import annotations

import pytest

from crosslane.archs import Arch
from crosslane.features import rules
from crosslane.features.probes import RustupListing
from crosslane.host.toolchains import Compiler
from crosslane.report import Verdict


def compiler(family: str, version: str, arch: Arch = Arch.RISCV64) -> Compiler:
    return Compiler(family, family, arch, (f"/usr/bin/{family}",), (f"/usr/bin/{family}++",), version, (), ())


XNNPACK_CASES = [
    # requested, arch, family, version, rvv_ok -> status, enabled
    ("off", Arch.RISCV64, "clang", "19.1.7", True, Verdict.PASS, False),
    ("on", Arch.AMD64, "gcc", "12.2.0", False, Verdict.PASS, True),
    ("auto", Arch.ARM64, "gcc", "12.2.0", False, Verdict.PASS, True),
    ("on", Arch.RISCV64, "gcc", "12.2.0", False, Verdict.FAIL, False),
    ("auto", Arch.RISCV64, "gcc", "12.2.0", False, Verdict.NOTICE, False),
    ("on", Arch.RISCV64, "gcc", "14.2.0", False, Verdict.PASS, True),
    ("auto", Arch.RISCV64, "gcc", "14.1.0", False, Verdict.PASS, True),
    ("on", Arch.RISCV64, "clang", "19.1.7", True, Verdict.PASS, True),
    ("auto", Arch.RISCV64, "clang", "19.1.7", True, Verdict.PASS, True),
    ("on", Arch.RISCV64, "clang", "14.0.6", False, Verdict.FAIL, False),
    ("auto", Arch.RISCV64, "clang", "14.0.6", False, Verdict.NOTICE, False),
]


@pytest.mark.parametrize(("requested", "arch", "family", "version", "rvv_ok", "status", "enabled"), XNNPACK_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}{c[3].split('.')[0]}-rvv{int(c[4])}" for c in XNNPACK_CASES])
def test_xnnpack_rule(requested: str, arch: Arch, family: str, version: str, rvv_ok: bool, status: Verdict,
                      enabled: bool) -> None:
    decision = rules.xnnpack(requested, arch, compiler(family, version, arch), rvv_ok)
    assert (decision.status, decision.enabled) == (status, enabled)
    if status is Verdict.FAIL:
        assert decision.message.startswith("XNNPACK requires GCC 14+ on riscv64; use clang or GCC 14")
        assert decision.fix
    if status is Verdict.NOTICE:
        assert "turned off" in decision.message


def test_gcc_14_satisfies_the_rule_without_the_rvv_probe() -> None:
    # The rule is about GCC's version: a GCC >= 14 is fit even when no probe result is supplied.
    assert rules.xnnpack("on", Arch.RISCV64, compiler("gcc", "14.2.0"), rvv_ok=False).enabled


TRIPLE = "riscv64gc-unknown-linux-gnu"
RUST_CASES = {
    "lists-the-triple": (RustupListing("listed", frozenset({"x86_64-unknown-linux-gnu", TRIPLE})), Verdict.PASS, True),
    "lists-other-triples": (RustupListing("listed", frozenset({"x86_64-unknown-linux-gnu"}), "installed: x86_64"),
                            Verdict.WARN, False),
    "fails": (RustupListing("failed", detail="rustup exited 1"), Verdict.PASS, True),
    "prints-nothing": (RustupListing("empty", detail="printed nothing"), Verdict.PASS, True),
    "absent": (RustupListing("absent", detail="rustup not found"), Verdict.PASS, True),
}


@pytest.mark.parametrize("case", list(RUST_CASES))
def test_rust_positive_evidence_rule(case: str) -> None:
    listing, status, kept = RUST_CASES[case]
    decision = rules.rust_options(listing, TRIPLE, ("--use_guidance",))
    assert (decision.status, decision.enabled) == (status, kept)
    if not kept:
        assert decision.fix == f"rustup target add {TRIPLE}"
        assert "--use_guidance" in decision.message


def test_every_config_option_has_a_rule() -> None:
    from crosslane.registry import OPTIONS

    assert OPTIONS.names() == ("xnnpack",)
    assert rules.option_rule("xnnpack") is rules.xnnpack_for
