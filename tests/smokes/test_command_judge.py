"""The declarative smoke's verdict (smokes/command.judge): PASS only on the declared evidence, an expected signal
only where it is declared, a regex's own braces left alone while the run's placeholders are filled literally."""

from __future__ import annotations

import pytest

from crosslane.config import Profile
from crosslane.report import Verdict
from crosslane.smokes import command

RVV128 = Profile("rvv128", "rv64,v=true,vlen=128")
NOVECTOR = Profile("novector", "rv64,v=false")
FILLED = {"install": "/b/riscv64/x+y/install", "profile": "rvv128", "vlen": "128", "vector": "yes",
          "output": "/t/o.json", "arch": "riscv64"}


@pytest.mark.parametrize(("options", "profile", "returncode", "output", "verdict", "words"), [
    ({"sentinel": "OK"}, RVV128, 0, "x\nOK\n", Verdict.PASS, "OK"),
    ({"sentinel": "OK"}, RVV128, 0, "x\nNOT OK\n", Verdict.FAIL, "no line 'OK'"),
    ({"sentinel": "OK"}, RVV128, 3, "OK\n", Verdict.FAIL, "exit 3"),
    ({"sentinel": "OK"}, RVV128, -4, "OK\n", Verdict.FAIL, "died of SIGILL"),
    # a quantifier is the regex's; {vlen} and {install} are the run's, matched literally (the + of the path too)
    ({"pattern": r"^sum \d{6} vlen={vlen} in {install}$"}, RVV128, 0, "sum 499500 vlen=128 in /b/riscv64/x+y/install\n",
     Verdict.PASS, "matched"),
    ({"pattern": r"^sum \d{6} in {install}$"}, RVV128, 0, "sum 499500 in /b/riscv64/xxy/install\n", Verdict.FAIL,
     "no match"),
    ({"sentinel": "OK", "expect": {"novector": "SIGILL"}}, NOVECTOR, -4, "", Verdict.PASS, "expected SIGILL"),
    ({"sentinel": "OK", "expect": {"novector": "SIGILL"}}, NOVECTOR, 0, "OK\n", Verdict.FAIL,
     "expected SIGILL on novector, exit 0"),
    ({"sentinel": "OK", "expect": {"novector": "SIGILL"}}, RVV128, 0, "OK\n", Verdict.PASS, "OK"),
], ids=["sentinel", "no-sentinel", "exit-status", "signal", "pattern-literal-placeholders", "pattern-miss",
        "expected-signal", "expected-signal-absent", "expectation-elsewhere"])
def test_a_run_passes_only_on_its_declared_evidence(options: dict[str, object], profile: Profile, returncode: int,
                                                     output: str, verdict: Verdict, words: str) -> None:
    got, reason = command.judge(options, profile, returncode, output, False, FILLED)
    assert got is verdict and words in reason, reason


def test_a_timed_out_run_fails_even_with_its_sentinel() -> None:
    got, reason = command.judge({"sentinel": "OK"}, RVV128, 0, "OK\n", True, FILLED)
    assert got is Verdict.FAIL and reason == "timed out"
