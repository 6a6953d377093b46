"""The declarative smoke's verdict (smokes/command.judge): PASS only on the declared evidence, an expected signal
only where it is declared, a regex's own braces left alone while the run's placeholders are filled literally."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.config import Profile
from crosslane.process.runner import OUTPUT_LINES, Result
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
    # qemu dies of its guest's signal (a negative code, measured): 132 is a program's own exit status
    ({"sentinel": "OK", "expect": {"novector": "SIGILL"}}, NOVECTOR, 132, "", Verdict.FAIL,
     "expected SIGILL on novector, exit 132"),
    ({"pattern": "VLEN={vlen}"}, NOVECTOR, 0, "x\n", Verdict.FAIL, "no match"),
    ({"pattern": "x*"}, RVV128, 0, "anything\n", Verdict.FAIL, "matches an empty output on rvv128: no evidence"),
    ({"pattern": r"\{vector}"}, RVV128, 0, "yes\n", Verdict.FAIL, "is no regular expression on rvv128"),
], ids=["sentinel", "no-sentinel", "exit-status", "signal", "pattern-literal-placeholders", "pattern-miss",
        "expected-signal", "expected-signal-absent", "expectation-elsewhere", "exit-132-is-no-signal",
        "pattern-placeholder-empty", "pattern-matching-nothing", "pattern-broken-by-a-value"])
def test_a_run_passes_only_on_its_declared_evidence(options: dict[str, object], profile: Profile, returncode: int,
                                                     output: str, verdict: Verdict, words: str) -> None:
    got, reason = command.judge(options, profile, returncode, output, False, FILLED)
    assert got is verdict and words in reason, reason


def test_a_timed_out_run_fails_even_with_its_sentinel() -> None:
    got, reason = command.judge({"sentinel": "OK"}, RVV128, 0, "OK\n", True, FILLED)
    assert got is Verdict.FAIL and reason == "timed out"


def test_stdout_beyond_the_kept_lines_is_not_compared(tmp_path: Path) -> None:
    kept = Result(argv=("x",), returncode=0, output="OK", seconds=1.0, dropped=0)
    assert command.outputs({"compare": "stdout"}, kept, tmp_path / "o.json") == ({"stdout": "OK"}, "")
    cut = Result(argv=("x",), returncode=0, output="OK", seconds=1.0, dropped=500)
    found, why = command.outputs({"compare": "stdout"}, cut, tmp_path / "o.json")
    assert found is None and f"{OUTPUT_LINES + 500} lines and only the last {OUTPUT_LINES}" in why


@pytest.mark.parametrize(("data", "words"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"{", "is not JSON"),
], ids=["deep", "broken"])
def test_a_json_output_that_cannot_be_compared_is_named(tmp_path: Path, data: bytes, words: str) -> None:
    written = tmp_path / "o.json"
    written.write_bytes(data)
    found, why = command.outputs({"compare": "json"}, Result(argv=("x",), returncode=0, output="OK", seconds=1.0),
                                 written)
    assert found is None and words in why, why
