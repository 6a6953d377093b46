"""From an upstream suite's cases on one profile to its row, and from the target's and the control's to parity.

A failed case is one of three things: a defect (FAIL, named), a case versions.toml exempts with its reason
(an exemption is a deletion candidate: one whose case passes again turns the row FAIL so it gets deleted), or
a case whose data file the staged source lacks (a mirror may omit large blobs): reported by file, never counted
as passed. Pure: no files, no processes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from crosslane.archs import Arch
from crosslane.report import Check, Row, Verdict
from crosslane.suites.junit import Case, Outcome

SUBJECT = "upstream-tests"
PARITY_SUBJECT = "upstream-parity"
SHOWN = 5  # failures named in a row's reason; the build report has every case


def exemption_for(case_id: str, exempt: Mapping[str, str]) -> str | None:
    """The exemption key that covers *case_id*: exactly, or as a pattern whose `*` and `?` are the only wildcards
    (a `[` is a parametrized id's own: test_op[fp16] exempts that case, never test_op1)."""
    if case_id in exempt:
        return case_id
    return next((key for key in exempt if any(c in key for c in "*?") and _wildcards(key).fullmatch(case_id)), None)


@functools.cache
def _wildcards(key: str) -> re.Pattern[str]:
    return re.compile(re.escape(key).replace(r"\*", ".*").replace(r"\?", "."), re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Judged:
    cases: tuple[Case, ...]
    failed: tuple[Case, ...] = ()  # defects
    exempt: tuple[tuple[Case, str], ...] = ()  # (case, exemption key)
    absent: tuple[tuple[Case, str], ...] = ()  # (case, the missing data file)
    stale: tuple[str, ...] = ()  # exemption keys whose cases all passed
    passed: int = 0
    skipped: int = 0
    unused: tuple[str, ...] = field(default=())  # exemption keys no case of this run matched

    @property
    def ran(self) -> int:
        return len(self.cases)


def judge(cases: Sequence[Case], exempt: Mapping[str, str], missing_data: Callable[[Case], str | None]) -> Judged:
    """*missing_data*(case) names the absent file a failed case needed, or None."""
    failed, exempted, absent = [], [], []
    matched: dict[str, list[Case]] = {}
    for case in cases:
        key = exemption_for(case.id, exempt)
        if key is not None:
            matched.setdefault(key, []).append(case)
        if case.outcome is not Outcome.FAILED:
            continue
        missing = missing_data(case)
        if missing is not None:
            absent.append((case, missing))
        elif key is not None:
            exempted.append((case, key))
        else:
            failed.append(case)
    stale = tuple(k for k, found in matched.items() if all(c.outcome is Outcome.PASSED for c in found))
    return Judged(cases=tuple(cases), failed=tuple(failed), exempt=tuple(exempted), absent=tuple(absent), stale=stale,
                  passed=sum(1 for c in cases if c.outcome is Outcome.PASSED),
                  skipped=sum(1 for c in cases if c.outcome is Outcome.SKIPPED),
                  unused=tuple(k for k in exempt if k not in matched))


def _named(cases: Sequence[Case]) -> str:
    shown = [f"{c.id} ({c.why})" if c.why else c.id for c in cases[:SHOWN]]
    more = f" and {len(cases) - SHOWN} more" if len(cases) > SHOWN else ""
    return "; ".join(shown) + more


def counts_text(judged: Judged) -> str:
    parts = [f"{judged.passed} passed"]
    if judged.skipped:
        parts.append(f"{judged.skipped} skipped")
    if judged.exempt:
        parts.append(f"{len(judged.exempt)} failed as exempted")
    if judged.absent:
        files = sorted({f for _, f in judged.absent})
        parts.append(f"{len(judged.absent)} not run for data the staged source lacks ({', '.join(files)})")
    return ", ".join(parts)


def row(component: str, arch: Arch, profile: str, judged: Judged, *, control: bool = False, where: str = "") -> Row:
    """The suite's row on one profile. *where*: the exemption table, for the fix of a stale entry."""
    def verdict(state: Verdict, reason: str) -> Row:
        return Row(component=component, arch=arch, check=Check.TESTS, verdict=state, reason=reason, subject=SUBJECT,
                   profile=profile, control=control)

    if judged.ran == 0:
        return verdict(Verdict.FAIL, "no test case ran (the selection matched none, or the runner wrote no results)")
    if judged.failed:
        crashes = sum(1 for c in judged.failed if c.emulator_crash)
        emulator = f" ({crashes} of them qemu's own crash, not the program's)" if crashes else ""
        return verdict(Verdict.FAIL, f"{len(judged.failed)} of {judged.ran} failed{emulator}: "
                                     f"{_named(judged.failed)}; {counts_text(judged)}")
    if judged.stale:
        keys = ", ".join(repr(k) for k in judged.stale)
        return verdict(Verdict.FAIL, f"exemption no longer holds: {keys}: the exempted cases pass; delete it from "
                                     f"{where or 'exempt'}")
    if judged.passed == 0:
        return verdict(Verdict.FAIL, f"none of {judged.ran} cases passed: {counts_text(judged)}")
    return verdict(Verdict.PASS, f"{judged.ran} cases: {counts_text(judged)}")


def parity(component: str, arch: Arch, profile: str, target: Judged, control: Judged) -> Row:
    """Cases that pass on the amd64 control and fail here: where cross-arch defects live. A PASS needs cases that
    pass in both: a control that passed nothing, or no case passing on both sides, compared nothing."""
    passing = {c.id for c in control.cases if c.outcome is Outcome.PASSED}
    only_here = [c for c in target.cases if c.outcome is Outcome.FAILED and c.id in passing]
    exempted = {c.id for c, _ in target.exempt}
    defects = [c for c in only_here if c.id not in exempted]

    def verdict(state: Verdict, reason: str) -> Row:
        return Row(component=component, arch=arch, check=Check.PARITY, verdict=state, reason=reason,
                   subject=PARITY_SUBJECT, profile=profile)

    if not passing:
        return verdict(Verdict.FAIL, f"nothing to compare with: the amd64 control passed none of its {control.ran} "
                                     f"cases ({counts_text(control)}{_failed_text(control)})")
    if defects:
        return verdict(Verdict.FAIL, f"{len(defects)} cases pass on amd64 and fail here: {_named(defects)}")
    both = sum(1 for c in target.cases if c.outcome is Outcome.PASSED and c.id in passing)
    known = f"; {len(only_here)} exempted target-only failures" if only_here else ""
    if both == 0:
        return verdict(Verdict.FAIL, f"nothing compared: none of the {len(passing)} cases that pass on amd64 passed "
                                     f"here ({counts_text(target)}{known})")
    return verdict(Verdict.PASS, f"{both} of the {len(passing)} cases that pass on amd64 pass here{known}")


def _failed_text(judged: Judged) -> str:
    return f", {len(judged.failed)} failed: {_named(judged.failed)}" if judged.failed else ""


def table(results: Sequence[tuple[str, Judged]], control: Judged | None) -> str:
    """The per-profile counts a reviewer compares (markdown), the control's last."""
    lines = ["| profile | ran | passed | failed | skipped | exempt | data absent |", "|---|---|---|---|---|---|---|"]
    for name, judged in [*results, *([("amd64 control", control)] if control is not None else [])]:
        lines.append(f"| {name} | {judged.ran} | {judged.passed} | {len(judged.failed)} | {judged.skipped} | "
                     f"{len(judged.exempt)} | {len(judged.absent)} |")
    return "\n".join(lines)
