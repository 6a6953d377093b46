"""sentinel.decide: the verdict comes from the sentinel, never from the exit status alone."""

from __future__ import annotations

import pytest

from crosslane.report import Verdict
from crosslane.smokes import sentinel
from crosslane.smokes.sentinel import decide

CASES = [
    # (id, output, returncode, verdict, words in the reason)
    ("ok", "PROVEN x\nX-BIND OK: fine", 0, Verdict.PASS, "fine"),
    ("prints-nothing", "", 0, Verdict.FAIL, "the program did not run"),
    ("prints-nothing-rc1", "", 1, Verdict.FAIL, "did not run (exit 1)"),
    ("exit0-with-fail", "X-BIND FAIL: broke", 0, Verdict.FAIL, "X-BIND FAIL: broke (exit 0, expected 1)"),
    ("fail-rc1", "X-BIND FAIL: broke", 1, Verdict.FAIL, "X-BIND FAIL: broke"),
    ("empty-payload-absent", "X-BIND ABSENT: the payload <payload> is empty", 4, Verdict.FAIL,
     "X-BIND ABSENT: the payload <payload> is empty"),
    ("absent-exit0", "X-BIND ABSENT: never arrived", 0, Verdict.FAIL, "(exit 0, expected 4)"),
    ("skip-rc3", "X-BIND SKIP: not installed", 3, Verdict.SKIP, "not installed"),
    ("skip-exit0", "X-BIND SKIP: not installed", 0, Verdict.FAIL, "X-BIND SKIP: not installed (exit 0, expected 3)"),
    ("ok-rc1", "X-BIND OK: fine", 1, Verdict.FAIL, "X-BIND OK but exit 1"),
    ("import-raises-installed", "DEFECT d\nX-BIND FAIL: d 1.0 is installed but import d raised ImportError: boom",
     1, Verdict.FAIL, "installed but import d raised ImportError"),
    ("other-name-only", "Y-BIND OK: fine", 0, Verdict.FAIL, "no X-BIND sentinel"),
    ("two-sentinels", "X-BIND OK: a\nX-BIND OK: b", 0, Verdict.FAIL, "2 X-BIND sentinels"),
    ("not-last", "X-BIND OK: a\ntrailing", 0, Verdict.FAIL, "not the last line"),
    ("sigsegv", "X-BIND OK: a", -11, Verdict.FAIL, "crashed with SIGSEGV"),
    ("sigill-shell", "", 128 + 4, Verdict.FAIL, "crashed with SIGILL"),
]


@pytest.mark.parametrize(("output", "returncode", "verdict", "words"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_decide(output: str, returncode: int, verdict: Verdict, words: str) -> None:
    outcome = decide("X", output, returncode)
    assert outcome.verdict is verdict
    assert words in outcome.reason


def test_timeout_wins() -> None:
    outcome = decide("X", "X-BIND OK: fine", 0, timed_out=True)
    assert (outcome.verdict, outcome.reason) == (Verdict.FAIL, "timed out")


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
