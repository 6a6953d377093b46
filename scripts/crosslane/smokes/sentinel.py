"""The payload protocol: PROVEN/UNPROVEN/DEFECT lines, then one `<NAME>-BIND <STATE>: detail` sentinel.

The verdict comes from the sentinel, never from the exit status alone.
Payload exit codes: 0 ran and passed, 1 a real defect, 3 legitimately absent, 4 the payload never arrived.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from crosslane.report import Verdict

SENTINEL = re.compile(r"^(?P<name>[A-Z][A-Z0-9]*)-BIND (?P<state>OK|FAIL|SKIP|ABSENT): ?(?P<detail>.*)$")
EXIT_OK, EXIT_DEFECT, EXIT_ABSENT, EXIT_NO_PAYLOAD = 0, 1, 3, 4


@dataclass(frozen=True, kw_only=True)
class Outcome:
    verdict: Verdict
    reason: str
    state: str | None = None
    detail: str = ""


def crash_reason(returncode: int) -> str | None:
    """A negative return code is a signal (qemu died of SIGSEGV/SIGILL …); 128+N from a shell too."""
    number = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    if number <= 0:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def signal_of(returncode: int) -> str | None:
    """The signal a program run without a shell died of: only a negative return code says so (qemu-user, the host's
    and a tool root's alike, dies of its guest's fatal signal). An exit status of 132 is a
    program's own choice, no evidence of SIGILL."""
    return crash_reason(returncode) if returncode < 0 else None


def decide(name: str, output: str, returncode: int, *, timed_out: bool = False) -> Outcome:
    if timed_out:
        return Outcome(verdict=Verdict.FAIL, reason="timed out")
    crash = crash_reason(returncode)
    sentinels = [m for m in (SENTINEL.match(line.strip()) for line in output.splitlines()) if m]
    mine = [m for m in sentinels if m.group("name") == name]
    if crash:
        return Outcome(verdict=Verdict.FAIL, reason=f"crashed with {crash}")
    if not mine:
        return Outcome(verdict=Verdict.FAIL,
                       reason=f"no {name}-BIND sentinel: the program did not run (exit {returncode})")
    if len(mine) > 1:
        return Outcome(verdict=Verdict.FAIL, reason=f"{len(mine)} {name}-BIND sentinels; exactly one is allowed")
    last = mine[-1]
    state, detail = last.group("state"), last.group("detail")
    if output.strip().splitlines()[-1].strip() != last.group(0):
        return Outcome(verdict=Verdict.FAIL, reason=f"{name}-BIND sentinel is not the last line", state=state,
                       detail=detail)
    expected_rc = {"OK": EXIT_OK, "FAIL": EXIT_DEFECT, "SKIP": EXIT_ABSENT, "ABSENT": EXIT_NO_PAYLOAD}[state]
    if state == "OK" and returncode == EXIT_OK:
        return Outcome(verdict=Verdict.PASS, reason=detail, state=state, detail=detail)
    if state == "OK":
        return Outcome(verdict=Verdict.FAIL, reason=f"{name}-BIND OK but exit {returncode}", state=state, detail=detail)
    if state == "SKIP" and returncode == expected_rc:
        return Outcome(verdict=Verdict.SKIP, reason=detail, state=state, detail=detail)
    if returncode != expected_rc:
        # A non-OK sentinel with the wrong exit status (a SKIP that exits 0 …) is inconsistent: FAIL.
        detail = f"{detail} (exit {returncode}, expected {expected_rc})"
    return Outcome(verdict=Verdict.FAIL, reason=f"{name}-BIND {state}: {detail}", state=state, detail=detail)
