"""Upstream's own test suites (components.<c>.tests), built or installed for the target and run on its profiles.

A kind (registry.SUITES) is a kind of the one contract, `run(request) -> Outcome[SuiteCases]`: it makes what the
suite needs (a test build, a board with the wheel), its rows say what that took (a FAIL there means no cases), and
its payload holds every case per profile. The stage (stage.py) judges them (verdict.py), compares with the amd64
control and records each case in the build report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from crosslane.contract import Outcome
from crosslane.report import Row
from crosslane.suites.junit import Case


def no_missing_data(case: Case) -> str | None:
    return None


@dataclass(frozen=True, kw_only=True)
class SuiteCases:
    """A suite's payload: the cases of each profile that ran, and how to tell a case that failed for lack of a staged
    data file."""

    cases: Mapping[str, tuple[Case, ...]] = field(default_factory=dict)
    missing_data: Callable[[Case], str | None] = no_missing_data


def outcome(rows: Sequence[Row] = (), cases: Mapping[str, tuple[Case, ...]] | None = None,
            missing_data: Callable[[Case], str | None] = no_missing_data) -> Outcome[SuiteCases]:
    """A suite's outcome: what running it took (*rows*), and its cases."""
    return Outcome(rows=tuple(rows), payload=SuiteCases(cases=cases or {}, missing_data=missing_data))
